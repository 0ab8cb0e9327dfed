#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <vector>

#include "mailbox/work_queue.hpp"

using tact::detail::envelope;
using tact::detail::work_queue;
using gulp = work_queue::gulp_result;

namespace {

envelope numbered(std::uintptr_t n) {
  return envelope{reinterpret_cast<void*>(n), nullptr, nullptr};
}
std::uintptr_t number_of(const envelope& e) { return reinterpret_cast<std::uintptr_t>(e.target); }

// Stands for a parked worker: the queue only stores and returns the pointer.
struct parked final : tact::detail::sleeper {
  void wake() noexcept override {}
};

}  // namespace

TEST_CASE("a gulp takes the whole mailbox and leaves it empty for new posts") {
  work_queue q{16};
  for (std::uintptr_t i = 0; i < 5; ++i) q.post(numbered(i));
  REQUIRE_FALSE(q.looks_empty());
  REQUIRE(q.gulp() == gulp::taken);
  CHECK(q.being_processed());
  CHECK(q.looks_empty());
  REQUIRE(q.batch().size() == 5);

  q.post(numbered(99));  // arrives while the batch is processed
  CHECK(q.batch().size() == 5);
  CHECK_FALSE(q.looks_empty());
  for (std::uintptr_t i = 0; i < 5; ++i) REQUIRE(number_of(q.batch().pop()) == i);
  q.finish();
  CHECK_FALSE(q.being_processed());

  REQUIRE(q.gulp() == gulp::taken);
  REQUIRE(q.batch().size() == 1);
  CHECK(number_of(q.batch().pop()) == 99);
  q.finish();
}

TEST_CASE("a queue being processed is not gulped again until it is finished") {
  work_queue q{16};
  q.post(numbered(1));
  REQUIRE(q.gulp() == gulp::taken);
  q.post(numbered(2));
  CHECK(q.gulp() == gulp::busy);  // the thesis's missed gulp
  q.batch().pop();
  q.finish();
  REQUIRE(q.gulp() == gulp::taken);
  CHECK(number_of(q.batch().pop()) == 2);
  q.finish();
}

TEST_CASE("an empty queue is not gulped") {
  work_queue q{16};
  CHECK(q.looks_empty());
  CHECK(q.gulp() == gulp::empty);
  CHECK_FALSE(q.being_processed());
}

TEST_CASE("a waiter registered on an empty queue is handed to the next post, once") {
  work_queue q{16};
  parked storage;
  REQUIRE(q.register_waiter(&storage, nullptr));
  CHECK(q.post(numbered(1)).waiter == &storage);
  CHECK(q.post(numbered(2)).waiter == nullptr);
}

TEST_CASE("a queue with mail refuses to register a waiter") {
  work_queue q{16};
  parked storage;
  q.post(numbered(1));
  CHECK_FALSE(q.register_waiter(&storage, nullptr));
  CHECK(q.post(numbered(2)).waiter == nullptr);
}

// A worker registers through the ownership slot it loaded; if a thief has
// swapped the queue out of that slot since, the thief owns it and may have
// registered already: a late registration must not take its place.
TEST_CASE("a registration through a slot that no longer holds the queue is refused") {
  work_queue q{16};
  work_queue other{16};
  parked previous_owner;
  parked thief;
  std::atomic<work_queue*> thief_slot{&q};
  std::atomic<work_queue*> previous_slot{&other};  // q was swapped out of it
  REQUIRE(q.register_waiter(&thief, &thief_slot));
  CHECK_FALSE(q.register_waiter(&previous_owner, &previous_slot));
  CHECK(q.post(numbered(1)).waiter == &thief);
}

TEST_CASE("a holder and a waiter registered on one queue are both handed to the next post") {
  work_queue q{16};
  parked owner;
  parked holder;
  q.post(numbered(1));
  REQUIRE(q.gulp() == gulp::taken);
  (void)q.batch().pop();
  REQUIRE(q.register_waiter(&owner, nullptr));
  REQUIRE(q.register_holder(&holder));
  const auto woken = q.post(numbered(2));
  CHECK(woken.waiter == &owner);
  CHECK(woken.holder == &holder);
  const auto again = q.post(numbered(3));
  CHECK(again.waiter == nullptr);
  CHECK(again.holder == nullptr);
  CHECK_FALSE(q.register_holder(&holder));  // mail is waiting
}

