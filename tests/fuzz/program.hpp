#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <tact/testing.hpp>

// What the fuzzer's bytes mean: a schedule and a bounded program of
// operations on actors. Every byte string decodes to some program (bytes
// missing at the end read as zero, an opcode is taken modulo their number),
// so every mutation the fuzzer makes is a program worth running.
//
// Layout: one flags byte (bit 0: PCT instead of uniform random choice;
// bits 1-2: PCT depth - 1; bits 3-4: 256, 4, 2 or 1 work queues, so that
// actors share them; bit 5: same-queue sends join the batch in progress,
// system_config::local_batch), four bytes of seed (little endian), then
// four bytes per operation: its code and three arguments a, b, c.
namespace tact_fuzz {

inline constexpr std::size_t max_operations = 64;
inline constexpr std::size_t max_actors = 8;
inline constexpr std::size_t header_bytes = 5;
inline constexpr std::size_t operation_bytes = 4;

enum class opcode : std::uint8_t {
  spawn_classic,   // a classic actor (a probe); a & 1: in storage the test owns
  spawn_tx,        // a transactional actor (a tally); a & 1: serialized
  note,            // the test sends classic actor a a note
  relay,           // classic actor a is told to send classic actor b a note
  boom,            // classic actor a receives a message its behaviour throws on
  tx_add,          // tally a gets (add b): a become
  tx_boom,         // tally a stages a become, a send to tally b and a creation, then throws
  tx_pass,         // tally a is told to send tally b (add c)
  ask_classic,     // the test asks probe a; b: how it answers; c: delay and timeout
  ask_tx,          // the test asks tally a; b, c as for ask_classic
  timer_classic,   // send_after(c, probe a, a note)
  timer_tx,        // tx::send_after(c, tally a, add b)
  cancel,          // cancels timer a
  advance,         // moves the virtual clock by c milliseconds
  run_some,        // runs a % 8 + 1 messages
  run_all,         // runs messages until none is queued
  finish,          // probe a gets finished_msg
  kill,            // probe a gets delete_msg, or destroy_msg if the test owns its storage
  tx_release,      // the test drops its reference to tally a
  tx_to_nobody,    // a transactional send to an empty reference
  tx_unmatched,    // tally a gets a message none of its handlers takes
  stop,            // the program ends here
  count
};

struct operation {
  opcode code;
  std::uint8_t a, b, c;
};

// How an asked actor answers (the b argument of an ask, modulo 4).
enum class answer : std::uint8_t {
  now,    // at once
  never,  // drops the request: no_reply
  fail,   // throws: failed
  later,  // after a delay of virtual time, through a timer
};

struct program {
  tact::testing::schedule how;
  std::uint32_t queues = 256;
  std::uint32_t local_batch = 0;
  std::vector<operation> operations;
};

program decode(const std::uint8_t* data, std::size_t size);

// "ask_classic(a=1, b=3, c=17)": for failure messages.
std::string describe(const operation& op);

}  // namespace tact_fuzz
