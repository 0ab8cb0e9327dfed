// sieve (Savina's "sieve", no. 25 of the list in the CAF locality thesis, 6.2.1): the primes
// below `limit` by a growing pipeline of filter actors. A producer sends
// every odd number from 3 to the first filter; each filter keeps up to
// `primes_per_filter` primes and drops a candidate one of them divides; a
// candidate that passes every filter is prime, and the last filter keeps it,
// or creates a new last filter for it when it is full. It measures a pipeline
// that grows while it runs (actors created by actors), with trial divisions
// as most of the work.
//
// Savina's protocol, kept as is: after the candidates the producer sends
// Exit, which every filter passes on before it exits (the CAF team's port
// passes it on only from the last filter, which leaves the others running;
// that inversion is not copied). Candidates reach the filters in order, so
// which filter drops which number is fixed, and main computes the message
// count from a plain sieve as well as the number of primes:
//   1 start + for each odd candidate c: the filters it visits (up to the
//   one holding its smallest prime factor, or every filter there is when
//   it is prime) + one Exit per filter.
//
// Parameters (full / --quick):
//   --limit              candidates below it (300,000 / 80,000). Savina's
//                        default is 100,000; the CAF locality study uses
//                        2,000,000.
//   --primes_per_filter  primes a filter keeps (1,000 / 1,000), Savina's
//                        default; the CAF locality study uses 10,000.
//
// Each candidate is one message object for its whole journey, passed on by
// address (tact never copies a message), so the producer allocates them in
// one array before it starts; one Exit object goes down the whole chain.
// Filters are made with system().spawn and return Delete when they exit,
// after adding their counts to a tally main reads. The timed region covers
// creating the first filter and the producer and the run to quiescence.
// The report gives no time per message: the divisions are most of the time.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "expect.hpp"
#include "params.hpp"
#include "suite.hpp"

namespace {

struct start_msg : tact::message {};
struct candidate_msg : tact::message {
  std::int64_t value = 0;
};
struct exit_msg : tact::message {};

// What the filters leave when they exit, each in turn down the chain (the
// Exit that one filter passes on orders its additions before the next's).
struct tally {
  std::uint64_t received = 0;
  std::int64_t primes = 0;
  std::int64_t filters = 0;
};

class filter final : public tact::actor {
 public:
  filter(std::int64_t first_prime, std::size_t capacity, tally& out)
      : capacity_{capacity}, out_{out} {
    primes_.reserve(capacity);
    primes_.push_back(first_prime);
  }

  tact::allocation receive(candidate_msg& c) {
    ++received_;
    for (const std::int64_t p : primes_)
      if (c.value % p == 0) return Nodelete;
    if (next_ != nullptr)
      *next_ | c;
    else if (primes_.size() < capacity_)
      primes_.push_back(c.value);
    else
      next_ = &system().spawn<filter>(c.value, capacity_, out_);
    return Nodelete;
  }
  tact::allocation receive(exit_msg& m) {
    ++received_;
    out_.received += received_;
    out_.primes += static_cast<std::int64_t>(primes_.size());
    ++out_.filters;
    if (next_ != nullptr) *next_ | m;
    return Delete;
  }

 private:
  const std::size_t capacity_;
  tally& out_;
  std::vector<std::int64_t> primes_;
  filter* next_ = nullptr;
  std::uint64_t received_ = 0;
};

class producer final : public tact::actor {
 public:
  producer(tact::actor_system& system, std::int64_t limit, filter& first)
      : actor{system}, first_{first}, candidates_(static_cast<std::size_t>((limit - 2) / 2)) {
    std::int64_t c = 3;
    for (candidate_msg& m : candidates_) {
      m.value = c;
      c += 2;
    }
  }

  tact::allocation receive(start_msg&) {
    for (candidate_msg& c : candidates_) first_ | c;
    first_ | exit_;
    return Finished;
  }

 private:
  filter& first_;
  std::vector<candidate_msg> candidates_;  // all in flight at once: never resized
  exit_msg exit_;
};

using suite::sieve::expect;
using suite::sieve::expectation;

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::sieve::params p = suite::sieve::read(o);

  tact::actor_system system{{.workers = o.threads()}};
  tally out;
  std::unique_ptr<producer> feed;
  start_msg start;
  const double secs = suite::seconds([&] {
    filter& first = system.spawn<filter>(2, static_cast<std::size_t>(p.primes_per_filter), out);
    feed = std::make_unique<producer>(system, p.limit, first);
    *feed | start;
    system.await_quiescence();
  });

  const expectation e = expect(p.limit, p.primes_per_filter);
  suite::check(feed->finished(), "the producer did not finish");
  suite::check(out.primes == e.primes, "the filters hold " + std::to_string(out.primes) +
                                           " primes, expected " + std::to_string(e.primes));
  const std::uint64_t delivered = 1 + out.received;
  suite::check(delivered == e.messages, "the actors received " + std::to_string(delivered) +
                                            " messages, expected " + std::to_string(e.messages));
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  suite::report(o, "sieve", "tact", secs, 0);
}
