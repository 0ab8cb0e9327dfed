#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <tact/metrics.hpp>
#include <tact/tact.hpp>
#include <tact/transactional.hpp>

#include "support/test_support.hpp"
#include "support/token_ring.hpp"

// The metrics endpoint, scraped over loopback as a monitoring system
// would: every counter per worker, matching system.stats(), moving with
// the work; the gauges; and a clear error for a port that is taken.
namespace {

using namespace std::chrono_literals;
namespace tx = tact::tx;

// One scrape: series name -> worker label ("" for none) -> value.
using scrape = std::map<std::string, std::map<std::string, double>>;

// GET `path` from 127.0.0.1:`port` over HTTP/1.0; the body, or throws. A
// receive that waits 60 s means the server is stuck: a deadlock guard,
// not a time limit.
std::string http_get(std::uint16_t port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error{"socket() failed"};
  struct closer {
    int fd;
    ~closer() { ::close(fd); }
  } guard{fd};
  timeval patience{.tv_sec = 60, .tv_usec = 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) != 0)
    throw std::runtime_error{"cannot connect to port " + std::to_string(port)};
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size()))
    throw std::runtime_error{"cannot send the request"};
  std::string response;
  char buffer[16 * 1024];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) != 0;) {
    if (n < 0) throw std::runtime_error{"the server sent no answer within 60 s"};
    response.append(buffer, static_cast<std::size_t>(n));
  }
  if (response.rfind("HTTP/1.1 200", 0) != 0 && response.rfind("HTTP/1.0 200", 0) != 0)
    throw std::runtime_error{"not a 200 answer: " + response.substr(0, response.find('\r'))};
  return response.substr(response.find("\r\n\r\n") + 4);
}

// The tact_ series of a text exposition: `name{worker="w"} value` or
// `name value`; the # lines tell each family's type.
scrape parse(const std::string& text, std::map<std::string, std::string>* types = nullptr) {
  scrape out;
  std::istringstream lines{text};
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE tact_", 0) == 0 && types != nullptr) {
      std::istringstream words{line.substr(7)};
      std::string name, type;
      words >> name >> type;
      (*types)[name] = type;
    }
    if (line.rfind("tact_", 0) != 0) continue;
    const std::size_t space = line.rfind(' ');
    const std::string series = line.substr(0, space);
    const double value = std::stod(line.substr(space + 1));
    const std::size_t brace = series.find('{');
    std::string worker;
    if (brace != std::string::npos) {
      const std::string label = series.substr(brace);
      REQUIRE(label.rfind("{worker=\"", 0) == 0);
      worker = label.substr(9, label.size() - 11);
    }
    out[series.substr(0, brace)][worker] = value;
  }
  return out;
}

scrape scrape_of(const tact::metrics_exposer& exposer) {
  return parse(http_get(exposer.port(), "/metrics"));
}

double sum(const scrape& s, const std::string& name) {
  double total = 0;
  for (const auto& [worker, value] : s.at(name)) total += value;
  return total;
}

using tact::test::token;
using node = tact::test::ring_node;

struct go : tact::message {};
struct note : tact::message {};

struct blocker : tact::actor {
  tact::allocation receive(go&) {
    entered.store(true);
    while (!released.load()) std::this_thread::sleep_for(100us);
    return Nodelete;
  }
  tact::allocation receive(note&) { return Nodelete; }
  std::atomic<bool> entered{false};
  std::atomic<bool> released{false};
};

struct add {};

// Refuses odd amounts by throwing: each is rolled back.
tx::behaviour even_counter(long total) {
  return {[total](add, long amount) {
    if (amount % 2 != 0) throw std::invalid_argument{"odd"};
    tx::become(even_counter(total + amount));
  }};
}

// A workload of both kinds of actor: a token round a ring of classic
// actors, and amounts for a transactional counter, half of them rolled back.
struct workload {
  explicit workload(tact::actor_system& s) : system{s}, nodes(8) {
    for (std::size_t i = 0; i < nodes.size(); ++i) nodes[i].next = &nodes[(i + 1) % nodes.size()];
    counter = tx::spawn(system, even_counter(0));
  }
  ~workload() {
    counter = {};
    for (node& n : nodes) n | tact::finished_msg;
    system.await_quiescence();
  }
  // Starts the work and returns without waiting for it.
  void start(std::uint64_t hops, long amounts) {
    t.hops_left = hops;
    nodes[0] | t;
    for (long i = 0; i < amounts; ++i) tx::send(counter, add{}, i);
  }
  tact::actor_system& system;
  std::vector<node> nodes;
  tx::actor_ref counter;
  token t;
};

tact::system_config quiet(std::uint32_t workers) {
  return {.workers = workers, .on_rollback = [](const tx::rollback&) {}};
}

}  // namespace

