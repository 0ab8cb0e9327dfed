// fibonacci (Savina's "fib", no. 6 of the list in the CAF locality thesis, 6.2.1): computes
// the n-th Fibonacci number with one actor per call of the naive recursion.
// An actor asked for fib(k), k > 2, creates two children, asks them for
// fib(k - 1) and fib(k - 2), adds their answers and sends the sum to its
// parent; k <= 2 answers 1 at once. Every actor exits after answering. It
// measures actor creation and teardown inside behaviours, on every worker at
// once, with short request/response chains and a tree-shaped burst of
// parallelism.
//
// Savina's protocol, kept as is: fib(n) makes 2 fib(n) - 1 actors; each gets
// one Request and all but the root send one Response, so
//   messages = 2 (2 fib(n) - 1) - 1.
//
// Parameters (full / --quick):
//   --n  the index (27 / 20). Savina's default is 25; the CAF locality study
//        (CAF locality thesis, 6.2.1) uses 34 (11 million actors).
//
// Children are made with system().spawn (a `new`) and return Delete once
// they have answered. Each actor carries the Request its parent fills in,
// and a parent keeps the two Response slots its children answer in (a
// child is gone by the time its answer is read, so the answer cannot live
// in the child): no message is allocated. The root is main's, on its stack.
// The timed region runs from the root's Request to quiescence.
#include <cstdint>
#include <optional>
#include <string>

#include <tact/tact.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

struct request : tact::message {
  std::int64_t n = 0;
};
struct response : tact::message {
  std::int64_t value = 0;
};

class fibonacci_actor final : public tact::actor {
 public:
  // The root has no parent: it keeps its result for main.
  explicit fibonacci_actor(tact::actor_system& system) : actor{system} {}
  fibonacci_actor(fibonacci_actor& parent, response& answer)
      : actor{parent.system()}, parent_{&parent}, answer_{&answer} {}

  request ask;  // filled in and sent by whoever made this actor

  std::int64_t result() const noexcept { return result_; }

  tact::allocation receive(request& r) {
    if (r.n <= 2) return answer(1);
    // Made only by actors with children: with checks on, a message that is
    // never sent is reported when it is destroyed.
    answers_[0].emplace();
    answers_[1].emplace();
    fork(r.n - 1, *answers_[0]);
    fork(r.n - 2, *answers_[1]);
    return Nodelete;
  }

  tact::allocation receive(response& r) {
    result_ += r.value;
    return ++answered_ == 2 ? answer(result_) : Nodelete;
  }

 private:
  void fork(std::int64_t n, response& slot) {
    fibonacci_actor& child = system().spawn<fibonacci_actor>(*this, slot);
    child.ask.n = n;
    child | child.ask;
  }

  tact::allocation answer(std::int64_t value) {
    if (parent_ == nullptr) {
      result_ = value;
      return Finished;
    }
    answer_->value = value;
    *parent_ | *answer_;
    return Delete;
  }

  fibonacci_actor* parent_ = nullptr;
  response* answer_ = nullptr;  // the parent's slot for this actor's answer
  std::optional<response> answers_[2];
  std::int64_t result_ = 0;
  int answered_ = 0;
};

using suite::fibonacci::fibonacci;

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::int64_t n = suite::fibonacci::index(o);

  tact::actor_system system{{.workers = o.threads()}};
  fibonacci_actor root{system};
  root.ask.n = n;
  const std::uint64_t before = system.stats().total.messages_processed;
  const double secs = suite::seconds([&] {
    root | root.ask;
    system.await_quiescence();
  });

  const std::uint64_t delivered = system.stats().total.messages_processed - before;
  suite::check(root.finished(), "the root did not finish");
  suite::check(root.result() == fibonacci(n), "fib(" + std::to_string(n) + ") came out as " +
                                                  std::to_string(root.result()) + ", not " +
                                                  std::to_string(fibonacci(n)));
  suite::check(delivered == suite::fibonacci::messages(n),
               "the system delivered " + std::to_string(delivered) + " messages, expected " +
                   std::to_string(suite::fibonacci::messages(n)));
  system.stop();
  suite::report(o, "fibonacci", "tact", secs, delivered);
}
