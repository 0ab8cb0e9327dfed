#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "support/invariants.hpp"
#include "support/test_support.hpp"

// tact::handle: a reference to any classic actor that accepts the messages
// it names. A send through it is the receiver's own delivery (its receive
// overload, one message at a time, FIFO per sender), a derived message
// travels as the type the handle names, poison pills pass, a narrower
// handle can be made from a wider one, an empty handle refuses, and a send
// to a finished actor is a dead letter as a direct send's is.
namespace {

using namespace std::chrono_literals;
using tact::test::sequenced;

struct answer : tact::message {
  std::uint64_t value = 0;
};
struct loud_answer : answer {};
struct question : tact::message {
  tact::handle<answer> reply_to;
  std::uint64_t value = 0;
};

// Two unrelated actor types that both accept answers, and record which of
// their overloads ran.
struct client : tact::actor {
  std::vector<std::string> got;
  tact::allocation receive(answer& a) {
    got.push_back("answer " + std::to_string(a.value));
    return Nodelete;
  }
  tact::allocation receive(loud_answer& a) {
    got.push_back("loud " + std::to_string(a.value));
    return Nodelete;
  }
};
struct auditor : tact::actor {
  std::uint64_t sum = 0;
  tact::allocation receive(answer& a) {
    sum += a.value;
    return Nodelete;
  }
  tact::allocation receive(sequenced&) { return Nodelete; }
};

// Replies to whoever the question names, without knowing its type.
struct doubler : tact::actor {
  answer reply;
  tact::allocation receive(question& q) {
    reply.value = 2 * q.value;
    q.reply_to | reply;
    return Nodelete;
  }
};

}  // namespace

TEST_CASE("a reply through a handle reaches actors of any type that accept it") {
  tact::actor_system system{{.workers = 2}};
  doubler server;
  client c;
  auditor a;
  question to_client;
  to_client.value = 21;
  to_client.reply_to = c;
  server | to_client;
  system.await_quiescence();
  question to_auditor;
  to_auditor.value = 50;
  to_auditor.reply_to = a;
  server | to_auditor;
  system.await_quiescence();
  CHECK(c.got == std::vector<std::string>{"answer 42"});
  CHECK(a.sum == 100);
  tact::handle<question> h = server;
  h | tact::finished_msg;
  c | tact::finished_msg;
  a | tact::finished_msg;
  system.stop();
  CHECK(server.finished());
  CHECK(tact::test::conservation_of(system));
}

TEST_CASE("a message of a derived type travels as the type the handle names") {
  tact::actor_system system{{.workers = 1}};
  client c;
  loud_answer loud;
  loud.value = 7;
  c | loud;  // direct: the receiver's best overload
  system.await_quiescence();
  tact::handle<answer> h = c;
  h | loud;  // through the handle: as an answer
  tact::handle<answer, loud_answer> both = c;
  both | loud;  // the handle names the type itself
  system.await_quiescence();
  CHECK(c.got == std::vector<std::string>{"loud 7", "answer 7", "loud 7"});
  c | tact::finished_msg;
  system.stop();
}

TEST_CASE("handles compare by actor, narrow from wider ones and start empty") {
  tact::actor_system system{{.workers = 1}};
  auditor a;
  auditor b;
  tact::handle<answer, sequenced> wide = a;
  tact::handle<answer> narrow = wide;
  tact::handle<answer> empty;
  CHECK(narrow == wide);
  CHECK_FALSE(narrow == tact::handle<answer>{b});
  CHECK(narrow.get() == &a);
  CHECK(static_cast<bool>(narrow));
  CHECK_FALSE(static_cast<bool>(empty));
  CHECK(empty.get() == nullptr);
  answer m;
  m.value = 5;
  narrow | m;
  system.await_quiescence();
  CHECK(a.sum == 5);

  answer refused;
  refused.allow_unsent();  // the empty handle does not send it
  CHECK_THROWS_AS(empty | refused, std::logic_error);
  CHECK_THROWS_AS(empty | tact::finished_msg, std::logic_error);
  a | tact::finished_msg;
  b | tact::finished_msg;
  system.stop();
}

