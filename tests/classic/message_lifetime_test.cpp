#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <new>

#include <tact/ask.hpp>
#include <tact/tact.hpp>

#include "support/test_support.hpp"

// When the engine lets go of a classic message (docs/concepts.md, "Who
// owns a classic message"): it reads a message only before its receive
// starts, so once the receiver says it is done with a message, its sender
// may free or reuse it, even while that receive is still running. Here the
// receiver says so by asking the sender, and is suspended in that ask
// while the sender reuses the message, to be destroyed on its next
// delivery (allocation Destroy); if the engine looked at the message again
// once the first receive returned, it would destroy it then. It once did:
// it read the allocation after the receive, a use after free when the
// sender had freed the message (an owner deleting itself, with its
// request, once answered).
namespace {

using namespace std::chrono_literals;

struct job : tact::message {
  explicit job(int& destroyed) : destroyed{&destroyed} {}
  ~job() override { ++*destroyed; }
  int* destroyed;
};
struct done_with_it : tact::request<int> {};

// Owns the job it sends; told that its receiver is done with it, makes it
// ready to go again, as a message destroyed once delivered.
struct owner : tact::actor {
  explicit owner(tact::actor_system& s) : tact::actor{s} {}
  int destroyed = 0;
  alignas(job) std::byte storage[sizeof(job)];
  job* sent = new (storage) job{destroyed};
  tact::allocation receive(done_with_it& m) {
    sent->set_allocation(tact::allocation::Destroy);
    m.reply(0);
    return Nodelete;
  }
};

// Receives the job, tells its owner it is done with it, then works on a
// while (here: waits for the answer) before its receive returns.
template <class Owner>
struct worker : tact::actor {
  explicit worker(tact::actor_system& s) : tact::actor{s} {}
  Owner* boss = nullptr;
  bool answered = false;
  tact::allocation receive(job&) {
    answered = static_cast<bool>(tact::ask(*boss, done_with_it{}, 10s));
    return Nodelete;
  }
};

}  // namespace

TEST_CASE(
    "the engine does not touch a message its sender reused once its receiver was done with it") {
  const std::uint32_t workers = GENERATE(1u, 2u);
  INFO(workers << " workers");
  tact::actor_system system{tact::test::configured({.workers = workers})};
  owner o{system};
  worker<owner> w{system};
  w.boss = &o;
  w | *o.sent;
  system.await_quiescence();
  CHECK(w.answered);
  CHECK(o.destroyed == 0);  // the engine did not take the reused job's action
  o.sent->~job();
  w | tact::finished_msg;
  o | tact::finished_msg;
  system.stop();
}

namespace {

// The case as users met it: an owner that deletes itself, and the request
// it sent with it, once answered. AddressSanitizer saw the engine read the
// freed request when the receive that answered returned.
struct request_owner : tact::actor {
  explicit request_owner(tact::actor_system& s, int& destroyed)
      : tact::actor{s}, request{destroyed} {}
  job request;
  tact::allocation receive(done_with_it& m) {
    m.reply(0);
    return Delete;  // and the request with it
  }
};

}  // namespace

TEST_CASE("an owner may free its request once told its receiver is done with it") {
  const std::uint32_t workers = GENERATE(1u, 2u);
  INFO(workers << " workers");
  int destroyed = 0;
  tact::actor_system system{tact::test::configured({.workers = workers})};
  worker<request_owner> w{system};
  w.boss = new request_owner{system, destroyed};
  w | w.boss->request;
  system.await_quiescence();
  CHECK(w.answered);
  CHECK(destroyed == 1);  // by the owner's deletion, once
  w | tact::finished_msg;
  system.stop();
}

namespace {

// A heap message the engine would delete once received: `relay` keeps it
// (Nodelete) and passes it on, and `keeper`, which has it then, reuses it
// while relay's receive is still running.
struct parcel : tact::message {
  explicit parcel(int& destroyed)
      : tact::message{tact::allocation::Delete}, destroyed{&destroyed} {}
  ~parcel() override { ++*destroyed; }
  int* destroyed;
};

struct keeper : tact::actor {
  explicit keeper(tact::actor_system& s) : tact::actor{s} {}
  parcel* kept = nullptr;
  tact::allocation receive(parcel& p) {
    kept = &p;
    return Nodelete;
  }
  tact::allocation receive(done_with_it& m) {
    kept->set_allocation(tact::allocation::Destroy);
    m.reply(0);
    return Nodelete;
  }
};

struct relay : tact::actor {
  relay(tact::actor_system& s, keeper& k) : tact::actor{s}, next{&k} {}
  keeper* next;
  bool answered = false;
  tact::allocation receive(parcel& p) {
    p.set_allocation(tact::allocation::Nodelete);  // not the engine's any more
    *next | p;
    // Sent after the parcel, so answered once keeper has it.
    answered = static_cast<bool>(tact::ask(*next, done_with_it{}, 10s));
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a heap message its receiver kept and passed on is not freed when that receive returns") {
  const std::uint32_t workers = GENERATE(1u, 2u);
  INFO(workers << " workers");
  int destroyed = 0;
  tact::actor_system system{tact::test::configured({.workers = workers})};
  keeper k{system};
  relay r{system, k};
  r | *new parcel{destroyed};
  system.await_quiescence();
  CHECK(r.answered);
  REQUIRE(k.kept != nullptr);
  CHECK(destroyed == 0);
  delete k.kept;
  r | tact::finished_msg;
  k | tact::finished_msg;
  system.stop();
}
TEST_CASE("a receiver that takes a message over has the engine apply the allocation it set") {
  int destroyed = 0;
  struct adopted : tact::message {
    explicit adopted(int& d) : destroyed{&d} {}
    ~adopted() override { ++*destroyed; }
    int* destroyed;
  };
  struct adopter : tact::actor {
    explicit adopter(tact::actor_system& s) : tact::actor{s} {}
    tact::allocation receive(adopted& m) {
      m.set_allocation(tact::allocation::Delete);  // the engine frees it after this receive
      return Nodelete;
    }
  };
  tact::actor_system system{tact::test::configured({.workers = 1})};
  adopter a{system};
  a | *new adopted{destroyed};
  system.await_quiescence();
  CHECK(destroyed == 1);
  a | tact::finished_msg;
  system.stop();
}
