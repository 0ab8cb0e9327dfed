#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <utility>

#include <tact/actor.hpp>
#include <tact/actor_system.hpp>
#include <tact/export.hpp>

namespace tact {

namespace detail {
class sponsor_runner;
}

// A thread outside the system's pool that runs chosen actors (xTActors'
// sponsors, the reactor scheduling paper's dedicated and piggyback schedulers). An actor
// spawned on a sponsor is bound to it for life: its messages run only when
// the sponsor runs, on the sponsor's thread, one at a time and in order as
// for any classic actor. Its sends to unbound actors go to the pool as
// usual, and sends between actors of one sponsor stay on its thread, with
// no hand-off between threads at all.
//
// Three ways to drive one:
//  * the calling thread: run_until_quiescent() (or run_pending()) from
//    main, a single-thread substrate for pipelines and for tests;
//  * an event loop (a GUI): give a `wake` function that posts an event to
//    the loop, whose handler calls run_pending() on the loop's thread;
//  * a thread of its own: dedicated_sponsor, for actors that block (I/O).
//
// A system has at most system_config::sponsors sponsors at once. Destroy a
// sponsor before its system, once its actors have finished: with checks on,
// destroying a system while a sponsor of it lives aborts. After the
// system's stop() a sponsor runs nothing, and may still be destroyed.
class TACT_API sponsor {
 public:
  // `wake` is called, on whichever thread sends, when a message arrives
  // for this sponsor's actors after a run found nothing left to do: it
  // must see to it that run_pending() is called on the sponsor's thread
  // soon (post an event to the loop). At most once per run; must not block
  // or throw. Without one, the owner calls run_pending() or
  // run_until_quiescent() when it sees fit.
  // std::runtime_error if the system has no free sponsor slot.
  explicit sponsor(actor_system& system, std::function<void()> wake = {});
  // Messages still queued for its actors are dropped, with their
  // allocation actions, and reported. Its actors that have not finished
  // are reported and abandoned: stop() does not wait for them, and the
  // sponsor's slot stays out of use until the program destroys them.
  // Virtual: a sponsor owned through a pointer to this base (say a
  // std::unique_ptr<sponsor> holding a dedicated_sponsor) is destroyed
  // whole, its thread joined.
  virtual ~sponsor();
  sponsor(const sponsor&) = delete;
  sponsor& operator=(const sponsor&) = delete;

  // `new T(args...)`, bound to this sponsor; deleted by the system when it
  // returns Delete (as actor_system::spawn). Any thread.
  template <class T, class... Args>
  requires std::derived_from<T, actor> T& spawn(Args&&... args) {
    detail::ambient_scope scope{system_, home_};
    return detail::new_actor<T>(std::forward<Args>(args)...);
  }

  // On the sponsor's thread (not from a behaviour: std::logic_error): runs
  // the messages queued for its actors, and those they send each other,
  // until none is left. Returns how many ran; 0 once the system is
  // stopping.
  std::size_t run_pending();
  // The same, but stops once `most` messages have run (at least one runs
  // if any is queued), or once `most_time` has passed (checked between
  // messages), so that a flood of messages cannot hold an event loop for
  // longer. If messages are left, the sponsor's `wake` is called as for a
  // send, so that the loop runs it again after its other events. Without
  // a `wake`, call again until it returns 0.
  std::size_t run_pending(std::size_t most);
  std::size_t run_pending(std::chrono::nanoseconds most_time);

  // On the calling thread: runs its actors' messages as they come, until
  // none is queued for them and the system's workers are idle too, so no
  // reply is on its way back. Sleeps while it waits. Returns how many ran.
  // Timers pending do not count (as for await_quiescence).
  std::size_t run_until_quiescent();

  actor_system& system() const noexcept { return system_; }
  // For the library: the work queue of this sponsor's actors.
  std::uint32_t home() const noexcept { return home_; }

 protected:
  // For a sponsor that runs by itself once notified (a thread of its own):
  // its mail counts as queued work for quiescence, as with a `wake`.
  sponsor(actor_system& system, std::function<void()> wake, bool driven);

  // Sleeps until a message arrives for an idle sponsor (after `seen` was
  // read from bell()) or `timeout` passes; may return early.
  void wait_for_mail(std::uint32_t seen, std::chrono::nanoseconds timeout) noexcept;
  void wait_for_mail(std::uint32_t seen) noexcept;
  std::uint32_t bell() const noexcept { return bell_.load(std::memory_order_seq_cst); }
  void ring() noexcept;

 private:
  static void notify(void* self) noexcept;

  actor_system& system_;
  detail::sponsor_runner* runner_;
  std::uint32_t home_;
  std::function<void()> wake_;
  // Rung on every notification; run_until_quiescent and a dedicated
  // sponsor's thread sleep on it.
  std::atomic<std::uint32_t> bell_{0};
};

// A sponsor with a thread of its own, which runs its actors' messages as
// they arrive and sleeps otherwise: for actors whose behaviours block (a
// socket, a device, a file), so that they hold no worker of the pool.
class TACT_API dedicated_sponsor : public sponsor {
 public:
  explicit dedicated_sponsor(actor_system& system, const std::string& thread_name = "tact-sponsor");
  // Stops and joins the thread (after the message it is running).
  ~dedicated_sponsor() override;

 private:
  void loop() noexcept;

  std::atomic<bool> closing_{false};
  std::thread thread_;
};

}  // namespace tact
