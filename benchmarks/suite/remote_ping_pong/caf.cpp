// remote_ping_pong for CAF 0.17: the same processes, parameters and checks
// as tact.cpp (which documents the workload), with CAF's middleman (BASP
// over TCP): the server publishes its echo actor on a port of 127.0.0.1,
// the client's scoped actor requests it, one request at a time.
//
// CAF's remote link is plain TCP, with neither encryption nor
// authentication (libcaf_openssl would add them; it is not used here),
// while tact's is always CURVE-encrypted: these figures compare tact with
// encryption against CAF without. A request is an atom and the sequence
// number, types CAF 0.17 serializes without announcing them.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

using ping_atom = caf::atom_constant<caf::atom("ping")>;
using pong_atom = caf::atom_constant<caf::atom("pong")>;

caf::behavior echo_actor() {
  return {
      [](ping_atom, std::uint64_t seq) { return caf::make_message(pong_atom::value, seq); },
  };
}

caf::actor_system_config config(unsigned threads) {
  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(threads));
  cfg.load<caf::io::middleman>();
  return cfg;
}

// The server process's body: it publishes on a port of the kernel's
// choice, which it passes to the client with its readiness.
int serve(const suite::remote::server_process::side& side, unsigned threads) {
  caf::actor_system_config cfg = config(threads);
  caf::actor_system system{cfg};
  auto echo = system.spawn(echo_actor);
  const auto port = system.middleman().publish(echo, 0, "127.0.0.1");
  if (!port) {
    std::fprintf(stderr, "server process: cannot publish: %s\n",
                 system.render(port.error()).c_str());
    caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
    return 2;
  }
  side.ready(std::to_string(*port));
  side.wait_for_stop();
  // The system's destructor waits for every actor: the echo actor quits.
  caf::anon_send_exit(echo, caf::exit_reason::user_shutdown);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::remote_ping_pong::parameters p = suite::remote_ping_pong::read(o);

  suite::remote::server_process server{
      [&](const suite::remote::server_process::side& side) { return serve(side, o.threads()); }};
  const std::string port = server.contact();

  std::vector<double> round_us;
  round_us.reserve(p.rounds);
  std::uint64_t answered = 0, wrong = 0;
  std::string failure;
  double secs = 0;
  {
    caf::actor_system_config cfg = config(o.threads());
    caf::actor_system system{cfg};
    auto echo = system.middleman().remote_actor("127.0.0.1", suite::remote::port_of(port));
    if (!echo) {
      failure = "cannot reach the echo actor: " + system.render(echo.error());
    } else {
      caf::scoped_actor self{system};
      const std::chrono::seconds deadline{suite::remote::ask_deadline_seconds};
      // One round trip; false, with `failure` set, if it had no answer.
      const auto round = [&](std::uint64_t seq) {
        bool ok = false;
        self->request(*echo, deadline, ping_atom::value, seq)
            .receive(
                [&](pong_atom, std::uint64_t back) {
                  ok = true;
                  wrong += back != seq;
                },
                [&](const caf::error& e) {
                  failure =
                      "round trip " + std::to_string(seq) + " had no reply: " + system.render(e);
                });
        return ok;
      };
      bool ok = true;
      for (std::uint64_t i = 0; ok && i < p.warmup; ++i) ok = round(i);
      const auto start = clock_type::now();
      for (std::uint64_t i = 0; ok && i < p.rounds; ++i) {
        const auto sent = clock_type::now();
        ok = round(p.warmup + i);
        answered += ok;
        round_us.push_back(
            std::chrono::duration<double, std::micro>(clock_type::now() - sent).count());
      }
      secs = std::chrono::duration<double>(clock_type::now() - start).count();
    }
  }
  server.stop();

  suite::check(failure.empty(), failure);
  suite::check(answered == p.rounds && wrong == 0,
               std::to_string(answered) + " of " + std::to_string(p.rounds) +
                   " round trips answered, " + std::to_string(wrong) + " with another's number");
  suite::report(o, suite::bench_name("remote_ping_pong"), "caf", secs, p.rounds,
                suite::latency_fields(round_us));
}
