// repeat, tact (Cforall thesis, "Executor", the repeat benchmark): one client
// scatters a request to each of many servers and gathers their replies,
// again and again (workloads/repeat.hpp). Every reply converges on the
// client's queue, so it measures contention on one queue and the cost of
// moving the client. The thesis runs 100,000 servers for 200 repetitions;
// the defaults keep the servers and shrink the repetitions.
//
// Parameters (--NAME=VALUE; full default, --quick default):
//   servers       servers, at least 1             10,000     2,000
//   repetitions   scatter/gathers, at least 1         60         5
// Messages: 2 * servers * repetitions (1.2 million by default).
//
// Timed: creating the client and servers, every repetition, until the
// system is quiescent. Checked: the client gathered every reply, each
// carrying the right repetition; every server served every request; the
// system's delivery count agrees.
#include <cstdint>
#include <exception>

#include <tact/tact.hpp>

#include "suite.hpp"
#include "workloads/repeat.hpp"

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const tact::bench::repeat_params params{
      .servers = static_cast<std::uint32_t>(o.param("servers", 10'000, 2'000)),
      .repetitions = static_cast<std::uint32_t>(o.param("repetitions", 60, 5))};

  tact::actor_system system{{.workers = o.threads()}};
  tact::bench::repeat_result result;
  double secs = 0;
  try {
    secs = suite::seconds([&] { result = tact::bench::run_repeat(system, params); });
  } catch (const std::exception& e) {
    suite::fail(e.what());
  }
  system.stop();
  suite::report(o, "repeat", "tact", secs, result.messages);
}
