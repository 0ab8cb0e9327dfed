#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <tact/detail/block_pool.hpp>
#include <tact/tact.hpp>
#include <tact/testing.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

// tact::send_new makes a message and sends it in one call; the delivery
// frees it, to the per-thread block cache. tact::payload lets a plain
// struct be a message, brace- and designated-initialised.
namespace {

std::atomic<int> alive{0};

// Counts its live objects, so a leak or a double free shows.
struct resize : tact::message {
  resize(int w, int h) : width{w}, height{h} { alive.fetch_add(1); }
  resize(const resize& other) : tact::message{other}, width{other.width}, height{other.height} {
    alive.fetch_add(1);
  }
  ~resize() override { alive.fetch_sub(1); }
  int width;
  int height;
};

struct greeting {
  std::string text;
  int times = 1;
};

struct refuses : tact::message {
  explicit refuses(bool fail) {
    if (fail) throw std::runtime_error{"refused"};
  }
};

struct window : tact::actor {
  window() = default;
  explicit window(tact::actor_system& system) : tact::actor{system} {}
  std::vector<std::string> log;
  tact::allocation receive(resize& r) {
    log.push_back(std::to_string(r.width) + "x" + std::to_string(r.height));
    return Nodelete;
  }
  tact::allocation receive(tact::payload<greeting>& g) {
    for (int i = 0; i < g.times; ++i) log.push_back(g.text);
    return Nodelete;
  }
  tact::allocation receive(refuses&) { return Nodelete; }
};

}  // namespace

TEST_CASE("send_new makes, sends and frees a message in one call") {
  tact::actor_system system{{.workers = 2}};
  window w;
  tact::send_new<resize>(w, 800, 600);
  tact::send_new(w, greeting{.text = "hello", .times = 2});
  tact::send_new<greeting>(w, "brace", 1);  // greeting{"brace", 1}
  tact::handle<resize> h = w;
  tact::send_new<resize>(h, 1, 2);  // through a handle
  system.await_quiescence();
  CHECK(w.log == std::vector<std::string>{"800x600", "hello", "hello", "brace", "1x2"});
  CHECK(alive.load() == 0);  // every one freed after its receive
  w | tact::finished_msg;
  system.stop();
  CHECK(tact::test::conservation_of(system));
}

TEST_CASE("a payload is an ordinary message too") {
  tact::actor_system system{{.workers = 1}};
  window w;
  tact::payload<greeting> kept{{.text = "kept", .times = 1}};
  w | kept | kept;
  system.await_quiescence();
  CHECK(w.log == std::vector<std::string>{"kept", "kept"});
  w | tact::finished_msg;
  system.stop();
}

TEST_CASE("send_new to a finished actor frees the message; a throwing constructor sends nothing") {
  tact::actor_system system{{.workers = 1}};
  window w;
  w | tact::finished_msg;
  system.await_quiescence();
  tact::send_new<resize>(w, 1, 1);
  CHECK(alive.load() == 0);
  CHECK(system.stats().total.dead_letters == 1);

  window open;
  const std::uint64_t sent_before = system.stats().total.messages_sent;
  CHECK_THROWS_AS(tact::send_new<refuses>(open, true), std::runtime_error);
  CHECK(system.stats().total.messages_sent == sent_before);
  open | tact::finished_msg;
  system.stop();
}

TEST_CASE("messages made by send_new come back from the per-thread cache") {
  if (tact::detail::block_keep_limit() == 0) return;  // nothing pooled (AddressSanitizer)
  // The delivery runs on this thread (a deterministic system), so the
  // block freed by one delivery is the one the next send_new takes.
  tact::testing::deterministic_system system;
  window w{system};
  const std::size_t size = sizeof(tact::detail::made<resize>);
  tact::send_new<resize>(w, 1, 1);
  system.run();
  const std::size_t kept = tact::detail::kept_blocks(size);
  REQUIRE(kept >= 1);
  tact::send_new<resize>(w, 2, 2);
  CHECK(tact::detail::kept_blocks(size) == kept - 1);  // taken from the cache
  system.run();
  CHECK(tact::detail::kept_blocks(size) == kept);  // and given back
  w | tact::finished_msg;
  system.run();
}