TEST_CASE("a scrape over loopback shows each counter per worker, as system.stats() counts them") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  tact::actor_system system{quiet(workers)};
  tact::metrics_exposer exposer{system, {.address = "127.0.0.1:0"}};
  REQUIRE(exposer.port() != 0);
  workload work{system};
  work.start(10'000, 1'000);
  system.await_quiescence();

  std::map<std::string, std::string> types;
  const scrape shown = parse(http_get(exposer.port(), "/metrics"), &types);
  const tact::system_stats stats = system.stats();  // quiescent: the same counts

  std::set<std::string> labels{"outside"};
  for (std::uint32_t w = 0; w < workers; ++w) labels.insert(std::to_string(w));
  const auto check_counter = [&](const std::string& name, std::uint64_t tact::worker_stats::*c) {
    INFO(name);
    REQUIRE(shown.count(name) == 1);
    CHECK(types[name] == "counter");
    std::set<std::string> seen;
    for (const auto& [worker, value] : shown.at(name)) seen.insert(worker);
    CHECK(seen == labels);
    for (std::uint32_t w = 0; w < workers; ++w)
      CHECK(shown.at(name).at(std::to_string(w)) == static_cast<double>(stats.workers[w].*c));
    CHECK(sum(shown, name) == static_cast<double>(stats.total.*c));
  };
  check_counter("tact_messages_processed_total", &tact::worker_stats::messages_processed);
  check_counter("tact_messages_sent_total", &tact::worker_stats::messages_sent);
  check_counter("tact_steals_total", &tact::worker_stats::steals);
  check_counter("tact_dead_letters_total", &tact::worker_stats::dead_letters);
  check_counter("tact_suspensions_total", &tact::worker_stats::suspensions);
  check_counter("tact_tx_collisions_total", &tact::worker_stats::tx_collisions);
  check_counter("tact_tx_rollbacks_total", &tact::worker_stats::tx_rollbacks);
  check_counter("tact_tx_commits_total", &tact::worker_stats::tx_commits);
  // Every counter of worker_stats is there, and nothing else counts.
  std::size_t counter_families = 0;
  for (const auto& [name, type] : types) counter_families += type == "counter" ? 1 : 0;
  CHECK(counter_families == tact::worker_stats_counters.size());

  CHECK(sum(shown, "tact_tx_rollbacks_total") == 500);  // the odd amounts
  CHECK(sum(shown, "tact_messages_sent_total") ==
        sum(shown, "tact_messages_processed_total") + sum(shown, "tact_messages_discarded_total"));
  CHECK(types["tact_queued_messages"] == "gauge");
  CHECK(sum(shown, "tact_queued_messages") == 0);
  CHECK(shown.at("tact_worker_parked").size() == workers);
  for (const auto& [worker, parked] : shown.at("tact_worker_parked"))
    CHECK((parked == 0 || parked == 1));
  CHECK(shown.at("tact_worker_resting").size() == workers);
  for (const auto& [worker, resting] : shown.at("tact_worker_resting"))
    CHECK((resting == 0 || resting == 1));
  CHECK(shown.at("tact_live_actors").at("") == 8);  // the ring
}

TEST_CASE("scrapes during a workload see the counters move, and never go back") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const std::uint64_t hops = tact::test::scaled(200'000);
  const long amounts = static_cast<long>(tact::test::scaled(20'000));
  tact::actor_system system{quiet(workers)};
  tact::metrics_exposer exposer{system, {.address = "127.0.0.1:0"}};
  workload work{system};

  const scrape before = scrape_of(exposer);
  work.start(hops, amounts);
  std::vector<scrape> during;
  for (int i = 0; i < 3; ++i) during.push_back(scrape_of(exposer));
  system.await_quiescence();
  const scrape after = scrape_of(exposer);

  // Each series of each counter only grows from one scrape to the next.
  std::vector<const scrape*> in_order{&before};
  for (const scrape& s : during) in_order.push_back(&s);
  in_order.push_back(&after);
  for (std::size_t i = 1; i < in_order.size(); ++i)
    for (const auto& [name, series] : *in_order[i])
      if (name.ends_with("_total"))
        for (const auto& [worker, value] : series) {
          INFO(name << "{worker=\"" << worker << "\"}, scrape " << i);
          CHECK(value >= in_order[i - 1]->at(name).at(worker));
        }

  // What the work did, in the difference of the first and last scrape.
  const auto moved = [&](const std::string& name) { return sum(after, name) - sum(before, name); };
  CHECK(moved("tact_messages_processed_total") >= static_cast<double>(hops + 1) + amounts);
  CHECK(moved("tact_tx_rollbacks_total") == static_cast<double>(amounts / 2));
  CHECK(moved("tact_tx_commits_total") == static_cast<double>(amounts - amounts / 2));
  CHECK(moved("tact_gulps_total") > 0);
  CHECK(sum(after, "tact_messages_sent_total") ==
        sum(after, "tact_messages_processed_total") + sum(after, "tact_messages_discarded_total"));
  CHECK(sum(after, "tact_queued_messages") == 0);
}

TEST_CASE("a scrape shows the envelopes waiting behind a busy actor") {
  const std::uint32_t workers = GENERATE(1u, 2u);
  tact::actor_system system{{.workers = workers}};
  tact::metrics_exposer exposer{system, {.address = "127.0.0.1:0"}};
  blocker b;
  go hold;
  b | hold;
  REQUIRE(tact::test::eventually([&] { return b.entered.load(); }));
  std::vector<note> notes(100);
  for (note& n : notes) b | n;

  const scrape busy = scrape_of(exposer);
  CHECK(sum(busy, "tact_queued_messages") == 100);
  CHECK(busy.at("tact_queued_messages").at("outside") == 0);
  CHECK(sum(busy, "tact_worker_parked") < workers);  // the blocker's worker is not

  b.released.store(true);
  system.await_quiescence();
  CHECK(sum(scrape_of(exposer), "tact_queued_messages") == 0);
  b | tact::finished_msg;
  system.await_quiescence();
}

TEST_CASE("an exposer refuses a port that is taken, saying which") {
  tact::actor_system system{{.workers = 1}};
  tact::metrics_exposer first{system, {.address = "127.0.0.1:0"}};
  const std::string taken = "127.0.0.1:" + std::to_string(first.port());
  CHECK_THROWS_WITH(tact::metrics_exposer(system, {.address = taken}),
                    Catch::Matchers::Contains("cannot listen on " + taken));
}
