#pragma once

#include <cstdint>
#include <ostream>
#include <thread>
#include <unordered_map>
#include <vector>

#include <tact/actor_system.hpp>
#include <tact/message.hpp>
#include <tact/stats.hpp>

// Invariants the tests check wherever they can: conservation of messages
// at every quiescent point, and per-sender FIFO without duplicates at every
// receiver that can tell its senders apart.
namespace tact::test {

// Conservation of messages (see system_stats): every message queued was
// processed or discarded (dropped unrun by stop(), or by a sponsor that
// went). A send refused before it was queued (messages_rejected: to a
// finished actor, to an empty transactional reference, to a stopping
// system) is not a term: it was never queued, and a test that counts its
// own sends checks it against sent + rejected itself. Dead letters are
// not a term either: a message that reached its actor after it finished
// was processed (its delivery dropped it). Exact only when the system is
// quiescent (after await_quiescence(), with no other thread sending and
// no timer due) or stopped.
//
//   CHECK(tact::test::conservation_of(system));  // prints the figures if not
struct conservation {
  std::uint64_t queued = 0;     // messages_sent
  std::uint64_t processed = 0;  // queued, then run
  std::uint64_t discarded = 0;  // queued, then dropped unrun

  bool holds() const noexcept { return queued == processed + discarded; }
  explicit operator bool() const noexcept { return holds(); }
};

inline conservation conservation_of(const worker_stats& total) {
  return {.queued = total.messages_sent,
          .processed = total.messages_processed,
          .discarded = total.messages_discarded};
}
inline conservation conservation_of(const actor_system& system) {
  return conservation_of(system.stats().total);
}

inline std::ostream& operator<<(std::ostream& out, const conservation& c) {
  out << "queued " << c.queued << (c.holds() ? " == " : " != ") << "processed " << c.processed
      << " + discarded " << c.discarded;
  return out;
}

// A classic message that wanders between random actors until its hops
// run out, for stress tests: its route is drawn from its own generator
// (xorshift), so a failing run replays from its seed.
struct token : message {
  std::uint64_t id = 0;
  std::uint64_t hops_left = 0;
  std::uint64_t rng = 0;
  std::uint64_t next_random() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  }
};

// A classic message numbered by its sender, for receivers that check
// per-sender FIFO and duplicates (fifo_check).
struct sequenced : message {
  sequenced() = default;
  sequenced(std::uint64_t from, std::uint64_t number) : sender{from}, seq{number} {}
  std::uint64_t sender = 0;
  std::uint64_t seq = 0;  // 0, 1, 2, ... per sender (and receiver)
};

// The receiving side: per sender, the numbers seen and the next one due. A
// number seen before is a duplicate; any other number but the next one is
// out of order (an earlier message lost or overtaken). Plain state: for
// one receiver that runs one message at a time (a classic actor), read by
// the test thread once the system is quiescent.
class fifo_check {
 public:
  void accept(std::uint64_t sender, std::uint64_t seq) {
    stream& s = streams_[sender];
    if (seq >= s.seen.size()) s.seen.resize(seq + 1 + s.seen.size() / 2, false);
    ++received_;
    if (s.seen[seq]) {
      ++duplicates_;
      return;
    }
    s.seen[seq] = true;
    if (seq != s.next) ++out_of_order_;
    s.next = seq + 1;
  }
  void accept(const sequenced& m) { accept(m.sender, m.seq); }

  std::uint64_t received() const noexcept { return received_; }
  std::uint64_t duplicates() const noexcept { return duplicates_; }
  std::uint64_t out_of_order() const noexcept { return out_of_order_; }
  std::size_t senders() const noexcept { return streams_.size(); }
  // The number after the last one received from `sender`: how many it sent,
  // once everything arrived in order.
  std::uint64_t next(std::uint64_t sender) const {
    const auto it = streams_.find(sender);
    return it == streams_.end() ? 0 : it->second.next;
  }
  // Whether everything arrived once and in order.
  bool clean() const noexcept { return duplicates_ == 0 && out_of_order_ == 0; }

 private:
  struct stream {
    std::uint64_t next = 0;
    std::vector<bool> seen;
  };
  std::unordered_map<std::uint64_t, stream> streams_;
  std::uint64_t received_ = 0;
  std::uint64_t duplicates_ = 0;
  std::uint64_t out_of_order_ = 0;
};

// Numbered letters from `senders` threads, each sending `per_sender` of
// them round robin over `to`, numbered per thread and receiver (for a
// fifo_check); returns once all are sent. The letters live in what it
// returns, which must outlive their delivery.
template <class Receiver>
std::vector<std::vector<sequenced>> letters_from_threads(const std::vector<Receiver*>& to,
                                                         std::uint64_t senders,
                                                         std::uint64_t per_sender) {
  std::vector<std::vector<sequenced>> letters(senders);
  for (std::uint64_t t = 0; t < senders; ++t) {
    letters[t].reserve(per_sender);  // built in place: a copy destroyed unsent is reported
    for (std::uint64_t i = 0; i < per_sender; ++i) letters[t].emplace_back(t, i / to.size());
  }
  std::vector<std::thread> threads;
  for (std::uint64_t t = 0; t < senders; ++t)
    threads.emplace_back([&, t] {
      for (std::uint64_t i = 0; i < per_sender; ++i) *to[i % to.size()] | letters[t][i];
    });
  for (auto& t : threads) t.join();
  return letters;
}

}  // namespace tact::test
