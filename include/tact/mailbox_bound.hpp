#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include <tact/detail/atomic.hpp>
#include <tact/export.hpp>

namespace tact {

// What a send to a classic actor whose mailbox is full does (see
// actor::bound_mailbox and docs/flow_control.md).
enum class overflow : std::uint8_t {
  // The sender waits for room where it can: a behaviour is suspended
  // without holding its worker; elsewhere the send goes through and is
  // counted (sends_over_bound), and try_send and send_within let a thread
  // be told no.
  wait,
  // The message is dropped: counted (sends_dropped, and messages_rejected)
  // and reported, never delivered.
  drop,
};

}  // namespace tact

// How full a bounded actor's mailbox is: what its senders have sent minus
// what it has received. Not for users.
namespace tact::detail {

struct mailbox_gauge {
  // @pre most > 0. Room is made again once the mailbox is down to `low`.
  mailbox_gauge(std::uint32_t most, overflow full) noexcept
      : bound{most},
        low{most / 2},
        stride_mask{std::bit_floor(std::clamp<std::uint64_t>(most / 4, 1, 64)) - 1},
        when_full{full} {}
  mailbox_gauge(const mailbox_gauge&) = delete;
  mailbox_gauge& operator=(const mailbox_gauge&) = delete;

  const std::uint64_t bound;
  const std::uint64_t low;
  // The receiver publishes its count every (stride_mask + 1) messages, a
  // power of two no larger than bound / 4 (at least 1), so low is never
  // less than what it has not published yet.
  const std::uint64_t stride_mask;
  const overflow when_full;

  // Written by the senders (one read-modify-write per send).
  alignas(64) atomic<std::uint64_t> sent{0};
  // Written by the receiver, one behaviour at a time, every stride: the
  // count it last published, shifted left by one, with in bit 0 the flag
  // that a sender waits for room (see mailbox_bound.cpp). Read by senders.
  alignas(64) atomic<std::uint64_t> drained{0};
  // The receiver's own count, on every message: on a line of its own, so
  // that the senders' reads of `drained` do not take it from the
  // receiver's core each time.
  alignas(64) std::uint64_t received = 0;

  // What a sender sees, cheaply, from relaxed loads that may be stale: up
  // to a stride more than the receiver has taken (its count is published
  // every stride), and more still if its latest count is not seen yet;
  // less by other senders' increments not seen yet, which then go past the
  // bound (it is soft by that much). A sender that finds it full rechecks
  // under the room protocol (executor/room.hpp) before it waits.
  std::uint64_t queued() const noexcept {
    return sent.load(std::memory_order_relaxed) -
           (drained.load(std::memory_order_relaxed) >> 1);
  }
  bool full() const noexcept { return queued() >= bound; }
};

// The receiver's side, once per message delivered, before its receive.
TACT_API void publish_received(mailbox_gauge& g) noexcept;
inline void note_received(mailbox_gauge& g) noexcept {
  if ((++g.received & g.stride_mask) == 0) publish_received(g);
}

}  // namespace tact::detail
