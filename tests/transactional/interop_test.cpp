#include <catch2/catch.hpp>

#include <atomic>

#include <tact/tact.hpp>
#include <tact/transactional.hpp>

namespace {

namespace tx = tact::tx;

struct ball : tact::message {
  explicit ball(int h) : tact::message{tact::allocation::Delete}, hits{h} {}
  int hits;
};

// A classic actor that plays a ball back to a transactional partner until
// it has been hit `rounds` times, then finishes.
struct classic_player : tact::actor {
  classic_player(tact::actor_system& system, int rounds) : actor{system}, rounds{rounds} {}
  tx::actor_ref partner;
  const int rounds;
  int received = 0;
  tact::allocation receive(ball& b) {
    ++received;
    if (b.hits >= rounds) return Finished;
    tx::send(partner, this, b.hits + 1);  // immediate: a classic behaviour is no transaction
    return Nodelete;
  }
};

// The transactional side returns the ball once its handler commits.
tx::behaviour transactional_player(std::atomic<int>& hits) {
  return {[&hits](classic_player* to, int n) {
    tx::on_commit([&hits, to, n] {
      hits.fetch_add(1);
      tact::send(*to, *new ball{n});
    });
  }};
}

}  // namespace

TEST_CASE("classic and transactional actors play in one system; stop waits for both") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  const int rounds = 2'000;
  std::atomic<int> hits{0};
  tact::actor_system system{{.workers = workers}};
  classic_player player{system, rounds};
  player.partner = tx::spawn(system, transactional_player(hits));
  tact::send(player, *new ball{0});
  system.stop();  // returns once the classic player finished and nothing runs
  CHECK(player.finished());
  CHECK(player.received == rounds + 1);
  CHECK(hits.load() == rounds);
  const tact::worker_stats total = system.stats().total;
  CHECK(total.tx_commits == static_cast<std::uint64_t>(rounds));
  CHECK(total.messages_processed == static_cast<std::uint64_t>(2 * rounds + 1));
}

TEST_CASE("await_quiescence waits for transactional chains too") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  tact::actor_system system{{.workers = workers}};
  std::atomic<int> done{0};
  // Each message fans out to two until depth 10: 2^11 - 1 messages in all.
  const tx::actor_ref tree = tx::spawn(system, {[&done](int depth) {
                                         done.fetch_add(1);
                                         if (depth == 0) return;
                                         tx::send(tx::self(), depth - 1);
                                         tx::send(tx::self(), depth - 1);
                                       }});
  tx::send(tree, 10);
  system.await_quiescence();
  CHECK(done.load() == (1 << 11) - 1);
}
