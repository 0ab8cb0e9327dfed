#include <catch2/catch.hpp>

#include <atomic>
#include <cstddef>
#include <new>
#include <vector>

#include <tact/tact.hpp>

namespace {

// Destructor counts per test; frees are counted per class (operator delete
// runs after the object is gone, so it cannot reach per-object state).
struct lifetimes {
  std::atomic<int> destroyed{0};
};

template <class T>
struct counts_frees {
  static inline std::atomic<int> freed{0};
  static void* operator new(std::size_t size) { return ::operator new(size); }
  static void operator delete(void* p, std::size_t) {
    freed.fetch_add(1);
    ::operator delete(p);  // unsized: Clang leaves sized deallocation off
  }
};

struct ping : tact::message {};

struct mortal : tact::actor, counts_frees<mortal> {
  explicit mortal(lifetimes& l, tact::allocation answer = Nodelete) : life{&l}, answer{answer} {}
  ~mortal() override { life->destroyed.fetch_add(1); }
  lifetimes* life;
  tact::allocation answer;
  int received = 0;
  tact::allocation receive(ping&) {
    ++received;
    return answer;
  }
};

struct counted_message : tact::message, counts_frees<counted_message> {
  explicit counted_message(lifetimes& l) : life{&l} {}
  ~counted_message() override { life->destroyed.fetch_add(1); }
  lifetimes* life;
};

struct sink : tact::actor {
  int received = 0;
  tact::allocation receive(counted_message&) {
    ++received;
    return Nodelete;
  }
  tact::allocation receive(ping&) { return Finished; }
};

}  // namespace

TEST_CASE("an actor that returns Delete is destroyed and freed") {
  lifetimes life;
  const int freed_before = mortal::freed;
  tact::actor_system system{{.workers = 2}};
  auto& a = system.spawn<mortal>(life, tact::allocation::Delete);
  ping p;
  a | p;
  system.stop();
  CHECK(life.destroyed == 1);
  CHECK(mortal::freed - freed_before == 1);
}

TEST_CASE("an actor that returns Destroy is destroyed but keeps its storage") {
  lifetimes life;
  const int freed_before = mortal::freed;
  alignas(mortal) std::byte storage[sizeof(mortal)];
  tact::actor_system system{{.workers = 2}};
  auto* a = ::new (storage) mortal(life, tact::allocation::Destroy);
  ping p;
  *a | p;
  system.stop();
  CHECK(life.destroyed == 1);
  CHECK(mortal::freed == freed_before);
}

TEST_CASE("an actor that returns Finished is neither destroyed nor freed") {
  lifetimes life;
  const int freed_before = mortal::freed;
  {
    tact::actor_system system{{.workers = 2}};
    mortal a{life, tact::allocation::Finished};
    ping p;
    a | p;
    system.stop();
    CHECK(a.finished());
    CHECK(a.received == 1);
    CHECK(life.destroyed == 0);
  }
  CHECK(life.destroyed == 1);  // its own scope ended, not the executor
  CHECK(mortal::freed == freed_before);
}

TEST_CASE("a delivered message gets the allocation action it carries") {
  lifetimes deleted;
  lifetimes destroyed;
  lifetimes kept;
  const int freed_before = counted_message::freed;
  alignas(counted_message) std::byte storage[sizeof(counted_message)];
  tact::actor_system system{{.workers = 2}};
  sink s;

  auto* heap = new counted_message{deleted};
  heap->set_allocation(tact::allocation::Delete);
  auto* placed = ::new (storage) counted_message{destroyed};
  placed->set_allocation(tact::allocation::Destroy);
  counted_message nodelete{kept};
  counted_message finished{kept};
  finished.set_allocation(tact::allocation::Finished);

  s | *heap | *placed | nodelete | finished;
  system.await_quiescence();
  CHECK(s.received == 4);
  CHECK(deleted.destroyed == 1);
  CHECK(destroyed.destroyed == 1);
  CHECK(counted_message::freed - freed_before == 1);  // only the Delete one
  CHECK(kept.destroyed == 0);
  CHECK(finished.get_allocation() == tact::allocation::Finished);
  ping done;
  s | done;
  system.stop();
}

TEST_CASE("a message constructed as Finished reads back as Nodelete") {
  struct plain : tact::message {
    plain() : tact::message{tact::allocation::Finished} {}
  };
  plain m;
  CHECK(m.get_allocation() == tact::allocation::Nodelete);
  m.set_allocation(tact::allocation::Finished);
  CHECK(m.get_allocation() == tact::allocation::Finished);
  tact::actor_system system{{.workers = 1}};
  struct taker : tact::actor {
    tact::allocation receive(plain&) { return Finished; }
  } t;
  t | m;  // sent, so its destruction is not reported
  system.stop();
}

TEST_CASE("a poison pill arrives after the messages sent before it") {
  lifetimes life;
  const int freed_before = mortal::freed;
  tact::actor_system system{{.workers = 2}};
  struct counter : mortal {
    using mortal::mortal;
    int* at_death;
    ~counter() override { *at_death = received; }
  };
  int received_at_death = -1;
  auto& c = system.spawn<counter>(life);
  c.at_death = &received_at_death;
  std::vector<ping> pings(100);
  for (ping& p : pings) c | p;
  c | tact::delete_msg;
  system.stop();
  CHECK(received_at_death == 100);
  CHECK(mortal::freed - freed_before == 1);
}

TEST_CASE("every actor type accepts every poison pill") {
  lifetimes life;
  const int freed_before = mortal::freed;
  alignas(mortal) std::byte storage[sizeof(mortal)];
  tact::actor_system system{{.workers = 2}};
  auto& deleted = system.spawn<mortal>(life);
  auto* destroyed = ::new (storage) mortal{life};
  mortal finished{life};
  deleted | tact::delete_msg;
  *destroyed | tact::destroy_msg;
  tact::send(finished, tact::finished_msg);
  system.stop();
  CHECK(life.destroyed == 2);
  CHECK(mortal::freed - freed_before == 1);
  CHECK(finished.finished());
}
