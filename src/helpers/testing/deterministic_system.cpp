#include <tact/testing.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>

#include "executor/executor.hpp"
#include "executor/stepper.hpp"
#include "helpers/timers/timer_service.hpp"

namespace tact::testing {
namespace {

std::uint64_t chosen_seed(const schedule& how) {
  if (how.seed) return *how.seed;
  if (const char* text = std::getenv("TACT_SEED"); text != nullptr && *text != '\0') {
    try {
      return std::stoull(text, nullptr, 0);
    } catch (const std::exception&) {
      throw std::invalid_argument{std::string{"tact: TACT_SEED is \""} + text +
                                  "\", not a number; unset it for a fresh seed"};
    }
  }
  std::random_device device;
  return (std::uint64_t{device()} << 32) ^ device();
}

detail::step_plan plan_of(const schedule& how) {
  return {how.kind == schedule::policy::pct ? detail::step_plan::policy::pct
                                             : detail::step_plan::policy::random,
          chosen_seed(how), how.depth, how.steps};
}

// One worker, the driving thread; no pinning or stealing without threads.
system_config stepped(system_config config) {
  config.workers = 1;
  config.steal = steal_policy::none;
  config.pin_workers = false;
  return config;
}

}  // namespace

struct deterministic_system::run_state {
  int uncaught_at_start = std::uncaught_exceptions();
};

system_config deterministic_config() {
  system_config config;
  config.queues = 256;
  // Every send goes through its queue's mailbox, so a queue's messages run
  // in the order they were queued, and a message waits only for those
  // queued before it.
  config.local_batch = 0;
  return config;
}

deterministic_system::deterministic_system(schedule how, system_config config)
    : actor_system{stepped(std::move(config)), plan_of(how)},
      state_{std::make_unique<run_state>()} {}

deterministic_system::~deterministic_system() {
  // The test failed with an exception (a REQUIRE): say how to replay it,
  // and stop without running what is queued, which may never end.
  if (std::uncaught_exceptions() > state_->uncaught_at_start) {
    std::fprintf(stderr, "tact: deterministic_system seed %llu (replay with TACT_SEED=%llu)\n",
                 static_cast<unsigned long long>(seed()), static_cast<unsigned long long>(seed()));
    detail::executor_of(*this).stepping()->halt();
  }
}

std::uint64_t deterministic_system::seed() const noexcept {
  return detail::executor_of(const_cast<deterministic_system&>(*this)).stepping()->plan().seed;
}

bool deterministic_system::run_one() { return detail::executor_of(*this).stepping()->run_one(); }

std::uint64_t deterministic_system::run() {
  std::uint64_t ran = 0;
  while (run_one()) ++ran;
  return ran;
}

std::uint64_t deterministic_system::steps() const noexcept {
  return detail::executor_of(const_cast<deterministic_system&>(*this)).stepping()->steps();
}

std::chrono::steady_clock::time_point deterministic_system::now() const noexcept {
  return detail::timers_of(const_cast<deterministic_system&>(*this)).now();
}

void deterministic_system::advance_time(std::chrono::nanoseconds by) {
  detail::timer_service& timers = detail::timers_of(*this);
  timers.advance_to(timers.now() + by);
}

bool deterministic_system::trigger_timeout() {
  detail::timer_service& timers = detail::timers_of(*this);
  const auto due = timers.next_due();
  if (!due) return false;
  timers.advance_to(*due);
  return true;
}

std::size_t deterministic_system::pending_timers() { return detail::timers_of(*this).pending(); }

const detail::envelope* deterministic_system::queued(std::uint32_t queue, const void* target,
                                                     std::size_t nth) {
  return detail::executor_of(*this).stepping()->queued(queue, target, nth);
}

bool deterministic_system::deliver_next(std::uint32_t queue, const void* target) {
  detail::stepper& steps = *detail::executor_of(*this).stepping();
  std::optional<std::uint64_t> ahead = steps.position(queue, target);
  if (!ahead) return false;
  // Each step runs the queue's front message; what the steps send queues
  // behind (through the mailbox), so `ahead` only shrinks.
  for (; *ahead > 0; ahead = steps.position(queue, target))
    if (!steps.run_queue(queue)) return false;
  return steps.run_queue(queue);
}

}  // namespace tact::testing
