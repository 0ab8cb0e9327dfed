#pragma once

// A worker's thread found (thread_of_worker), and a thread of the process
// made to stand still, to the engine a worker the OS does not run (preempted, as on a loaded
// machine): sent SIGUSR1, it stands in the signal handler until released. A worker parked in a
// futex wait stands there too and, released, waits again: a wake-up that
// came meanwhile then finds it woken but not yet running.
//
// ThreadSanitizer delivers a signal only at the thread's next intercepted
// call, which an idle worker makes only when it parks: tests that need the
// thread to stop at once are left out under it.

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <csignal>

#include <catch2/catch.hpp>

#include <tact/tact.hpp>

#include "executor/runner.hpp"

namespace tact::test {

namespace standing {
inline std::atomic<bool> holding{false};
inline std::atomic<bool> held{false};
extern "C" inline void stand_still(int) {
  held.store(true);
  while (holding.load()) {
  }
}
}  // namespace standing

// Installs the handler for its lifetime; one at a time.
class standing_thread {
 public:
  standing_thread() {
    struct sigaction action {};
    action.sa_handler = standing::stand_still;
    sigemptyset(&action.sa_mask);
    REQUIRE(sigaction(SIGUSR1, &action, &before_) == 0);
  }
  ~standing_thread() {
    release();
    sigaction(SIGUSR1, &before_, nullptr);
  }
  standing_thread(const standing_thread&) = delete;
  standing_thread& operator=(const standing_thread&) = delete;

  // Stops thread `tid` of this process; returns once it stands still.
  void stop(pid_t tid) {
    standing::held = false;
    standing::holding = true;
    REQUIRE(syscall(SYS_tgkill, getpid(), tid, SIGUSR1) == 0);
    while (!standing::held) std::this_thread::yield();
  }
  void release() { standing::holding = false; }

  static pid_t this_thread_id() { return static_cast<pid_t>(syscall(SYS_gettid)); }

 private:
  struct sigaction before_ {};
};

// Notes the pool worker, and the thread, that run its one message.
struct thread_noter : tact::actor {
  struct note : tact::message {};
  note asked;  // its message, which lives as long as it does
  std::atomic<pid_t> thread{0};
  std::uint32_t worker = 0;
  tact::allocation receive(note&) {
    worker = tact::detail::this_thread_runner->index();
    thread.store(standing_thread::this_thread_id(), std::memory_order_release);
    return Nodelete;
  }
};

// The thread of pool worker `worker`: a noter placed by `where()` on one
// of its queues tells, unless an idle thief took the noter's queue before
// that worker gulped it (a thief may); then another noter tries, up to
// 10,000: beside busy processes the worker's thread may lose the
// processor for long, and an idle thief then takes every noter posted
// meanwhile (100 tries all went to the thief in 1 of 145 runs of
// solo_test.cpp beside four). The noters join `spawned`, for the caller
// to finish. If none ran there (a worker the governor stood down runs
// nothing, and beside busy processes it may stand one down for long),
// everything in `spawned` is deleted before the test fails: left alive,
// it would keep the system's stop() waiting for good, and the failure
// would show as a hang.
template <class Where>
pid_t thread_of_worker(tact::actor_system& system, std::uint32_t worker, Where&& where,
                       std::vector<tact::actor*>& spawned) {
  for (int tries = 0; tries < 10'000; ++tries) {
    auto& noter = system.spawn_at<thread_noter>(where());
    spawned.push_back(&noter);
    noter | noter.asked;
    while (noter.thread.load(std::memory_order_acquire) == 0) std::this_thread::yield();
    if (noter.worker == worker) return noter.thread.load();
  }
  for (tact::actor* a : spawned) *a | tact::delete_msg;
  spawned.clear();
  FAIL("no noter ran on worker " << worker);
  return 0;
}

}  // namespace tact::test
