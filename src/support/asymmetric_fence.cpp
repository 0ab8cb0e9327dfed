#include "support/asymmetric_fence.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tact::detail {

namespace {

long membarrier(int command) noexcept { return ::syscall(__NR_membarrier, command, 0u, 0); }

}  // namespace

bool register_for_membarrier() noexcept {
  // Once per process: a registration holds for the process's life.
  static const bool registered = [] {
    const long commands = membarrier(MEMBARRIER_CMD_QUERY);
    return commands >= 0 && (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
           membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  }();
  return registered;
}

void membarrier_fence() noexcept {
  // Cannot fail once registered (the commands were queried): the kernel
  // returns an error only for an unknown or unregistered command.
  membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
}

}  // namespace tact::detail
