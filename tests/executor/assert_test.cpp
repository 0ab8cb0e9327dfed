// The engine's own preconditions, checked with checks on (TACT_ASSERT): a
// broken one aborts and says which, and where, instead of corrupting a
// queue. Built only with checks.
#include <catch2/catch.hpp>

#include "mailbox/copy_queue.hpp"
#include "mailbox/work_queue.hpp"
#include "support/in_child.hpp"

using Catch::Matchers::Contains;
using tact::detail::copy_queue;
using tact::detail::envelope;
using tact::detail::work_queue;
using tact::test::in_child;

TEST_CASE("finishing a queue nobody gulped aborts, naming the precondition and its place") {
  const auto outcome = in_child([] {
    work_queue q{4};
    q.finish();
  });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error,
             Contains("tact: bug: a queue is finished by the thread that gulped it"));
  CHECK_THAT(outcome.error, Contains("work_queue::finish"));
  CHECK_THAT(outcome.error, Contains("work_queue.hpp"));
}

TEST_CASE("touching the batch of a queue that is not gulped aborts") {
  const auto outcome = in_child([] {
    work_queue q{4};
    q.post(envelope{nullptr, nullptr, nullptr});
    (void)q.batch();
  });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("a batch is touched only while its queue is gulped"));
}

TEST_CASE("popping an empty copy queue aborts instead of reading past its end") {
  const auto outcome = in_child([] {
    copy_queue q{4};
    q.push(envelope{nullptr, nullptr, nullptr});
    (void)q.pop();
    (void)q.pop();
  });
  CHECK(outcome.aborted);
  CHECK_THAT(outcome.error, Contains("an envelope is popped from a copy queue that has one"));
}

TEST_CASE("a queue used as its preconditions say does not abort") {
  const auto outcome = in_child([] {
    work_queue q{4};
    q.post(envelope{nullptr, nullptr, nullptr});
    if (q.gulp() != work_queue::gulp_result::taken) std::abort();
    (void)q.batch().pop();
    q.finish();
  });
  CHECK_FALSE(outcome.aborted);
  CHECK(outcome.error.empty());
}
