// nqueens (Savina's "nqueenk", no. 19 of the list in the CAF locality thesis, 6.2.1): counts
// the placements of n queens on an n x n board. A master hands work items
// (partial boards) round robin to `workers` workers; a worker given a board
// shallower than `threshold` sends the master one new item per valid next
// row, and searches deeper boards sequentially itself, sending the master one
// Result per solution. It measures a dynamic divide-and-conquer through a
// central dispatcher: work appears while the run goes on, all of it passes
// through one actor, and the search itself is most of the time.
//
// Savina's protocol, with one simplification: Savina stops once a
// solutions limit is reached (1,500,000, more than n = 14 has), so with
// these sizes it never triggers and is left out; the run always finds every
// solution, which is checked against Savina's table. Each worker tells the
// master when an item is done; when every item sent is done, the master
// stops the workers, each acknowledges, and the master exits. Message
// priorities (a Savina option most engines lack) are left out. In all
//   1 first item + 2 items (to the master and on to a worker)
//   + (items + 1) Done + solutions Result + 2 workers (Stop and its
//   acknowledgement),
// where items, the valid boards of depth 1..threshold, is counted in main
// (params.hpp).
//
// Parameters (full / --quick):
//   --n          board size (13 / 11). Savina's default is 12; the CAF
//                locality study uses 14.
//   --workers    workers (20 / 20). Savina's default is 20; the CAF
//                locality study uses 100.
//   --threshold  depth from which a worker searches sequentially (4 / 4),
//                as in both.
//
// Work items are made as the search goes (a `new` each, as every engine
// must: how many there will be is not known in advance), and each is one
// message object for its whole life: the worker that makes it sends it to
// the master, the master forwards it to a worker, and that worker sends it
// back when done (Savina's DoneMessage), after which the master deletes it.
// A Result carries nothing, so each worker sends the same one each time.
// The timed region covers creating the actors and the run to quiescence.
// The report gives no time per message: the search is nearly all the time.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "board.hpp"
#include "params.hpp"
#include "suite.hpp"

namespace {

class master;

// A work item, and then the news that it is done.
struct work_msg : tact::message {
  explicit work_msg(const nqueens::board& b) noexcept : board{b} {}
  nqueens::board board;
  bool done = false;
};
struct result_msg : tact::message {};
struct stop_msg : tact::message {};

class worker final : public tact::actor {
 public:
  worker(tact::actor_system& system, master& boss, int size, int threshold)
      : actor{system}, master_{boss}, size_{size}, threshold_{threshold} {}

  std::uint64_t received() const noexcept { return received_; }

  inline tact::allocation receive(work_msg& w);
  inline tact::allocation receive(stop_msg&);

 private:
  master& master_;
  const int size_;
  const int threshold_;
  std::uint64_t received_ = 0;
  result_msg result_;
  stop_msg stopped_;
};

class master final : public tact::actor {
 public:
  master(tact::actor_system& system, std::int64_t workers) : actor{system}, workers_{workers} {}

  // Savina's onPostStart: the first item, to the first worker. From main,
  // once the workers exist.
  void start(std::vector<std::unique_ptr<worker>>& crew) {
    crew_ = &crew;
    send_work(*new work_msg{nqueens::board{}});
  }

  std::uint64_t received() const noexcept { return received_; }
  std::int64_t solutions() const noexcept { return solutions_; }
  std::int64_t items() const noexcept { return sent_ - 1; }

  tact::allocation receive(work_msg& w) {
    ++received_;
    if (!w.done) {
      send_work(w);
      return Nodelete;
    }
    w.set_allocation(Delete);  // back from its worker: its last delivery
    if (++completed_ == sent_)
      for (auto& c : *crew_) *c | stop_;
    return Nodelete;
  }
  tact::allocation receive(result_msg&) {
    ++received_;
    ++solutions_;
    return Nodelete;
  }
  // A worker's acknowledgement of Stop.
  tact::allocation receive(stop_msg&) {
    ++received_;
    return ++stopped_ == workers_ ? Finished : Nodelete;
  }

 private:
  void send_work(work_msg& w) {
    *(*crew_)[next_] | w;
    next_ = (next_ + 1) % crew_->size();
    ++sent_;
  }

  const std::int64_t workers_;
  std::vector<std::unique_ptr<worker>>* crew_ = nullptr;
  std::size_t next_ = 0;
  std::int64_t sent_ = 0;
  std::int64_t completed_ = 0;
  std::int64_t solutions_ = 0;
  std::int64_t stopped_ = 0;
  std::uint64_t received_ = 0;
  stop_msg stop_;
};

tact::allocation worker::receive(work_msg& w) {
  ++received_;
  const nqueens::board& b = w.board;
  if (b.depth == size_) {
    master_ | result_;
  } else if (b.depth >= threshold_) {
    nqueens::solve_sequentially(b, size_, [this] { master_ | result_; });
  } else {
    for (int column = 0; column < size_; ++column) {
      const nqueens::board next = b.with(column);
      if (nqueens::valid(next)) master_ | *new work_msg{next};
    }
  }
  w.done = true;
  master_ | w;
  return Nodelete;
}

tact::allocation worker::receive(stop_msg&) {
  ++received_;
  master_ | stopped_;
  return Finished;
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const suite::nqueens::params p = suite::nqueens::read(o);
  const int size = static_cast<int>(p.n);

  tact::actor_system system{{.workers = o.threads()}};
  std::unique_ptr<master> boss;
  std::vector<std::unique_ptr<worker>> crew;
  const double secs = suite::seconds([&] {
    boss = std::make_unique<master>(system, p.workers);
    for (std::int64_t i = 0; i < p.workers; ++i)
      crew.push_back(std::make_unique<worker>(system, *boss, size, static_cast<int>(p.threshold)));
    boss->start(crew);
    system.await_quiescence();
  });

  const std::int64_t expected_solutions = suite::nqueens::solutions(p);
  suite::check(boss->solutions() == expected_solutions, std::to_string(boss->solutions()) +
                                                            " solutions found, expected " +
                                                            std::to_string(expected_solutions));
  const std::int64_t items = suite::nqueens::items(p);
  suite::check(boss->items() == items, std::to_string(boss->items()) +
                                           " work items made, expected " + std::to_string(items));
  std::uint64_t delivered = boss->received();
  suite::check(boss->finished(), "the master did not finish");
  for (const auto& c : crew) {
    suite::check(c->finished(), "a worker did not stop");
    delivered += c->received();
  }
  const std::uint64_t expected = suite::nqueens::messages(p);
  suite::check(delivered == expected, "the actors received " + std::to_string(delivered) +
                                          " messages, expected " + std::to_string(expected));
  suite::check(system.stats().total.messages_processed == delivered,
               "the system delivered a different number of messages than the actors received");
  system.stop();
  // The search is nearly all the time: a time per message would mean little.
  suite::report(o, "nqueens", "tact", secs, 0);
}
