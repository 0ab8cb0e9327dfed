// concurrent_dictionary (Savina's "concdict", no. 9 of the list in the CAF locality
// thesis, 6.2.1): one actor owns a hash map; `workers` workers each send it
// `requests` requests, one at a time, each a write (`write_percent` per cent)
// or a read of a random key, and wait for the answer before sending the next.
// It measures one contended actor that answers every worker: requests arrive
// from every worker at once, and every answer goes back to a different actor.
//
// Savina's protocol, kept as is: a master creates the dictionary and the
// workers and sends each worker DoWork; a worker sends a request on DoWork
// and on each answer, until it has had `requests` answers, then tells the
// master it is done and exits; the master, when all are done, sends the
// dictionary EndWork; both exit. Keys and values come from Savina's
// PseudoRandom seeded with id + requests + write_percent per worker, as in
// the CAF team's C++ port (so keys are 16-bit; the map starts with Savina's
// 524,287 entries k -> k, built before the timed region). In all
//   workers DoWork + 2 workers requests (request and answer)
//   + workers Done + 1 EndWork.
//
// Parameters (full / --quick):
//   --workers        workers (100 / 20). Savina's default is 20; the CAF
//                    locality thesis (6.2.1) uses 100.
//   --requests       requests per worker (20,000 / 1,000). Savina's default
//                    is 10,000, the CAF locality study's 50,000.
//   --write_percent  share of writes (10 / 10), as in both.
//
// Each worker owns one request object and the dictionary answers in it,
// sending the same object back (tact's request-and-reply-in-one-object
// idiom): a worker has one request in flight at a time, so nothing is
// allocated per request. Main does the master's start (Savina's
// onPostStart): it creates the actors and sends each worker DoWork. The
// timed region covers that and the run to quiescence.
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <tact/tact.hpp>

#include "reference.hpp"
#include "savina.hpp"
#include "suite.hpp"

namespace {

using suite::dictionary::data_limit;
using suite::dictionary::data_map;

class worker;
class master;

// A request, and then its answer, in one object.
struct request : tact::message {
  bool write = false;
  std::int32_t key = 0;
  std::int32_t value = 0;  // to write; in the answer, the value read or written
  worker* sender = nullptr;
};
struct do_work : tact::message {};
struct done : tact::message {};
struct end_work : tact::message {};

class dictionary final : public tact::actor {
 public:
  dictionary(tact::actor_system& system, data_map initial)
      : actor{system}, map_{std::move(initial)} {}

  std::uint64_t received() const noexcept { return received_; }
  std::size_t size() const noexcept { return map_.size(); }
  std::int64_t writes() const noexcept { return writes_; }

  inline tact::allocation receive(request& r);
  tact::allocation receive(end_work&) {
    ++received_;
    return Finished;
  }

 private:
  data_map map_;
  std::uint64_t received_ = 0;
  std::int64_t writes_ = 0;
};

class master final : public tact::actor {
 public:
  master(tact::actor_system& system, dictionary& dict, std::int64_t workers)
      : actor{system}, dictionary_{dict}, workers_{workers} {}

  std::uint64_t received() const noexcept { return received_; }

  tact::allocation receive(done&) {
    ++received_;
    if (++done_ < workers_) return Nodelete;
    dictionary_ | end_;
    return Finished;
  }

 private:
  dictionary& dictionary_;
  const std::int64_t workers_;
  std::int64_t done_ = 0;
  std::uint64_t received_ = 0;
  end_work end_;
};

class worker final : public tact::actor {
 public:
  worker(tact::actor_system& system, master& boss, dictionary& dict, std::int64_t id,
         std::int64_t requests, std::int64_t write_percent)
      : actor{system},
        master_{boss},
        dictionary_{dict},
        requests_{requests},
        write_percent_{write_percent},
        random_{id + requests + write_percent} {
    request_.sender = this;
  }

  std::uint64_t received() const noexcept { return received_; }
  std::int64_t answers() const noexcept { return answers_; }

  tact::allocation receive(do_work&) {
    ++received_;
    return next();
  }
  // The dictionary's answer.
  tact::allocation receive(request&) {
    ++received_;
    ++answers_;
    return next();
  }

 private:
  tact::allocation next() {
    if (++count_ > requests_) {
      master_ | done_;
      return Finished;
    }
    request_.write = random_.next_int(100) < write_percent_;
    if (request_.write) {
      request_.key = random_.next_int() % data_limit;
      request_.value = random_.next_int();
    } else {
      request_.key = random_.next_int() % data_limit;
    }
    dictionary_ | request_;
    return Nodelete;
  }

  master& master_;
  dictionary& dictionary_;
  const std::int64_t requests_;
  const std::int64_t write_percent_;
  suite::savina::pseudo_random random_;
  std::int64_t count_ = 0;
  std::int64_t answers_ = 0;
  std::uint64_t received_ = 0;
  request request_;
  done done_;
};

tact::allocation dictionary::receive(request& r) {
  ++received_;
  if (r.write) {
    ++writes_;
    map_[r.key] = r.value;
  } else {
    const auto found = map_.find(r.key);
    r.value = found == map_.end() ? -1 : found->second;
  }
  *r.sender | r;
  return Nodelete;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::dictionary::params p = suite::dictionary::read(o);
  data_map initial = suite::dictionary::initial_data();

  tact::actor_system system{{.workers = o.threads()}};
  std::unique_ptr<dictionary> dict;
  std::unique_ptr<master> boss;
  std::vector<std::unique_ptr<worker>> crew;
  do_work start;
  const double secs = suite::seconds([&] {
    dict = std::make_unique<dictionary>(system, std::move(initial));
    boss = std::make_unique<master>(system, *dict, p.workers);
    crew.reserve(static_cast<std::size_t>(p.workers));
    for (std::int64_t i = 0; i < p.workers; ++i)
      crew.push_back(
          std::make_unique<worker>(system, *boss, *dict, i, p.requests, p.write_percent));
    for (auto& w : crew) *w | start;
    system.await_quiescence();
  });

  std::uint64_t delivered = dict->received() + boss->received();
  for (const auto& w : crew) {
    suite::check(w->finished() && w->answers() == p.requests,
                 "a worker had " + std::to_string(w->answers()) + " of " +
                     std::to_string(p.requests) + " answers");
    delivered += w->received();
  }
  suite::check(dict->finished() && boss->finished(), "the dictionary or the master did not exit");
  const std::int64_t writes =
      suite::dictionary::expected_writes(p.workers, p.requests, p.write_percent);
  suite::check(dict->writes() == writes, "the dictionary took " + std::to_string(dict->writes()) +
                                             " writes, expected " + std::to_string(writes));
  // Keys are below 65,536 and the map starts with every key below
  // data_limit: writes replace, never add.
  suite::check(dict->size() == static_cast<std::size_t>(data_limit),
               "the dictionary holds " + std::to_string(dict->size()) + " entries");
  const std::uint64_t expected = suite::dictionary::messages(p);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  suite::report(o, "concurrent_dictionary", "tact", secs, delivered);
}
