#pragma once

#include <tact/detail/envelope.hpp>

// What dispatch.cpp offers the rest of the transactional model.
namespace tact::detail::tx {

// The trampoline of every transactional envelope: runs the message's
// handler against its actor's behaviour and commits what it staged.
void deliver(void* target, void* message) noexcept;
// The trampoline of a run of messages to one actor, linked through their
// `next` (a commit's consecutive sends to a serialized actor): delivers
// them one by one, in order.
void deliver_run(void* target, void* first) noexcept;
// Free the message, or the run of them, of a transactional envelope that
// never ran; return how many messages that was.
std::uint32_t drop(const envelope& e) noexcept;
std::uint32_t drop_run(const envelope& e) noexcept;
// The postponed_work of a domain (`d`): queues again the sends that waited
// for memory, on whichever thread calls; at stop, refuses what is left.
bool retry_postponed(void* d) noexcept;
void refuse_postponed(void* d) noexcept;

}  // namespace tact::detail::tx
