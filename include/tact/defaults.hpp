#pragma once

#include <chrono>
#include <cstdint>

#include <tact/steal_policy.hpp>

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

// Whom an idle worker tries to steal from (see steal_policy). Chosen by the
// balance, executor and repeat benchmarks (docs/performance.md).
inline constexpr steal_policy steal = steal_policy::random;

// While some workers are busy, one parked worker wakes now and then to look
// for queues stranded behind a busy worker (one blocked in a long
// receive, say): first after this long, then twice as long each time it
// finds nothing, up to the maximum. A fully idle system sleeps for good.
inline constexpr std::chrono::microseconds watch_first{500};
inline constexpr std::chrono::microseconds watch_longest{20'000};

}  // namespace tact::defaults
