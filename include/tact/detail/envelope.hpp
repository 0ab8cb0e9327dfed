#pragma once

#include <cstdint>

#include <tact/export.hpp>

namespace tact::detail {

// Runs one delivery: generated per (receiver type, message type) at compile
// time, so the executor never calls through a vtable. Must not throw.
using run_fn = void (*)(void* target, void* message) noexcept;

// What a send leaves in a mailbox: three words, copied into the queue's
// array, so a send allocates nothing. The executor only ever calls
// `run(target, message)`; what the two pointers mean belongs to the actor
// model that built the envelope.
struct envelope {
  void* target;
  void* message;
  run_fn run;
};

static_assert(sizeof(envelope) == 3 * sizeof(void*));

// What a post that may not throw did.
enum class post_outcome : unsigned char {
  queued,     // the envelope is in a queue
  refused,    // the target takes no more messages (finished, or its system stops)
  no_memory,  // the queue could not grow: nothing was queued; try again later
};

// Disposes of an envelope that will never run: it was still queued at
// stop(), or for a sponsor that was destroyed. It frees what the envelope
// owns, as its run function would have after the delivery. Must not throw.
// Returns how many messages the envelope held: one, but for an envelope
// that carries a run of them (a transactional commit's sends to one actor).
using drop_fn = std::uint32_t (*)(const envelope& e) noexcept;

// Registers `drop` for the envelopes whose run function is `run`, for every
// system of the process; an envelope with no registered drop is discarded
// untouched. Registering a run function again keeps the first drop.
// Returns true, so that a template can register from the initializer of a
// variable (before main, at no cost per send). Any thread.
TACT_API bool on_discard(run_fn run, drop_fn drop);

}  // namespace tact::detail
