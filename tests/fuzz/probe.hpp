#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <tact/ask.hpp>
#include <tact/tact.hpp>
#include <tact/timer.hpp>

#include "model.hpp"
#include "thrown.hpp"

// The classic actor of the fuzzed programs, and its messages. A probe
// tells the model every message it receives, with the sender and sequence
// number the message carries; the model checks the order. Messages are
// heap objects with allocation::Delete, so the executor frees each after
// delivery (or when it is dropped): a note's destructor tells the model,
// which checks that every note is freed exactly once.
namespace tact_fuzz {

struct note : tact::message {
  note(model& m, std::size_t id, int sender, std::uint32_t seq)
      : tact::message{tact::allocation::Delete}, reference{m}, id{id}, sender{sender}, seq{seq} {}
  note(const note&) = delete;
  note& operator=(const note&) = delete;
  ~note() override { reference.note_destroyed(id); }
  model& reference;
  std::size_t id;  // in the model's table of notes
  int sender;
  std::uint32_t seq;
};

struct probe;

// Tells the receiving probe to send `to` a note. While one is alive, `to`
// must not be deleted: `pending` counts them.
struct relay : tact::message {
  relay(probe& to, int to_id, std::uint32_t seq, std::uint32_t note_seq, int& pending)
      : tact::message{tact::allocation::Delete},
        to{to}, to_id{to_id}, seq{seq}, note_seq{note_seq}, pending{pending} {
    ++pending;
  }
  relay(const relay&) = delete;
  relay& operator=(const relay&) = delete;
  ~relay() override { --pending; }
  probe& to;
  int to_id;
  std::uint32_t seq;
  std::uint32_t note_seq;
  int& pending;
};

struct boom : tact::message {
  explicit boom(std::uint32_t seq) : tact::message{tact::allocation::Delete}, seq{seq} {}
  std::uint32_t seq;
};

// Answered with seq * 2, as `how` says.
struct question : tact::request<int> {
  question(std::uint32_t seq, answer how, std::chrono::nanoseconds delay)
      : seq{seq}, how{how}, delay{delay} {}
  std::uint32_t seq;
  answer how;
  std::chrono::nanoseconds delay;
};

// The timer a probe answers a held question with.
struct wake : tact::message {
  explicit wake(std::size_t held) : tact::message{tact::allocation::Delete}, held{held} {}
  std::size_t held;
};

struct probe : tact::actor {
  probe(tact::actor_system& system, model& reference, int id)
      : tact::actor{system}, reference{reference}, id{id} {}

  tact::allocation receive(note& m) {
    reference.received(id, m.sender, m.seq, item::note);
    reference.note_received(m.id);
    return Nodelete;
  }
  tact::allocation receive(relay& m) {
    reference.received(id, from_test, m.seq, item::relay);
    const std::size_t n = reference.relayed(id, m.to_id, m.note_seq);
    tact::send(m.to, *new note{reference, n, id, m.note_seq});
    return Nodelete;
  }
  tact::allocation receive(boom& m) {
    reference.received(id, from_test, m.seq, item::boom);
    throw thrown_on_purpose{};
  }
  tact::allocation receive(question& q) {
    reference.received(id, from_test, q.seq, item::question);
    switch (q.how) {
      case answer::now:
        q.reply(static_cast<int>(q.seq) * 2);
        break;
      case answer::never:
        break;  // freed unanswered after this: no_reply
      case answer::fail:
        throw thrown_on_purpose{};
      case answer::later:
        // Kept until the timer fires, or until this probe is destroyed.
        q.set_allocation(tact::allocation::Nodelete);
        held.emplace_back(&q);
        tact::send_after(q.delay, *this, *new wake{held.size() - 1});
        break;
    }
    return Nodelete;
  }
  tact::allocation receive(wake& m) {
    std::unique_ptr<question> q = std::move(held.at(m.held));
    q->reply(static_cast<int>(q->seq) * 2);  // dropped if the asker gave up
    return Nodelete;
  }

  model& reference;
  const int id;
  std::vector<std::unique_ptr<question>> held;
};

}  // namespace tact_fuzz
