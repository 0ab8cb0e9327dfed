// counting (Savina's "count", no. 3 of the list in the CAF locality thesis, 6.2.1): a
// producer sends `messages` increments to a counter in one burst, then asks
// it for its count. It measures the raw throughput of one mailbox: the
// producer sends far faster than anything is received, so the counter's queue
// grows to hold the whole burst and the counter then drains it (on another
// worker, at two workers, while it is still being filled).
//
// Savina's protocol: main sends Increment to the producer, which sends
// `messages` Increments to the counter, then Retrieve; the counter answers
// Result with its count and exits; the producer checks it and exits. In all
//   1 start + messages Increment + 1 Retrieve + 1 Result.
//
// Parameters (full / --quick):
//   --messages  increments (10,000,000 / 500,000). Savina's default is
//               1,000,000; the CAF locality thesis (6.2.1) uses
//               10,000,000.
//   --bound     the counter's mailbox bound (actor::bound_mailbox); 0:
//               none. With one, the producer's loop waits whenever the
//               counter is that far behind, and the queue holds at most
//               that many increments. The default is COUNTING_BOUND: 0 for
//               counting, 65,536 (1.5 MB of queue) for counting_bounded,
//               built from this file.
//
// The producer sends one Increment object again and again (tact never copies
// a message and it carries nothing, so one object may be queued any number
// of times); the counter's copy queue holds 24 bytes per queued message, so
// the full burst peaks at about 240 MB. The timed region runs from the start
// message to quiescence.
#include <cstdint>
#include <string>

#include <tact/tact.hpp>

#include "params.hpp"
#include "suite.hpp"

#ifndef COUNTING_BOUND
#define COUNTING_BOUND 0
#endif

namespace {

class producer;

struct start_msg : tact::message {};
struct increment : tact::message {};
struct retrieve : tact::message {
  producer* sender = nullptr;
};
struct result : tact::message {
  std::uint64_t count = 0;
};

class counter final : public tact::actor {
 public:
  counter(tact::actor_system& system, std::uint32_t bound) : actor{system} {
    if (bound != 0) bound_mailbox(bound);
  }

  std::uint64_t received() const noexcept { return received_; }

  tact::allocation receive(increment&) {
    ++received_;
    ++count_;
    return Nodelete;
  }
  inline tact::allocation receive(retrieve& m);

 private:
  std::uint64_t count_ = 0;
  std::uint64_t received_ = 0;
  result result_;
};

class producer final : public tact::actor {
 public:
  producer(tact::actor_system& system, counter& target, std::uint64_t messages)
      : actor{system}, counter_{target}, messages_{messages} {
    retrieve_.sender = this;
  }

  std::uint64_t received() const noexcept { return received_; }
  std::uint64_t counted() const noexcept { return counted_; }

  tact::allocation receive(start_msg&) {
    ++received_;
    for (std::uint64_t i = 0; i < messages_; ++i) counter_ | increment_;
    counter_ | retrieve_;
    return Nodelete;
  }
  tact::allocation receive(result& m) {
    ++received_;
    counted_ = m.count;
    return Finished;
  }

 private:
  counter& counter_;
  const std::uint64_t messages_;
  std::uint64_t received_ = 0;
  std::uint64_t counted_ = 0;
  increment increment_;
  retrieve retrieve_;
};

tact::allocation counter::receive(retrieve& m) {
  ++received_;
  result_.count = count_;
  *m.sender | result_;
  return Finished;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::uint64_t n = suite::counting::increments(o);
  const auto bound = o.param("bound", COUNTING_BOUND, COUNTING_BOUND);
  suite::check(bound >= 0 && bound <= 0xffffffff, "--bound must be a 32-bit count");

  tact::actor_system system{{.workers = o.threads()}};
  counter target{system, static_cast<std::uint32_t>(bound)};
  producer source{system, target, n};
  start_msg start;
  const double secs = suite::seconds([&] {
    source | start;
    system.await_quiescence();
  });

  const std::uint64_t delivered = source.received() + target.received();
  suite::check(source.finished() && target.finished(), "an actor did not finish");
  suite::check(source.counted() == n, "the counter counted " + std::to_string(source.counted()) +
                                          " of " + std::to_string(n) + " increments");
  const std::uint64_t expected = suite::counting::messages(n);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  const tact::worker_stats stats = system.stats().total;
  suite::check(stats.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  suite::check(bound != 0 || stats.sends_waited == 0, "a send waited with no bound");
  system.stop();
  suite::report(o, suite::bench_name("counting"), "tact", secs, delivered);
}
