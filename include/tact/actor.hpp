#pragma once

#include <atomic>
#include <cstdint>

#include <tact/allocation.hpp>
#include <tact/export.hpp>
#include <tact/mailbox_bound.hpp>

namespace tact {

class actor_system;

namespace detail {
class executor;
class anchor;
struct actor_access;
}  // namespace detail

// Base of every classic actor. Derive from it and declare one
//
//   tact::allocation receive(my_message& m);
//
// per message type the actor accepts; sending any other type does not
// compile. The system runs an actor's behaviours one at a time, and
// messages from one sender in the order they were sent. An actor lives
// until a behaviour returns Delete, Destroy or Finished (or it receives a
// poison pill); the system's stop() waits for that.
//
// A finished actor may outlive its system and be destroyed afterwards, but
// nothing may be sent to it then, nor a timer or an ask made for it (with
// checks on, that aborts). One that has not finished must be destroyed
// before its system (see docs/concepts.md, "Lifetimes").
class TACT_API actor {
 public:
  // So that a receive can say `return Delete;` unqualified.
  static constexpr allocation Nodelete = allocation::Nodelete;
  static constexpr allocation Delete = allocation::Delete;
  static constexpr allocation Destroy = allocation::Destroy;
  static constexpr allocation Finished = allocation::Finished;

  // Joins the system the calling code runs in: the system whose behaviour
  // is running, inside actor_system::spawn its system, otherwise the
  // process's first running system. Throws std::logic_error if there is
  // none. Picks the actor's queue: created by a behaviour, one of its
  // worker's own queues (round robin over them), or the queue in hand if
  // its creator runs its first message (a tree unfolding: see
  // docs/concepts.md, "Gulping"); else round robin over all.
  actor();
  // Joins `system` explicitly.
  explicit actor(actor_system& system);

  // An actor is an identity: it is neither copied nor moved.
  actor(const actor&) = delete;
  actor& operator=(const actor&) = delete;

  // Destroying an actor that has not finished counts it as finished (so
  // stop() does not wait for it) and is reported: messages still queued
  // for it would reach a dead object. With checks on, destroying an actor
  // while messages for it are queued is reported too. Any thread; after
  // its system is destroyed, only once it has finished.
  virtual ~actor();

  // The system this actor belongs to. Safe from any thread, while that
  // system exists.
  actor_system& system() const noexcept;

  // True once a behaviour returned Delete, Destroy or Finished.
  bool finished() const noexcept;

  // Bounds this actor's mailbox to `most` messages sent to it and not yet
  // received (0: no bound), and says what a send finds when it is full:
  // the sender waits for room, or the message is dropped (see
  // docs/flow_control.md, which says who can wait and who cannot). Replaces
  // the system's default (system_config::mailbox_bound). Poison pills and
  // timers' firings are never held back. Call it before anything is sent
  // to the actor, in its constructor say: std::logic_error if something
  // has been.
  void bound_mailbox(std::uint32_t most, overflow when_full = overflow::wait);

 private:
  friend struct detail::actor_access;
  void join_system();

  detail::executor* executor_;
  std::atomic<std::uint32_t> queue_;
  // With checks on: messages sent to this actor and not yet delivered, and
  // the allocation action that waits for the last of them to land, so that
  // a message queued behind the one that finished the actor is reported
  // instead of reaching freed memory.
  std::atomic<std::uint32_t> in_flight_{0};
  std::atomic<allocation> deferred_{allocation::Nodelete};
  // For an actor made by a behaviour, whether a message to it may run
  // before the rest of its sender's batch (docs/design.md, "Depth
  // first"): where its messages went, and how many went another way than
  // a worker's stack, 0, 1 or more (2, from the start for any other
  // actor). See detail::stacking.
  std::atomic<std::uint8_t> stacking_{0};
  std::atomic<std::uint8_t> sent_aside_{2};
  // With checks on: behaviours of this actor running now (a suspended one
  // included). A delivery that finds it above zero aborts: one message at
  // a time is broken.
  std::atomic<std::uint32_t> in_receive_{0};
  // Made on first use by whatever must outlive the actor yet reach it while
  // it runs (a timer): see detail::anchor_of.
  std::atomic<detail::anchor*> anchor_{nullptr};
  // Null unless the mailbox is bounded.
  std::atomic<detail::mailbox_gauge*> gauge_{nullptr};
};

}  // namespace tact
