#include <tact/sponsor.hpp>

#include <pthread.h>

#include <chrono>
#include <string>

#include "executor/executor.hpp"
#include "executor/seam.hpp"
#include "support/futex.hpp"

namespace tact {

sponsor::sponsor(actor_system& system, std::function<void()> wake)
    : sponsor{system, std::move(wake), false} {}

sponsor::sponsor(actor_system& system, std::function<void()> wake, bool driven)
    : system_{system}, wake_{std::move(wake)} {
  detail::executor& ex = detail::executor_of(system);
  runner_ = &ex.lent().take_sponsor(&sponsor::notify, this, driven || wake_ != nullptr);
  home_ = runner_->queue();
}

sponsor::~sponsor() {
  detail::executor& ex = detail::executor_of(system_);
  const detail::lending::leftovers left = ex.lent().release_sponsor(*runner_);
  // Guarded: a destructor must not throw, out of memory the reports go.
  if (left.messages > 0)
    detail::report_made(ex, diagnostic_kind::messages_unreceived, [&] {
      return std::to_string(left.messages) +
             " message(s) were still queued for a sponsor's actors when the sponsor was "
             "destroyed; they were dropped, with their allocation actions (run it, or finish "
             "its actors, first)";
    });
  if (left.actors > 0)
    detail::report_made(ex, diagnostic_kind::sponsor_left_actors, [&] {
      return std::to_string(left.actors) +
             " actor(s) bound to a sponsor had not finished when the sponsor was destroyed; "
             "nothing will run them, stop() no longer waits for them, and a message sent to "
             "them is dropped at stop() (finish them first; destroy them before the system)";
    });
}

// From the runner's wake(): a send found this sponsor idle.
void sponsor::notify(void* self) noexcept {
  auto& s = *static_cast<sponsor*>(self);
  s.ring();
  if (s.wake_) s.wake_();
}

void sponsor::ring() noexcept {
  bell_.fetch_add(1, std::memory_order_seq_cst);
  detail::futex_wake_all(bell_);
}

void sponsor::wait_for_mail(std::uint32_t seen, std::chrono::nanoseconds timeout) noexcept {
  detail::futex_wait_for(bell_, seen, timeout);
}

void sponsor::wait_for_mail(std::uint32_t seen) noexcept { detail::futex_wait(bell_, seen); }

std::size_t sponsor::run_pending() {
  return static_cast<std::size_t>(detail::executor_of(system_).lent().run_sponsor(*runner_));
}

std::size_t sponsor::run_pending(std::size_t most) {
  return static_cast<std::size_t>(
      detail::executor_of(system_).lent().run_sponsor(*runner_, {.messages = most}));
}

std::size_t sponsor::run_pending(std::chrono::nanoseconds most_time) {
  return static_cast<std::size_t>(detail::executor_of(system_).lent().run_sponsor(
      *runner_, {.deadline = std::chrono::steady_clock::now() + most_time}));
}

// The bell is read before each run: a send after the run registered the
// runner as its queue's waiter rings it, so a changed bell means mail, and
// an unchanged one lets us sleep without missing any. The workers' going
// idle rings nothing here, so while they are busy we sleep at most a
// millisecond at a time to look again; once they are idle and our queue
// is empty we return, without waiting.
std::size_t sponsor::run_until_quiescent() {
  detail::executor& ex = detail::executor_of(system_);
  std::size_t ran = 0;
  for (;;) {
    const std::uint32_t seen = bell();
    ran += run_pending();
    if (ex.stopping()) return ran;
    if (bell() != seen) continue;
    if (ex.quiet().reached()) {
      if (bell() == seen) return ran;
      continue;
    }
    wait_for_mail(seen, std::chrono::milliseconds{1});
  }
}

dedicated_sponsor::dedicated_sponsor(actor_system& system, const std::string& thread_name)
    : sponsor{system, {}, true} {
  thread_ = std::thread{[this] { loop(); }};
  pthread_setname_np(thread_.native_handle(), thread_name.substr(0, 15).c_str());
}

dedicated_sponsor::~dedicated_sponsor() {
  closing_.store(true, std::memory_order_seq_cst);
  ring();
  thread_.join();
}

void dedicated_sponsor::loop() noexcept {
  for (;;) {
    const std::uint32_t seen = bell();
    if (closing_.load(std::memory_order_seq_cst)) return;
    run_pending();  // not from a behaviour, so it cannot refuse
    wait_for_mail(seen);
  }
}

}  // namespace tact