TEST_CASE("a send through a handle to a finished actor is a dead letter, and frees a heap message") {
  tact::actor_system system{{.workers = 1}};
  auto& gone = system.spawn<auditor>();
  tact::handle<answer> h = gone;
  h | tact::finished_msg;
  system.await_quiescence();
  REQUIRE(gone.finished());
  tact::send_new<answer>(h);  // freed at once (ASan and the leak check see it)
  const tact::worker_stats s = system.stats().total;
  CHECK(s.dead_letters == 1);
  CHECK(s.messages_rejected == 1);
  system.stop();
  delete &gone;  // finished, not deleted: its owner deletes it
}

TEST_CASE("a handle's delete pill deletes the actor whatever its type") {
  tact::actor_system system{{.workers = 1}};
  static std::atomic<int> destroyed{0};
  struct counted : auditor {
    ~counted() override { destroyed.fetch_add(1); }
  };
  tact::handle<answer> h = system.spawn<counted>();
  h | tact::delete_msg;
  system.stop();
  CHECK(destroyed.load() == 1);
}

TEST_CASE("sends through handles keep one message at a time and per-sender FIFO") {
  const std::uint32_t workers = GENERATE(1u, 2u, 8u);
  tact::actor_system system{tact::test::configured({.workers = workers})};
  struct checker : tact::actor {
    std::atomic<bool> busy{false};
    std::uint64_t overlaps = 0;
    tact::test::fifo_check fifo;
    tact::allocation receive(sequenced& m) {
      if (busy.exchange(true, std::memory_order_acquire)) ++overlaps;
      fifo.accept(m);
      busy.store(false, std::memory_order_release);
      return Nodelete;
    }
  };
  struct go : tact::message {};
  // Sends its numbered messages through a handle, one per behaviour.
  struct sender : tact::actor {
    sender(std::uint32_t id, std::uint64_t count, tact::handle<sequenced> to) : target{to} {
      for (std::uint64_t i = 0; i < count; ++i) messages.emplace_back(id, i);
    }
    std::vector<sequenced> messages;
    tact::handle<sequenced> target;
    std::size_t sent = 0;
    go again;
    tact::allocation receive(go&) {
      target | messages[sent++];
      if (sent == messages.size()) return Finished;
      *this | again;
      return Nodelete;
    }
  };
  const std::uint64_t per_sender = tact::test::scaled(20'000);
  checker target;
  std::vector<std::unique_ptr<sender>> senders;
  for (std::uint32_t id = 0; id < 4; ++id)
    senders.push_back(std::make_unique<sender>(id, per_sender, target));
  for (auto& s : senders) *s | s->again;
  system.await_quiescence();
  CHECK(target.overlaps == 0);
  CHECK(target.fifo.received() == 4 * per_sender);
  CHECK(target.fifo.duplicates() == 0);
  CHECK(target.fifo.out_of_order() == 0);
  target | tact::finished_msg;
  system.stop();
  CHECK(tact::test::conservation_of(system));
}

TEST_CASE("ask goes through a handle that names the request") {
  struct square : tact::request<long> {
    long x = 0;
  };
  struct squarer : tact::actor {
    tact::allocation receive(square& q) {
      q.reply(q.x * q.x);
      return Nodelete;
    }
  };
  tact::actor_system system{{.workers = 2}};
  squarer s;
  tact::handle<square> h = s;
  square q;
  q.x = 12;
  CHECK(tact::ask(h, q, 60s).value() == 144);
  CHECK_THROWS_AS(tact::ask(tact::handle<square>{}, q, 60s), std::logic_error);
  s | tact::finished_msg;
  system.stop();
}
