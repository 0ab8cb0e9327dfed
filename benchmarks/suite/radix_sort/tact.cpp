// radix_sort (Savina's "radixsort", no. 22 of the list in the CAF locality thesis, 6.2.1):
// `values` random values flow through a pipeline of one sort actor per bit,
// least significant first; a stage passes a value whose bit is clear straight
// on and holds the others back until it has seen every value, then sends them
// on in arrival order, so the values reach the end sorted. It measures a long
// pipeline: each value crosses every stage, so messages far outnumber the
// work per message, and the stages can run in parallel on different workers.
//
// Savina's protocol, kept as is: the source draws each value as Savina's
// PseudoRandom.nextLong() mod max_value (seed 2048), so values have 16
// bits and the stages for higher bits pass everything straight on, as in
// Savina; a validator at the end receives the values in order. Main
// replays the draws and checks that the validator received exactly the
// sorted sequence. In all
//   1 start + values * (stages + 1), stages = the bits below max_value.
//
// Parameters (full / --quick):
//   --values     values sorted (100,000 / 5,000), Savina's default; the
//                CAF locality study uses 400,000.
//   --max_value  exclusive bound of the values, a power of two (2^60 /
//                2^60), as in both: 60 stages.
//   --bound      system_config::mailbox_bound for every actor; 0, the
//                default: none. With one, the source and the stages wait
//                for room in the next stage instead of flooding it
//                (docs/flow_control.md, "Measured").
//
// Each value is one message object that travels the whole pipeline (tact
// never copies a message, and a stage holds a value back by its address),
// so the source allocates one array of them before it starts. The timed
// region covers creating the actors and the run to quiescence.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "params.hpp"
#include "savina.hpp"
#include "suite.hpp"

namespace {

// IntSourceActor's draw.
using suite::radix_sort::draw;
using suite::radix_sort::seed;

struct value_msg : tact::message {
  std::int64_t value = 0;
};
struct start_msg : tact::message {};

// The end of the pipeline: keeps what arrives, in order.
class validator final : public tact::actor {
 public:
  validator(tact::actor_system& system, std::size_t values) : actor{system}, values_{values} {
    seen_.reserve(values);
  }

  const std::vector<std::int64_t>& seen() const noexcept { return seen_; }

  tact::allocation receive(value_msg& m) {
    seen_.push_back(m.value);
    return seen_.size() == values_ ? Finished : Nodelete;
  }

 private:
  const std::size_t values_;
  std::vector<std::int64_t> seen_;
};

class sort_stage final : public tact::actor {
 public:
  // After the stage for the next higher bit, or after the last stage, the
  // validator: exactly one of the two is given.
  sort_stage(tact::actor_system& system, std::size_t values, std::int64_t radix, sort_stage* next,
             validator* end)
      : actor{system}, values_{values}, radix_{radix}, next_{next}, end_{end} {
    held_.reserve(values);
  }

  std::uint64_t received() const noexcept { return received_; }

  tact::allocation receive(value_msg& m) {
    ++received_;
    if ((m.value & radix_) == 0)
      pass_on(m);
    else
      held_.push_back(&m);
    if (received_ < values_) return Nodelete;
    for (value_msg* held : held_) pass_on(*held);
    return Finished;
  }

 private:
  void pass_on(value_msg& m) {
    if (next_ != nullptr)
      *next_ | m;
    else
      *end_ | m;
  }

  const std::size_t values_;
  const std::int64_t radix_;
  sort_stage* const next_;
  validator* const end_;
  std::vector<value_msg*> held_;  // values whose bit is set, in arrival order
  std::uint64_t received_ = 0;
};

class source final : public tact::actor {
 public:
  source(tact::actor_system& system, std::size_t values, std::int64_t max_value, sort_stage& first)
      : actor{system}, values_(values), max_value_{max_value}, first_{first} {}

  tact::allocation receive(start_msg&) {
    suite::savina::pseudo_random random{seed};
    for (value_msg& v : values_) {
      v.value = draw(random, max_value_);
      first_ | v;
    }
    return Finished;
  }

 private:
  std::vector<value_msg> values_;  // all in flight at once: never resized
  const std::int64_t max_value_;
  sort_stage& first_;
};

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::radix_sort::params p = suite::radix_sort::read(o);
  const auto n = static_cast<std::size_t>(p.values);

  const auto bound = o.param("bound", 0, 0);
  suite::check(bound >= 0 && bound <= 0xffffffff, "--bound must be a 32-bit count");
  tact::actor_system system{
      {.workers = o.threads(), .mailbox_bound = static_cast<std::uint32_t>(bound)}};
  std::unique_ptr<validator> end;
  std::vector<std::unique_ptr<sort_stage>> stages;  // highest bit first
  std::unique_ptr<source> feed;
  start_msg start;
  const double secs = suite::seconds([&] {
    end = std::make_unique<validator>(system, n);
    for (std::int64_t radix = p.max_value / 2; radix > 0; radix /= 2)
      stages.push_back(std::make_unique<sort_stage>(system, n, radix,
                                                    stages.empty() ? nullptr : stages.back().get(),
                                                    stages.empty() ? end.get() : nullptr));
    feed = std::make_unique<source>(system, n, p.max_value, *stages.back());
    *feed | start;
    system.await_quiescence();
  });

  const std::vector<std::int64_t> expected = suite::radix_sort::expected_values(p);
  suite::check(end->finished() && end->seen() == expected,
               "the validator did not receive the values sorted");
  std::uint64_t delivered = 1 + end->seen().size();
  for (const auto& s : stages) {
    suite::check(s->finished(), "a stage did not finish");
    delivered += s->received();
  }
  const std::uint64_t expected_messages = suite::radix_sort::messages(p, stages.size());
  suite::check(delivered == expected_messages, "the actors received " + std::to_string(delivered) +
                                                   " messages, expected " +
                                                   std::to_string(expected_messages));
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  suite::report(o, "radix_sort", "tact", secs, delivered);
}
