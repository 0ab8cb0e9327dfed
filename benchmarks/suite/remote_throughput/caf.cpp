// remote_throughput for CAF 0.17: the same processes, parameters and checks
// as tact.cpp (which documents the workload), with CAF's middleman (BASP
// over TCP): the server publishes its counter on a port of 127.0.0.1, the
// client's scoped actor sends it the messages, then requests its tally.
// One sender and one receiver over one connection, so they arrive in order.
//
// CAF's remote link is plain TCP, with neither encryption nor
// authentication (libcaf_openssl would add them; it is not used here),
// while tact's is always CURVE-encrypted: these figures compare tact with
// encryption against CAF without. The message and the tally are structs,
// as in tact.cpp: CAF 0.17 serializes them through their `inspect` once
// both systems announce them (add_message_type), naming the type in each
// message. The middleman buffers whatever the socket does not take yet,
// without bound.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace suite::remote_throughput {

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, tally& x) {
  return f(caf::meta::type_name("bench.tally"), x.received, x.last_seq, x.out_of_order,
           x.first_wrong_at, x.first_wrong_seq, x.payload_sum);
}

}  // namespace suite::remote_throughput

namespace {

using suite::remote_throughput::tally;
using count_atom = caf::atom_constant<caf::atom("count")>;

struct item {
  std::uint64_t seq = 0;
  std::int32_t value = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, item& x) {
  return f(caf::meta::type_name("bench.item"), x.seq, x.value);
}

caf::behavior counter_actor(caf::stateful_actor<tally>* self) {
  return {
      [=](const item& m) {
        self->state = suite::remote_throughput::counted(self->state, m.seq, m.value);
      },
      [=](count_atom) { return self->state; },
  };
}

caf::actor_system_config config(unsigned threads) {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(threads));
  cfg.load<caf::io::middleman>();
  cfg.add_message_type<item>("bench.item");
  cfg.add_message_type<tally>("bench.tally");
  return cfg;
}

// The server process's body: it publishes on a port of the kernel's
// choice, which it passes to the client with its readiness.
int serve(const suite::remote::server_process::side& side, unsigned threads) {
  caf::actor_system_config cfg = config(threads);
  caf::actor_system system{cfg};
  auto counter = system.spawn(counter_actor);
  const auto port = system.middleman().publish(counter, 0, "127.0.0.1");
  if (!port) {
    std::fprintf(stderr, "server process: cannot publish: %s\n",
                 system.render(port.error()).c_str());
    caf::anon_send_exit(counter, caf::exit_reason::user_shutdown);
    return 2;
  }
  side.ready(std::to_string(*port));
  side.wait_for_stop();
  // The system's destructor waits for every actor: the counter quits.
  caf::anon_send_exit(counter, caf::exit_reason::user_shutdown);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::remote_throughput::parameters p = suite::remote_throughput::read(o);

  suite::remote::server_process server{
      [&](const suite::remote::server_process::side& side) { return serve(side, o.threads()); }};
  const std::string port = server.contact();

  std::optional<tally> before, after;
  std::string failure;
  double secs = 0;
  {
    caf::actor_system_config cfg = config(o.threads());
    caf::actor_system system{cfg};
    auto counter = system.middleman().remote_actor("127.0.0.1", suite::remote::port_of(port));
    if (!counter) {
      failure = "cannot reach the counter: " + system.render(counter.error());
    } else {
      caf::scoped_actor self{system};
      const std::chrono::seconds deadline{suite::remote::ask_deadline_seconds};
      const auto ask = [&](std::optional<tally>& into) {
        self->request(*counter, deadline, count_atom::value)
            .receive([&](const tally& t) { into = t; },
                     [&](const caf::error& e) {
                       failure = "the counter did not answer: " + system.render(e);
                     });
      };
      ask(before);
      if (before) {
        const auto start = std::chrono::steady_clock::now();
        for (std::uint64_t seq = 1; seq <= p.messages; ++seq)
          self->send(*counter, item{seq, suite::remote_throughput::payload(seq)});
        ask(after);
        secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }
    }
  }
  server.stop();

  suite::check(failure.empty(), failure);
  suite::check(before && after, "the counter did not answer");
  suite::check(before->received == 0, "the counter had counted messages before any was sent");
  suite::remote_throughput::check_tally(*after, p.messages);
  suite::report(o, suite::bench_name("remote_throughput"), "caf", secs, p.messages);
}