TEST_CASE("a held queue hands later mail to its holder and stays processed") {
  work_queue q{16};
  tact::detail::copy_queue held{16};
  q.post(numbered(1));
  REQUIRE(q.gulp() == gulp::taken);
  CHECK(number_of(q.batch().pop()) == 1);
  CHECK_FALSE(q.regulp(held));  // nothing came
  q.post(numbered(2));
  q.post(numbered(3));
  REQUIRE(q.regulp(held));
  CHECK(q.being_processed());
  CHECK(q.looks_empty());
  CHECK(q.gulp() == gulp::busy);
  CHECK(number_of(held.pop()) == 2);
  CHECK(number_of(held.pop()) == 3);
  CHECK(held.empty());
  q.post(numbered(4));  // the mailbox now uses the holder's old array
  REQUIRE(q.regulp(held));
  CHECK(number_of(held.pop()) == 4);
  q.finish();
  CHECK_FALSE(q.being_processed());
}

TEST_CASE("discarding a queue drops and counts what is still queued") {
  work_queue q{16};
  for (std::uintptr_t i = 0; i < 7; ++i) q.post(numbered(i));
  CHECK(q.discard([](const tact::detail::envelope&) noexcept { return 1u; }) == 7);
  CHECK(q.looks_empty());
  CHECK(q.gulp() == gulp::empty);
}

TEST_CASE("a batch cut short is gulped again first, as it is, and the mail that came since after it") {
  const std::uintptr_t batched = GENERATE(1u, 3u, 20u);
  const std::uintptr_t later = GENERATE(0u, 1u, 7u, 40u);
  INFO(batched << " left in the batch, " << later << " posted meanwhile");
  work_queue q{2};
  for (std::uintptr_t i = 0; i < batched + 2; ++i) q.post(numbered(i));
  REQUIRE(q.gulp() == gulp::taken);
  CHECK(q.take_fresh() == batched + 2);
  CHECK(q.take_fresh() == 0);  // counted once
  // Two run, then the batch is cut short.
  for (std::uintptr_t i = 0; i < 2; ++i) REQUIRE(number_of(q.batch().pop()) == i);
  for (std::uintptr_t i = 0; i < later; ++i) q.post(numbered(1000 + i));
  parked owner;
  if (later == 0) REQUIRE(q.register_waiter(&owner, nullptr));
  tact::detail::sleeper* const to_wake = q.pause();
  CHECK(to_wake == (later == 0 ? &owner : nullptr));  // registered before the mail came
  CHECK_FALSE(q.being_processed());
  CHECK(q.queued() == batched + later);
  CHECK_FALSE(q.register_waiter(&owner, nullptr));  // the rest of the batch is mail
  q.post(numbered(5000));
  CHECK(q.queued() == batched + later + 1);

  REQUIRE(q.gulp() == gulp::taken);
  CHECK(q.take_fresh() == 0);  // counted at the first gulp
  CHECK(q.mail_behind());  // no appends to this batch now
  CHECK(q.queued() == later + 1);
  REQUIRE(q.batch().size() == batched);
  for (std::uintptr_t i = 0; i < batched; ++i) CHECK(number_of(q.batch().pop()) == i + 2);
  q.finish();

  REQUIRE(q.gulp() == gulp::taken);
  CHECK(q.take_fresh() == later + 1);
  CHECK_FALSE(q.mail_behind());
  for (std::uintptr_t i = 0; i < later; ++i) CHECK(number_of(q.batch().pop()) == 1000 + i);
  CHECK(number_of(q.batch().pop()) == 5000);
  q.finish();
  CHECK(q.gulp() == gulp::empty);
}

