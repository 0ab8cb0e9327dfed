// sieve for CAF 0.17: the same growing pipeline, candidates and message
// counts as tact.cpp (which documents the workload), written as CAF
// event-based actors.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "expect.hpp"
#include "params.hpp"
#include "suite.hpp"

namespace {

using start_atom = caf::atom_constant<caf::atom("start")>;
using candidate_atom = caf::atom_constant<caf::atom("candidate")>;
using exit_atom = caf::atom_constant<caf::atom("exit")>;

// What the filters leave when they exit, each in turn down the chain.
struct tally {
  std::uint64_t received = 0;
  std::int64_t primes = 0;
  std::int64_t filters = 0;
};

struct filter_state {
  std::vector<std::int64_t> primes;
  caf::actor next;
  std::uint64_t received = 0;
};

caf::behavior filter(caf::stateful_actor<filter_state>* self, std::int64_t first_prime,
                     std::size_t capacity, tally* out) {
  self->state.primes.reserve(capacity);
  self->state.primes.push_back(first_prime);
  return {
      [=](candidate_atom, std::int64_t c) {
        auto& s = self->state;
        ++s.received;
        for (const std::int64_t p : s.primes)
          if (c % p == 0) return;
        if (s.next)
          self->send(s.next, candidate_atom::value, c);
        else if (s.primes.size() < capacity)
          s.primes.push_back(c);
        else
          s.next = self->spawn(filter, c, capacity, out);
      },
      [=](exit_atom) {
        auto& s = self->state;
        ++s.received;
        out->received += s.received;
        out->primes += static_cast<std::int64_t>(s.primes.size());
        ++out->filters;
        if (s.next) self->send(s.next, exit_atom::value);
        self->quit();
      },
  };
}

caf::behavior producer(caf::event_based_actor* self, std::int64_t limit, caf::actor first) {
  return {
      [=](start_atom) {
        for (std::int64_t c = 3; c < limit; c += 2) self->send(first, candidate_atom::value, c);
        self->send(first, exit_atom::value);
        self->quit();
      },
  };
}

using suite::sieve::expect;
using suite::sieve::expectation;

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::sieve::params p = suite::sieve::read(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  tally out;
  const double secs = suite::seconds([&] {
    auto first =
        system.spawn(filter, std::int64_t{2}, static_cast<std::size_t>(p.primes_per_filter), &out);
    caf::anon_send(system.spawn(producer, std::int64_t{p.limit}, first), start_atom::value);
    system.await_all_actors_done();
  });

  const expectation e = expect(p.limit, p.primes_per_filter);
  suite::check(out.primes == e.primes, "the filters hold " + std::to_string(out.primes) +
                                           " primes, expected " + std::to_string(e.primes));
  const std::uint64_t delivered = 1 + out.received;
  suite::check(delivered == e.messages, "the actors received " + std::to_string(delivered) +
                                            " messages, expected " + std::to_string(e.messages));
  suite::report(o, "sieve", "caf", secs, 0);
}
