// Testing actors with the deterministic system: a shop holds an item for
// whoever reserves it, and puts it back on the shelf if the reservation is
// not confirmed within ten minutes. The tests look at a message before it
// is received, move virtual time instead of waiting, ask the shop from the
// test, and check that two shoppers racing for the last item end with
// exactly one item sold under every schedule of many seeds.
// docs/testing.md quotes this file.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>

#include <tact/tact.hpp>
#include <tact/testing.hpp>

using namespace std::chrono_literals;
using tact::testing::deterministic_system;

struct shopper;

struct reserve : tact::message {
  explicit reserve(shopper& who) : who{&who} {}
  shopper* who;
};
struct in_stock : tact::request<int> {};

// Messages made when they are sent, and freed once received.
struct made_to_send : tact::message {
  made_to_send() { set_allocation(tact::allocation::Delete); }
};
struct confirm : made_to_send {};
struct lapse : made_to_send {};
// Answers a reservation with whether it got the item.
struct outcome : made_to_send {
  explicit outcome(bool held) : held{held} {}
  bool held;
};

struct shop : tact::actor {
  shop(tact::actor_system& system, int stock) : tact::actor{system}, stock{stock} {}
  int stock;
  int sold = 0;
  shopper* holder = nullptr;
  tact::timer hold;

  tact::allocation receive(reserve& r);
  tact::allocation receive(confirm&) {
    if (holder != nullptr && hold.cancel()) {  // won against the lapse
      ++sold;
      holder = nullptr;
    }
    return Nodelete;
  }
  tact::allocation receive(lapse&) {
    ++stock;  // back on the shelf
    holder = nullptr;
    return Nodelete;
  }
  tact::allocation receive(in_stock& q) {
    q.reply(stock);
    return Nodelete;
  }
};

// Reserves on `go`, and confirms what it gets if it `decides`.
struct shopper : tact::actor {
  shopper(tact::actor_system& system, shop& s, bool decides = true)
      : tact::actor{system}, at{s}, decides{decides} {}
  shop& at;
  bool decides;
  reserve asking{*this};
  bool got = false;
  struct go : tact::message {} start;

  tact::allocation receive(go&) {
    at | asking;
    return Nodelete;
  }
  tact::allocation receive(outcome& o) {
    got = o.held;
    if (got && decides) at | *new confirm;
    return Nodelete;
  }
};

tact::allocation shop::receive(reserve& r) {
  const bool held = stock > 0 && holder == nullptr;
  if (held) {
    --stock;
    holder = r.who;
    hold = tact::send_after(10min, *this, *new lapse);
  }
  *r.who | *new outcome{held};
  return Nodelete;
}

template <class... A>
void finish(A&... actors) {
  ((actors | tact::delete_msg), ...);
}

TEST_CASE("a reservation nobody confirms goes back on the shelf") {
  deterministic_system system;
  INFO("seed " << system.seed());  // TACT_SEED=<seed> replays a failure
  shop& s = system.spawn<shop>(system, 1);
  shopper& ann = system.spawn<shopper>(system, s, false);  // never confirms

  ann | ann.start;
  REQUIRE(system.run_one());  // Ann asks the shop
  REQUIRE(system.next_message<reserve>(s) == &ann.asking);
  REQUIRE(system.run_one());  // the shop holds the item for her
  CHECK(system.next_message<outcome>(ann)->held);
  CHECK(system.run() == 1);  // Ann hears it, and does nothing

  system.advance_time(9min);
  system.run();
  CHECK(s.stock == 0);
  REQUIRE(system.trigger_timeout());  // ten minutes: the hold lapses
  system.run();
  CHECK(tact::ask(s, in_stock{}, 1s).value() == 1);
  finish(s, ann);
}

TEST_CASE("two shoppers racing for the last item: one buys it, under every schedule") {
  int ann_won = 0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    deterministic_system system{{.seed = seed}};
    INFO("seed " << seed);
    shop& s = system.spawn<shop>(system, 1);
    shopper& ann = system.spawn<shopper>(system, s);
    shopper& bob = system.spawn<shopper>(system, s);
    ann | ann.start;
    bob | bob.start;
    system.run();
    CHECK(ann.got != bob.got);
    ann_won += ann.got;
    CHECK(s.sold == 1);
    CHECK(s.stock == 0);
    CHECK_FALSE(system.trigger_timeout());  // the confirm cancelled the hold
    finish(s, ann, bob);
  }
  // The seeds explored both orders.
  CHECK(ann_won > 0);
  CHECK(ann_won < 200);
}