// post() counts the pending mail up by one instead of asking the mailbox
// its size: the count must stay exact when the mailbox spans many chunks,
// around a batch cut short, and after the gulps that take both back.
TEST_CASE("the pending count stays exact over a mailbox of many chunks and a batch cut short") {
  work_queue q{4};
  constexpr std::uintptr_t first = 5'000;
  for (std::uintptr_t i = 0; i < first; ++i) {
    q.post(numbered(i));
    REQUIRE(q.queued() == i + 1);
  }
  REQUIRE(q.gulp() == gulp::taken);
  CHECK(q.queued() == 0);
  REQUIRE(q.batch().size() == first);
  for (std::uintptr_t i = 0; i < 1'000; ++i) REQUIRE(number_of(q.batch().pop()) == i);
  constexpr std::uintptr_t later = 3'000;
  for (std::uintptr_t i = 0; i < later; ++i) q.post(numbered(first + i));
  CHECK(q.queued() == later);
  (void)q.pause();  // 4,000 carried, 3,000 behind them
  CHECK(q.queued() == first - 1'000 + later);
  q.post(numbered(first + later));
  CHECK(q.queued() == first - 1'000 + later + 1);
  REQUIRE(q.gulp() == gulp::taken);  // the carried batch, as it is
  CHECK(q.queued() == later + 1);
  for (std::uintptr_t i = 1'000; i < first; ++i) REQUIRE(number_of(q.batch().pop()) == i);
  q.finish();
  REQUIRE(q.gulp() == gulp::taken);  // then the mailbox
  CHECK(q.queued() == 0);
  for (std::uintptr_t i = first; i <= first + later; ++i) REQUIRE(number_of(q.batch().pop()) == i);
  CHECK(q.batch().empty());
  q.finish();
  CHECK(q.looks_empty());
}

TEST_CASE("a batch cut short and taken up again with no mail behind it may take appends") {
  work_queue q{4};
  for (std::uintptr_t i = 0; i < 3; ++i) q.post(numbered(i));
  REQUIRE(q.gulp() == gulp::taken);
  (void)q.batch().pop();
  (void)q.pause();
  REQUIRE(q.gulp() == gulp::taken);
  CHECK_FALSE(q.mail_behind());
  CHECK(q.batch().size() == 2);
  while (!q.batch().empty()) (void)q.batch().pop();
  q.finish();
}

TEST_CASE("discarding a queue drops the rest of a batch cut short first, then its mailbox") {
  work_queue q{4};
  for (std::uintptr_t i = 0; i < 6; ++i) q.post(numbered(i));
  REQUIRE(q.gulp() == gulp::taken);
  (void)q.batch().pop();
  for (std::uintptr_t i = 6; i < 9; ++i) q.post(numbered(i));
  (void)q.pause();
  std::vector<std::uintptr_t> dropped;
  CHECK(q.discard([&](const envelope& e) noexcept {
    dropped.push_back(number_of(e));
    return 1u;
  }) == 8);
  CHECK(dropped == std::vector<std::uintptr_t>{1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(q.looks_empty());
  CHECK(q.gulp() == gulp::empty);
  parked owner;
  CHECK(q.register_waiter(&owner, nullptr));
}

// ---- claims (see runner::post_claimed) ----

TEST_CASE("a claim takes the mailbox as the batch, its own envelope last, and wakes nobody") {
  work_queue q{16};
  q.post(numbered(1));  // earlier mail from someone else: ahead of the claimer's
  REQUIRE(q.claim(numbered(2), false));
  CHECK(q.being_processed());
  CHECK(q.looks_empty());  // nothing left for a sweep or a thief to take
  REQUIRE(q.batch().size() == 2);
  CHECK(number_of(q.batch().at(0)) == 1);
  CHECK(number_of(q.batch().at(1)) == 2);
  CHECK(q.take_fresh() == 2);
  CHECK_FALSE(q.mail_behind());
  // Mail posted while the batch is claimed waits in the mailbox.
  q.post(numbered(3));
  CHECK(q.gulp() == gulp::busy);
  q.batch().pop();
  q.batch().pop();
  q.finish();
  REQUIRE(q.gulp() == gulp::taken);
  CHECK(number_of(q.batch().pop()) == 3);
  q.finish();
}

// A claimed batch can be handed back before it runs (the claimer's batch
// turned out a flood): its mail is counted by whoever takes it up.
TEST_CASE("mail handed back before anyone counted it is counted when the batch is taken up") {
  work_queue q{16};
  q.post(numbered(1));
  REQUIRE(q.claim(numbered(2), false));
  q.post(numbered(3));
  CHECK(q.pause() == nullptr);
  REQUIRE(q.gulp() == gulp::taken);  // the claimed batch, as it was
  CHECK(q.take_fresh() == 2);
  CHECK(q.take_fresh() == 0);
  CHECK(number_of(q.batch().pop()) == 1);
  CHECK(number_of(q.batch().pop()) == 2);
  q.finish();
  REQUIRE(q.gulp() == gulp::taken);
  CHECK(q.take_fresh() == 1);
  CHECK(number_of(q.batch().pop()) == 3);
  q.finish();
}

TEST_CASE("a claim leaves a parked owner registered, so later mail still wakes it") {
  work_queue q{16};
  parked owner;
  REQUIRE(q.register_waiter(&owner, nullptr));
  REQUIRE(q.claim(numbered(1), true));  // the owner sleeps: it may be claimed
  CHECK(q.post(numbered(2)).waiter == &owner);
  q.batch().pop();
  q.finish();
}

TEST_CASE("a queue being processed, or holding a batch cut short, is not claimed") {
  work_queue q{16};
  q.post(numbered(1));
  REQUIRE(q.gulp() == gulp::taken);
  CHECK_FALSE(q.claim(numbered(2), false));  // busy: nothing changed
  CHECK(q.batch().size() == 1);
  CHECK(q.looks_empty());
  q.batch().pop();
  q.finish();

  for (std::uintptr_t i = 10; i < 13; ++i) q.post(numbered(i));
  REQUIRE(q.gulp() == gulp::taken);
  q.batch().pop();
  (void)q.pause();  // 11 and 12 wait for the next gulp
  CHECK_FALSE(q.claim(numbered(13), false));
  CHECK(q.queued() == 2);
  REQUIRE(q.gulp() == gulp::taken);
  CHECK(number_of(q.batch().pop()) == 11);
  CHECK(number_of(q.batch().pop()) == 12);
  q.finish();
}

TEST_CASE("a claim only while the owner sleeps is refused when nobody is registered") {
  work_queue q{16};
  CHECK_FALSE(q.claim(numbered(1), true));
  CHECK(q.looks_empty());
  CHECK_FALSE(q.being_processed());
  CHECK(q.claim(numbered(1), false));
  q.batch().pop();
  q.finish();
}

TEST_CASE("a claim handed back goes to the next gulp as a batch cut short, and wakes the owner") {
  work_queue q{16};
  parked owner;
  REQUIRE(q.register_waiter(&owner, nullptr));
  REQUIRE(q.claim(numbered(1), true));
  q.batch().push(numbered(2));  // the claimer's next send joins the batch
  q.post(numbered(3));          // someone else's waits behind it
  CHECK(q.pause() == nullptr);  // the post above took the registration
  REQUIRE(q.gulp() == gulp::taken);
  CHECK(q.mail_behind());
  CHECK(number_of(q.batch().pop()) == 1);
  CHECK(number_of(q.batch().pop()) == 2);
  q.finish();
  REQUIRE(q.gulp() == gulp::taken);
  CHECK(number_of(q.batch().pop()) == 3);
  q.finish();

  REQUIRE(q.register_waiter(&owner, nullptr));
  REQUIRE(q.claim(numbered(4), true));
  CHECK(q.pause() == &owner);  // handed back with no post since: wake the owner
  REQUIRE(q.gulp() == gulp::taken);
  CHECK(number_of(q.batch().pop()) == 4);
  q.finish();
}
