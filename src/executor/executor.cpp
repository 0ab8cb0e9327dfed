#include "executor/executor.hpp"

#include <limits>
#include <mutex>
#include <new>
#include <stdexcept>
#include <utility>

#include <tact/build_config.hpp>
#include <tact/defaults.hpp>

#include "executor/discard_routes.hpp"
#include "executor/seam.hpp"

namespace tact::detail {
namespace {

// The process default: the first executor started while none was running.
std::atomic<executor*> default_executor{nullptr};

// With checks on, every executor from the end of its construction to its
// destruction, linked through next_live_: what live() looks up. The lock
// is constant-initialized and trivially destroyed, so executors made and
// destroyed before main or after it find it working.
constinit std::mutex live_lock;
executor* live_list = nullptr;  // guarded by live_lock

constinit thread_local executor* scoped_executor __attribute__((tls_model("initial-exec"))) =
    nullptr;
// With scoped_executor: the queue its new actors take (a sponsor's), or
// runner::no_queue for round robin.
constinit thread_local std::uint32_t scoped_home __attribute__((tls_model("initial-exec"))) =
    runner::no_queue;

std::uint32_t resolve_workers(const system_config& config) {
  const std::uint32_t workers =
      config.workers.value_or(std::max(1u, std::thread::hardware_concurrency()));
  if (workers == 0)
    throw std::invalid_argument{
        "tact: system_config.workers is 0; ask for at least one worker, or leave it unset for one "
        "per processing unit"};
  return workers;
}

const system_config& validated(const system_config& config) {
  if (config.fiber_stack_size < defaults::fiber_stack_minimum)
    throw std::invalid_argument{
        "tact: system_config.fiber_stack_size is " + std::to_string(config.fiber_stack_size) +
        " bytes, too small for a behaviour to run on; ask for at least " +
        std::to_string(defaults::fiber_stack_minimum) + " (leave it unset for " +
        std::to_string(defaults::fiber_stack_size) + ")"};
  // Each sponsor slot is a queue and a runner, made with the system.
  constexpr std::uint32_t most_sponsors = 1u << 16;
  if (config.sponsors > most_sponsors)
    throw std::invalid_argument{"tact: system_config.sponsors is " +
                                std::to_string(config.sponsors) + "; a system can have at most " +
                                std::to_string(most_sponsors) + " sponsors"};
  return config;
}

std::uint32_t resolve_queues(const system_config& config, std::uint32_t workers) {
  const std::uint32_t queues =
      config.queues.value_or(workers == 1 ? 1 : workers * defaults::queues_per_worker);
  if (queues < workers)
    throw std::invalid_argument{
        "tact: system_config.queues is " + std::to_string(queues) + ", fewer than the " +
        std::to_string(workers) +
        " workers, so some workers would never get work; ask for at least " +
        std::to_string(workers) + " queues, or leave it unset for " +
        std::to_string(defaults::queues_per_worker) + " per worker"};
  return queues;
}

// Worker w owns ownership slots [w·M/N, (w+1)·M/N).
runner::block block_of(std::uint32_t worker, std::uint32_t workers, std::uint32_t queues) {
  const auto first = [&](std::uint32_t w) {
    return static_cast<std::uint32_t>(std::uint64_t{w} * queues / workers);
  };
  return {first(worker), first(worker + 1)};
}

// Behaviours suspended and not resumed yet, from one runner's counters.
// That runner writes both, never more resumptions than suspensions; read
// by another thread while it runs, they may seem to cross.
std::uint64_t suspended(const worker_stats& s) noexcept {
  return s.suspensions > s.resumptions ? s.suspensions - s.resumptions : 0;
}

}  // namespace

executor::executor(const system_config& config, actor_system& owner,
                   const std::function<placement(std::uint32_t workers)>& place,
                   const step_plan* plan)
    : config_{validated(config)},
      owner_{owner},
      worker_count_{resolve_workers(config)},
      queue_count_{resolve_queues(config, worker_count_)},
      placement_{place ? place(worker_count_) : placement{}},
      epochs_{runner_count()},
      quiescence_{worker_count_},
      queues_{queue_count_ + config_.sponsors,
              [&](std::size_t) { return padded<work_queue>{config_.copy_queue_floor}; }},
      ownership_{queue_count_,
                 [&](std::size_t i) { return std::atomic<work_queue*>{&queues_[i]}; }},
      slot_of_{queue_count_,
               [](std::size_t i) { return std::atomic<std::uint32_t>{static_cast<std::uint32_t>(i)}; }},
      workers_{plan != nullptr ? 0 : worker_count_,
               [&](std::size_t i) {
                 const auto w = static_cast<std::uint32_t>(i);
                 return padded<pool_worker>{*this, w, block_of(w, worker_count_, queue_count_),
                                            w < placement_.victim_groups.size()
                                                ? placement_.victim_groups[w]
                                                : std::vector<std::vector<std::uint32_t>>{}};
               }},
      lending_{*this, worker_count_, worker_count_, queue_count_, config_.sponsors},
      active_{worker_count_},
      adaptation_{worker_count_, config_.adapt_every} {
  // The governor needs stealing: without it, placement promises that queues
  // stay with their worker.
  const bool adapts = plan == nullptr && stealing() && config_.adapt_every.count() > 0;
  adaptation_.since = std::chrono::steady_clock::now().time_since_epoch().count();
  adaptation_.due.store(adapts ? adaptation_.since + config_.adapt_every.count()
                               : std::numeric_limits<std::int64_t>::max(),
                        std::memory_order_relaxed);
  if (!placement_.unavailable.empty())
    report(diagnostic_kind::topology_unavailable, placement_.unavailable);
  if (placement_.place_memory)
    for (std::uint32_t w = 0; w < worker_count_; ++w) {
      const runner::block b = block_of(w, worker_count_, queue_count_);
      placement_.place_memory(w, &queues_[b.first], (b.last - b.first) * sizeof(queues_[0]));
    }
  if (plan != nullptr) {
    if (worker_count_ != 1)
      throw std::invalid_argument{"tact: a deterministic executor has one worker"};
    stepper_ = std::make_unique<stepper>(*this, *plan);
  } else {
    threads_.reserve(worker_count_);
    try {
      for (std::uint32_t w = 0; w < worker_count_; ++w)
        threads_.emplace_back([this, w] {
          start_worker(w);
          workers_[w].run();
        });
    } catch (...) {
      join_workers();
      throw;
    }
  }
  executor* none = nullptr;
  default_executor.compare_exchange_strong(none, this, std::memory_order_acq_rel);
  if constexpr (build::checks) {
    const std::lock_guard guard{live_lock};
    next_live_ = std::exchange(live_list, this);
  }
}

// On worker `index`'s own thread, before it runs: pinning, and on a NUMA
// machine the first chunks of its queues, allocated by this thread so that
// they come from its node.
void executor::start_worker(std::uint32_t index) {
  if (placement_.bind_worker && !placement_.bind_worker(index) &&
      !unbound_reported_.exchange(true, std::memory_order_relaxed))
    report(diagnostic_kind::topology_unavailable,
           "could not pin worker " + std::to_string(index) +
               " to its processing unit; workers that could not be pinned run unbound");
  if (placement_.place_memory) {
    const runner::block b = block_of(index, worker_count_, queue_count_);
    for (std::uint32_t q = b.first; q < b.last; ++q) queues_[q].allocate_here();
  }
}

executor::~executor() {
  stop();
  if constexpr (build::checks) {
    refuse_to_be_outlived();
    const std::lock_guard guard{live_lock};
    executor** link = &live_list;
    while (*link != this) link = &(*link)->next_live_;
    *link = next_live_;
  }
  executor* self = this;
  default_executor.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
}

bool executor::live(const executor* ex) noexcept {
  const std::lock_guard guard{live_lock};
  for (const executor* e = live_list; e != nullptr; e = e->next_live_)
    if (e == ex) return true;
  return false;
}

// What may outlive a system is in docs/concepts.md, "Lifetimes". A sponsor
// may not: its destructor releases its runner here. Nor may a classic
// actor that has not finished: its destructor counts it here (stop()
// waited for every other one, so these are the actors a sponsor abandoned,
// or those a deterministic stop() left). Both are caught now, while the
// program can still be told which rule it broke, rather than as a use of
// freed memory later. A deterministic system halted by a failing test
// leaves its actors behind on purpose, and is let go.
void executor::refuse_to_be_outlived() const noexcept {
  if (const std::uint32_t held = lending_.sponsors_held(); held > 0)
    lifetime_violated(std::to_string(held) +
                      " sponsor(s) of an actor_system were still alive when the system was "
                      "destroyed; destroy a sponsor before its system (declare it after the "
                      "system)");
  if (stepper_ && stepper_->halted()) return;
  if (const std::uint64_t alive = unfinished_actors(); alive > 0)
    lifetime_violated(
        std::to_string(alive) +
        " actor(s) that had not finished were still alive when their actor_system was destroyed "
        "(abandoned by a sponsor destroyed before they finished, or left by a deterministic "
        "system's stop()); their destructors would reach the destroyed system, so destroy them "
        "first");
}

std::uint32_t executor::discard(std::uint32_t index) noexcept {
  const std::uint32_t dropped = queues_[index].discard(drop_unrun);
  foreign_.discarded.fetch_add(dropped, std::memory_order_relaxed);
  return dropped;
}

executor* executor::ambient() noexcept {
  if (scoped_executor != nullptr) return scoped_executor;
  if (this_thread_runner != nullptr) return &this_thread_runner->owner();
  return default_executor.load(std::memory_order_acquire);
}

void executor::set_scope(executor* scope, std::uint32_t home) noexcept {
  scoped_executor = scope;
  scoped_home = home;
}
executor* executor::scope() noexcept { return scoped_executor; }
std::uint32_t executor::scope_home() noexcept { return scoped_home; }

std::uint32_t executor::home_in_scope() const noexcept {
  return scoped_executor == this ? scoped_home : runner::no_queue;
}

std::uint32_t executor::admit(bool beside) {
  if (stopping())
    throw std::logic_error{"tact: an actor was created on an actor_system that has stopped"};
  if (runner* self = this_runner())
    self->counters.actors_created.add();
  else
    foreign_.created.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t home = home_in_scope();
  if (home == runner::no_queue) return new_home(beside);
  if (lending_.sponsored(home)) lending_.bind(home);
  return home;
}

void executor::actor_finished(std::uint32_t home) noexcept {
  count(tally::actor_finished);
  if (lending_.sponsored(home)) lending_.unbind(home);
}

std::uint32_t executor::queue_on_worker(std::uint32_t worker) noexcept {
  const runner::block b = block_of(worker, worker_count_, queue_count_);
  const std::uint32_t turn = foreign_.placed.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t slot = b.first + turn % (b.last - b.first);
  const work_queue* q = ownership_[slot].load(std::memory_order_acquire);
  return q != nullptr ? index_of(*q) : slot;
}

std::uint32_t executor::worker_holding(std::uint32_t queue) const noexcept {
  if (queue >= queue_count_) return runner::no_queue;
  const work_queue* q = &queues_[queue];
  for (std::uint32_t w = 0; w < worker_count_; ++w) {
    const runner::block b = block_of(w, worker_count_, queue_count_);
    for (std::uint32_t slot = b.first; slot < b.last; ++slot)
      if (ownership_[slot].load(std::memory_order_acquire) == q) return w;
  }
  return runner::no_queue;
}

std::uint32_t executor::new_home(bool beside) noexcept {
  runner* self = this_runner();
  return self != nullptr ? self->new_actor_home(beside) : next_queue();
}

void executor::post_held(runner& self, std::uint32_t queue, const envelope* e, std::uint32_t n,
                         copy_queue::backup& backup) noexcept {
  self.counters.messages_sent.add(n);
  queues_[queue].post_held(e, n, backup).wake();
}

void executor::post_now(runner& self, std::uint32_t queue, void* target, void* message,
                        run_fn run) {
  const work_queue::sleepers woken = queues_[queue].post(envelope{target, message, run});
  self.counters.messages_sent.add();
  woken.wake();
}

void executor::post_to_mailbox(runner* self, std::uint32_t queue, void* target, void* message,
                               run_fn run) {
  // Counted once queued: a post whose queue cannot grow throws, unsent.
  // A sponsor's queue (beyond queue_count_) is run by its sponsor only.
  if (self != nullptr) {
    if (queue < queue_count_ && self->post_claimed(queues_[queue], queue, target, message, run)) {
      self->counters.messages_sent.add();
      return;
    }
    if (self->hold_send(queue, target, message, run)) return;
    return post_now(*self, queue, target, message, run);
  }
  const work_queue::sleepers woken = queues_[queue].post(envelope{target, message, run});
  foreign_.sent.fetch_add(1, std::memory_order_relaxed);
  // A post from another thread may race stop(): one that found the
  // receiver open (or the system not stopping) before the workers were
  // joined, and queues after stop() discarded this queue, would stay
  // queued for good. stop() sets discarding_ before it takes each
  // queue's lock to discard it; we load it after releasing that lock
  // from our post (both sequentially consistent). If we read false, our
  // lock section came first and stop() finds the envelope; if true, we
  // discard the queue ourselves (each envelope is taken out under its
  // lock, so it goes once).
  // No worker is left to wake.
  if (discarding_.load(std::memory_order_seq_cst)) [[unlikely]]
    return discard_late(queue);
  woken.wake();
}

// A send that joins the sends the outbox holds for its queue goes no
// further (see runner::hold_again): a leaf, before the executor's path
// and the registers it saves.
void post_to_mailbox(executor& ex, runner* self, std::uint32_t queue, void* target, void* message,
                     run_fn run) {
  if (self != nullptr) {
    self->close_unchecked_merges();  // the batch's sends no longer all merge
    if (self->hold_again(queue, target, message, run)) return;
  }
  ex.post_to_mailbox(self, queue, target, message, run);
}

void post_share(executor& ex, runner& self, std::uint32_t queue, void* target, void* message,
                run_fn run) {
  self.close_unchecked_merges();
  ex.post_now(self, queue, target, message, run);
}

void executor::discard_late(std::uint32_t queue) noexcept {
  const std::uint32_t dropped = discard(queue);
  if (dropped == 0) return;
  report_made(*this, diagnostic_kind::messages_unreceived, [dropped] {
    return std::to_string(dropped) +
           " message(s) sent while the system stopped were never received";
  });
}

void executor::count(tally what) noexcept {
  static constexpr counter worker_counters::*fields[tally_count] = {
      &worker_counters::actors_finished, &worker_counters::dead_letters,
      &worker_counters::messages_rejected, &worker_counters::sends_waited,
      &worker_counters::sends_over_bound,  &worker_counters::sends_dropped};
  if (runner* self = this_runner())
    (self->counters.*fields[static_cast<std::size_t>(what)]).add();
  else
    foreign_.of(what).fetch_add(1, std::memory_order_relaxed);
}

void executor::report(diagnostic_kind kind, std::string text,
                      std::exception_ptr error) const noexcept {
  if (!config_.on_diagnostic) return;
  // A handler that throws (the default one out of memory, say) loses its
  // report: it runs where nothing may throw.
  try {
    config_.on_diagnostic(diagnostic{kind, std::move(text), std::move(error)});
  } catch (...) {
  }
}

void executor::note_unsent_message() noexcept {
  if (foreign_.unsent_messages.fetch_add(1, std::memory_order_relaxed) != 0) return;
  report_made(*this, diagnostic_kind::message_never_sent, [] {
    return std::string{
        "a message was destroyed without ever being sent (an allocation that could be removed, "
        "or a message touched after it was freed?); further ones are counted and reported when "
        "the system stops. A message that may go unsent says so with allow_unsent()"};
  });
}

// Keeps a pass open (see quiescence) while work waits, and wakes a parked
// worker to retry it: the work may have been kept by a thread outside the
// pool while every worker sleeps.
void executor::postponed_begins() noexcept {
  quiescence_.pass_begins();
  postponed_.store(true, std::memory_order_seq_cst);
  for (pool_worker& w : workers_) {
    if (w.parked_state() == parker::running) continue;
    w.wake();
    break;
  }
}

void executor::postponed_ends() noexcept {
  postponed_.store(false, std::memory_order_seq_cst);
  quiescence_.pass_ends();
}

void executor::note_memory_wait(const char* what) noexcept {
  const std::uint64_t n = foreign_.memory_waits.fetch_add(1, std::memory_order_relaxed) + 1;
  if ((n & (n - 1)) != 0) return;
  report_made(*this, diagnostic_kind::out_of_memory, [what, n] {
    return std::string{"out of memory: "} + what + "; it waits and is retried (" +
           std::to_string(n) + (n == 1 ? " piece" : " pieces") + " of work so far)";
  });
}

// The runners that stand for the system's workers in its statistics: the
// pool workers, or the stepper's.
template <class F>
void executor::for_each_worker(F&& f) const {
  if (stepper_)
    f(stepper_->stepping_runner());
  else
    for (const pool_worker& w : workers_) f(static_cast<const runner&>(w));
}

template <class F>
void executor::for_each_runner(F&& f) const {
  for_each_worker(f);
  lending_.for_each_runner(f);
}

system_stats executor::stats() const {
  system_stats s;
  s.since = started_;
  s.taken = std::chrono::steady_clock::now();
  s.workers.reserve(worker_count_);
  s.load.reserve(worker_count_);
  for_each_worker([&](const runner& r) {
    s.workers.push_back(r.counters.snapshot());
    s.total += s.workers.back();
    worker_load& load = s.load.emplace_back();
    // Null while a thief swaps the slot: its queue is counted by nobody.
    for (std::uint32_t slot = r.owned().first; slot < r.owned().last; ++slot)
      if (const work_queue* q = ownership_[slot].load(std::memory_order_relaxed))
        load.queued += q->queued();
    load.suspended = suspended(s.workers.back());
    s.queued += load.queued;
    s.suspended += load.suspended;
  });
  for (std::uint32_t w = 0; w < workers_.size(); ++w) {
    const parker::state state = workers_[w].parked_state();
    s.load[w].parked = state != parker::running;
    s.load[w].resting = state == parker::resting;
  }
  lending_.for_each_runner([&](const runner& r) {
    const worker_stats counted = r.counters.snapshot();
    s.total += counted;
    s.suspended += suspended(counted);
  });
  for (std::uint32_t q = queue_count_; q < queues_.size(); ++q)  // the sponsors' queues
    s.queued += queues_[q].queued();
  s.live_actors = live_actors();
  s.total.actors_created += foreign_.created.load(std::memory_order_relaxed);
  s.total.messages_sent += foreign_.sent.load(std::memory_order_relaxed);
  s.total.actors_finished += foreign_.of(tally::actor_finished);
  s.total.dead_letters += foreign_.of(tally::dead_letter);
  s.total.messages_rejected += foreign_.of(tally::rejected);
  s.total.sends_waited += foreign_.of(tally::sends_waited);
  s.total.sends_over_bound += foreign_.of(tally::over_bound);
  s.total.sends_dropped += foreign_.of(tally::dropped_full);
  s.total.messages_discarded += foreign_.discarded.load(std::memory_order_relaxed);
  s.total.memory_waits += foreign_.memory_waits.load(std::memory_order_relaxed);
  return s;
}

// Loads each state after our waker's decrement of the parked count
// (sequentially consistent on both sides): a watcher that decided to sleep
// because it saw everyone parked did so before that decrement, so we see
// it sleeping.
void executor::keep_watch() noexcept {
  pool_worker* sleeper = nullptr;
  for (pool_worker& w : workers_) {
    const parker::state s = w.parked_state();
    if (s == parker::watching) return;
    if (sleeper == nullptr && s == parker::sleeping) sleeper = &w;
  }
  if (sleeper != nullptr) sleeper->wake();
}

bool executor::register_covered(std::uint32_t worker, sleeper* w) noexcept {
  // Sequentially consistent: a change of the count that wakes us either
  // comes before this load (we register on the new blocks) or after our
  // parker's `parking` store, which that wake then sees (see
  // set_active).
  // Each registration also checks, under the queue's lock, that the count
  // is still the one read here: else a registration made late, after the
  // count changed and the queue's new sweeper registered, would overwrite
  // that sweeper's, and this worker, giving up parking, would not sweep the
  // queue again (spin found this with two changes of the count).
  bool registered = true;
  const std::uint32_t active = active_.load(std::memory_order_seq_cst);
  for_each_covered(worker, active, [&](std::uint32_t first, std::uint32_t last) {
    for (std::uint32_t slot = first; slot < last && registered; ++slot) {
      // Null: the resting worker's own swap (it may not have rested yet)
      // is in flight. Look again.
      work_queue* q = ownership_[slot].load(std::memory_order_seq_cst);
      registered = q != nullptr && q->register_waiter(w, &ownership_[slot], &active_, active);
    }
  });
  return registered;
}

bool executor::others_rest() const noexcept {
  for (std::uint32_t w = 1; w < worker_count_; ++w)
    if (workers_[w].parked_state() != parker::resting) return false;
  return true;
}

void executor::wake_covering(std::uint32_t worker) noexcept {
  const std::uint32_t by = covering(worker);
  if (by != worker) workers_[by].wake();
}

// One thread at a time holds the turn; the others go on at once. An
// epoch's work is the messages run plus the messages sent, summed from
// every worker's counters (one line each, once per epoch) and the sends
// of other threads. Runs alone miss the work of a behaviour that floods:
// on one worker the flood's receiver runs only once the flooder's long
// behaviour ends, so an epoch at one worker ran almost nothing, however
// fast it sent. Sends alone miss a receiver that falls behind: on two
// workers a flooder sends as fast as it can while the backlog grows.
//
// Epochs are measured on a clock that stops while every worker is parked
// (quiescence::idle): the system has nothing to run then, at any count,
// and an epoch that spanned the spell weighed the work around it over
// the idle time as well. Bursts of message-bound work a few milliseconds
// apart (requests, frames, a timer's rounds) then looked like little
// work: every idle spell brought every worker back, and each burst ran
// its first epochs at the count the governor had left. While the
// workers all park, no epoch ends (a resting worker's look finds them
// all parked); the epoch in progress goes on with the next work.
void executor::adapt_when_due(std::chrono::steady_clock::time_point now) noexcept {
  adaptation& a = adaptation_;
  const std::int64_t at = now.time_since_epoch().count() - quiescence_.idle();
  if (at < a.due.load(std::memory_order_relaxed) ||
      a.turn.exchange(true, std::memory_order_acquire))
    return;
  if (at >= a.due.load(std::memory_order_relaxed) && !quiescence_.all_parked()) {
    std::uint64_t work = foreign_.sent.load(std::memory_order_relaxed);
    for_each_runner([&](const runner& r) {
      work += r.counters.messages_processed.get() + r.counters.messages_sent.get();
    });
    const std::uint64_t messages = work >= a.work ? work - a.work : 0;
    const std::uint32_t active =
        a.decide.decide(messages, std::chrono::nanoseconds{at - a.since}, take_sharing());
    a.work = work;
    a.since = at;
    a.weighed.store(a.weighed.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    a.due.store(at + config_.adapt_every.count(), std::memory_order_relaxed);
    if (active != active_.load(std::memory_order_relaxed)) change_active(active);
  }
  a.turn.store(false, std::memory_order_release);
}

governor::sharing executor::take_sharing() noexcept {
  const std::uint8_t seen = adaptation_.waiting.exchange(0, std::memory_order_relaxed);
  return (seen & saw_two) != 0           ? governor::sharing::some
         : (seen & saw_one_at_most) != 0 ? governor::sharing::none
         : seen != 0                     ? governor::sharing::pending
                                         : governor::sharing::unknown;
}

// A count set by hand holds for solo turns from the start (see past_mark()).
void executor::set_active(std::uint32_t active) noexcept {
  adaptation_.by_hand.store(true, std::memory_order_relaxed);
  change_active(active);
}

// The new count, then a wake for every worker: one that now rests parks
// as resting, one that runs again sweeps its own queues, and every one
// that parks again registers on the blocks it covers now. Sequentially
// consistent with a parking worker's `parking` store and its load of the
// count in register_covered: it either registers with the new count or
// is woken.
//
// All of it inside a pass (see quiescence): between the store and its
// wake, a worker the count brings back still rests, counted parked,
// while the worker that covered it already sees the new count and parks
// registered on its own queues only. Mail posted to the resting worker's
// queues then wakes nobody until our wake reaches it, and without the
// pass every worker could count parked meanwhile (the caller itself may
// be a resting worker, see pool_worker::rest): await_quiescence() would
// return with that mail queued. Once the pass ends, every worker has
// been woken and must park again to count.
void executor::change_active(std::uint32_t active) noexcept {
  TACT_ASSERT(active >= 1 && active <= worker_count_ && config_.adapt_every.count() > 0,
              "a count of running workers between 1 and the workers, with the governor on");
  quiescence_.pass_begins();
  active_.store(active, std::memory_order_seq_cst);
  for (pool_worker& w : workers_) w.wake();
  quiescence_.pass_ends();
}

void executor::refuse_from_runner(const char* what) const {
  if (this_runner() != nullptr)
    throw std::logic_error{std::string{"tact: "} + what +
                           " called from a behaviour of the same system; a worker cannot wait for "
                           "itself"};
}

void executor::await_quiescence() {
  refuse_from_runner("await_quiescence()");
  if (stepper_) {
    while (stepper_->run_one()) {
    }
    return;
  }
  while (!stopped()) {
    const std::uint32_t epoch = quiescence_.epoch();
    if (quiescence_.reached()) return;
    quiescence_.await_change(epoch);
  }
}

// Read at quiescence: every worker's counters were published by its
// fetch_add on the parked count, which our load of N synchronizes with.
// Finished before created, so a race with another thread can only
// overestimate the actors (and keep stop() waiting), never miss one.
std::uint64_t executor::unfinished_actors() const noexcept {
  const std::uint64_t finished =
      foreign_.of(tally::actor_finished) + sum(&worker_counters::actors_finished);
  const std::uint64_t created =
      foreign_.created.load(std::memory_order_acquire) + sum(&worker_counters::actors_created);
  // More finished than created only after a program destroyed an actor
  // while its poison pill was still queued (reported on its own).
  return created > finished ? created - finished : 0;
}

std::uint64_t executor::live_actors() const noexcept {
  const std::uint64_t unfinished = unfinished_actors();
  const std::uint64_t abandoned = lending_.abandoned();
  return unfinished > abandoned ? unfinished - abandoned : 0;
}

std::uint64_t executor::sum(counter worker_counters::*field) const noexcept {
  std::uint64_t n = 0;
  for_each_runner([&](const runner& r) { n += (r.counters.*field).get(); });
  return n;
}

void executor::wait_until_finished() {
  constexpr const char* remedy =
      "; send them finished_msg or delete_msg (or return Finished or Delete)";
  if (stepper_) {
    // Nobody else can send: run what is queued, and leave the actors that
    // are still alive then to their owner (timers do not keep a system
    // alive, here as with threads).
    while (stepper_->run_one()) {
    }
    if (const std::uint64_t live = live_actors(); live > 0)
      report(diagnostic_kind::idle_with_live_actors,
             "stop() ran every queued message and leaves " + std::to_string(live) +
                 " actor(s) that have not finished" + remedy);
    return;
  }
  bool reported = false;
  for (;;) {
    const std::uint32_t epoch = quiescence_.epoch();
    if (quiescence_.reached()) {
      const std::uint64_t live = live_actors();
      if (live == 0) return;
      if (!reported && promised_posts_.load(std::memory_order_relaxed) == 0) {
        report(diagnostic_kind::idle_with_live_actors,
               "stop() is waiting for " + std::to_string(live) +
                   " actor(s) that have not finished, but no message is queued or running, so "
                   "only a send from another thread can finish them" + remedy);
        reported = true;
      }
    }
    // Returns once the system has been busy and is quiescent again.
    quiescence_.await_change(epoch);
  }
}

void executor::join_workers() noexcept {
  stopping_.store(true, std::memory_order_seq_cst);
  for (pool_worker& w : workers_) w.wake();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  // Lent threads finish the batch in hand and take no more.
  lending_.await_returned();
}

void executor::stop(const std::function<void()>& before_join) {
  refuse_from_runner("stop()");
  std::lock_guard guard{stop_mutex_};
  if (stopped()) return;
  wait_until_finished();
  if (before_join) before_join();
  join_workers();
  if constexpr (build::checks) {
    std::uint32_t hungry = 0;
    for (std::uint32_t w = 0; w < workers_.size(); ++w) hungry += workers_[w].hungry() ? 1u : 0u;
    TACT_ASSERT(hungry == hungry_workers_.load(std::memory_order_relaxed),
                "the count of hungry workers counts each hungry spell once");
  }
  // Sends still waiting for memory: refused now, as sends to a stopping
  // system are (dead letters).
  if (postponed_.load(std::memory_order_seq_cst)) postponed_work_.refuse(postponed_work_.arg);
  // Replaced behaviours, while the executor is whole: their destructors
  // may drop actor references, and a send from one is a dead letter.
  epochs_.clear();
  std::uint64_t queued = 0;
  discarding_.store(true, std::memory_order_seq_cst);  // see post_to_mailbox
  for (std::uint32_t q = 0; q < queues_.size(); ++q) queued += discard(q);
  // From the join on, nothing may throw: the workers are gone, so a stop()
  // left halfway could never be completed. Out of memory, the reports go.
  try {
    const std::uint64_t dead =
        sum(&worker_counters::dead_letters) + foreign_.of(tally::dead_letter);
    if (queued + dead > 0)
      report(diagnostic_kind::messages_unreceived,
             std::to_string(queued + dead) + " message(s) were sent but never received: " +
                 std::to_string(queued) + " still queued at shutdown (their allocation actions " +
                 "did not run), " + std::to_string(dead) +
                 " sent to or delivered after a finished actor (dead letters)");
    if (const std::uint64_t unsent = foreign_.unsent_messages.load(std::memory_order_relaxed);
        unsent > 1)
      report(diagnostic_kind::message_never_sent,
             std::to_string(unsent) + " messages in all were destroyed without ever being sent");
  } catch (const std::bad_alloc&) {
  }
  stopped_.store(true, std::memory_order_release);
  quiescence_.advance();
  executor* self = this;
  default_executor.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
}

}  // namespace tact::detail
