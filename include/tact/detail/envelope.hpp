#pragma once

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

}  // namespace tact::detail
