#pragma once

#include <cstdint>

// Every default of the engine, named in one place. system_config refers to
// these; docs/configuration.md explains each one.
namespace tact::defaults {

// Work queues per worker when the configuration does not say (seed: 16).
// A system with one worker gets one queue: there is nobody to contend with.
inline constexpr std::uint32_t queues_per_worker = 16;

// Smallest array a copy queue keeps, in envelopes (24 bytes each). Queues
// allocate it on first use, and reclamation never shrinks below it.
inline constexpr std::uint32_t copy_queue_floor = 16;

// Sends a worker may append straight to the batch it is processing when the
// receiver lives on that same queue, per gulp, before further such sends go
// through the mailbox again. Bounds how long one queue can hold its worker.
inline constexpr std::uint32_t local_batch = 256;

// Empty sweeps over its queues a worker spins (with a pause instruction)
// and then yields, before it parks until a send wakes it.
inline constexpr std::uint32_t idle_spins = 2000;
inline constexpr std::uint32_t idle_yields = 16;

}  // namespace tact::defaults
