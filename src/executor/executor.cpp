#include "executor/executor.hpp"

#include <array>
#include <new>
#include <stdexcept>

#include "support/futex.hpp"

namespace tact::detail {
namespace {

// Envelopes discard() hands to their actor model (see on_discard).
struct discard_handler {
  run_fn run;
  void (*drop)(const envelope&) noexcept;
};
std::array<std::atomic<discard_handler*>, 4> discard_table{};

void discard_handlers(const envelope& e) noexcept {
  for (const auto& slot : discard_table)
    if (const discard_handler* h = slot.load(std::memory_order_acquire); h != nullptr && h->run == e.run)
      return h->drop(e);
}

// The process default: the first executor started while none was running.
std::atomic<executor*> default_executor{nullptr};

constinit thread_local executor* scoped_executor __attribute__((tls_model("initial-exec"))) =
    nullptr;
// With scoped_executor: the queue its new actors take (a sponsor's), or
// worker::no_queue for round robin.
constinit thread_local std::uint32_t scoped_home __attribute__((tls_model("initial-exec"))) =
    worker::no_queue;

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
  if (config.collision_limit == 0)
    throw std::invalid_argument{
        "tact: system_config.collision_limit is 0; a transactional message must be allowed at "
        "least one become race before its actor is serialized (leave it unset for " +
        std::to_string(defaults::collision_limit) + ")"};
  if (config.fiber_stack_size < defaults::fiber_stack_minimum)
    throw std::invalid_argument{
        "tact: system_config.fiber_stack_size is " + std::to_string(config.fiber_stack_size) +
        " bytes, too small for a behaviour to run on; ask for at least " +
        std::to_string(defaults::fiber_stack_minimum) + " (leave it unset for " +
        std::to_string(defaults::fiber_stack_size) + ")"};
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

// Worker w owns ownership slots [first_slot(w), first_slot(w + 1)).
std::uint32_t first_slot(std::uint32_t worker, std::uint32_t workers, std::uint32_t queues) {
  return static_cast<std::uint32_t>(std::uint64_t{worker} * queues / workers);
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
      queues_{queue_count_ + defaults::sponsors,
              [&](std::size_t) { return padded<work_queue>{config_.copy_queue_floor}; }},
      ownership_{queue_count_,
                 [&](std::size_t i) { return std::atomic<work_queue*>{&queues_[i]}; }},
      workers_{worker_count_, [&](std::size_t i) {
                 const auto w = static_cast<std::uint32_t>(i);
                 return padded<worker>{
                     *this, w, first_slot(w, worker_count_, queue_count_),
                     first_slot(w + 1, worker_count_, queue_count_),
                     w < placement_.victim_groups.size() ? placement_.victim_groups[w]
                                                         : std::vector<std::vector<std::uint32_t>>{}};
               }},
      guests_{worker_count_ + defaults::sponsors,
              [&](std::size_t i) {
                return padded<worker>{*this, worker_count_ + static_cast<std::uint32_t>(i), 0u, 0u,
                                      std::vector<std::vector<std::uint32_t>>{}};
              }},
      guest_taken_{worker_count_, [](std::size_t) { return std::atomic<bool>{false}; }},
      sponsor_taken_{defaults::sponsors, [](std::size_t) { return std::atomic<bool>{false}; }},
      epochs_{2 * worker_count_ + defaults::sponsors} {
  if (!placement_.unavailable.empty())
    report(diagnostic_kind::topology_unavailable, placement_.unavailable);
  if (placement_.place_memory)
    for (std::uint32_t w = 0; w < worker_count_; ++w) {
      const std::uint32_t first = first_slot(w, worker_count_, queue_count_);
      const std::uint32_t last = first_slot(w + 1, worker_count_, queue_count_);
      placement_.place_memory(w, &queues_[first], (last - first) * sizeof(queues_[0]));
    }
  if (plan != nullptr) {
    if (worker_count_ != 1)
      throw std::invalid_argument{"tact: a deterministic executor has one worker"};
    stepper_ = std::make_unique<stepper>(*this, workers_[0], *plan);
  }
  threads_.reserve(worker_count_);
  if (!stepper_) try {
    for (std::uint32_t w = 0; w < worker_count_; ++w)
      threads_.emplace_back([this, w] {
        start_worker(w);
        workers_[w].run();
      });
  } catch (...) {
    join_workers();
    throw;
  }
  executor* none = nullptr;
  default_executor.compare_exchange_strong(none, this, std::memory_order_acq_rel);
}

// On worker `index`'s own thread, before it runs: pinning, and on a NUMA
// machine the first arrays of its queues, allocated by this thread so that
// they come from its node.
void executor::start_worker(std::uint32_t index) {
  if (placement_.bind_worker && !placement_.bind_worker(index) &&
      !unbound_reported_.exchange(true, std::memory_order_relaxed))
    report(diagnostic_kind::topology_unavailable,
           "could not pin worker " + std::to_string(index) +
               " to its processing unit; workers that could not be pinned run unbound");
  if (placement_.place_memory) {
    const std::uint32_t first = first_slot(index, worker_count_, queue_count_);
    const std::uint32_t last = first_slot(index + 1, worker_count_, queue_count_);
    for (std::uint32_t q = first; q < last; ++q) queues_[q].allocate_here();
  }
}

executor::~executor() {
  stop();
  executor* self = this;
  default_executor.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
}

void executor::on_discard(run_fn run, void (*drop)(const envelope&) noexcept) noexcept {
  auto* handler = new discard_handler{run, drop};  // lives as long as the process
  for (auto& slot : discard_table) {
    discard_handler* none = nullptr;
    if (slot.compare_exchange_strong(none, handler, std::memory_order_acq_rel)) return;
  }
  delete handler;  // the table is sized for the actor models there are
}

executor* executor::ambient() noexcept {
  if (scoped_executor != nullptr) return scoped_executor;
  if (this_thread_worker != nullptr) return &this_thread_worker->owner();
  return default_executor.load(std::memory_order_acquire);
}

void executor::set_scope(executor* scope, std::uint32_t home) noexcept {
  scoped_executor = scope;
  scoped_home = home;
}
executor* executor::scope() noexcept { return scoped_executor; }
std::uint32_t executor::scope_home() noexcept { return scoped_home; }

std::uint32_t executor::home_in_scope() const noexcept {
  return scoped_executor == this ? scoped_home : worker::no_queue;
}

std::uint32_t executor::admit() {
  if (stopping())
    throw std::logic_error{"tact: an actor was created on an actor_system that has stopped"};
  const std::uint32_t home = home_in_scope();
  if (worker* self = this_worker()) {
    self->counters.actors_created.add();
    return home != worker::no_queue ? home : self->next_ticket();
  }
  foreign_.created.fetch_add(1, std::memory_order_relaxed);
  if (home != worker::no_queue) return home;
  return foreign_.ticket.fetch_add(1, std::memory_order_relaxed) % queue_count_;
}

void executor::post_to_mailbox(worker* self, std::uint32_t queue, void* target, void* message,
                               run_fn run) {
  // Counted once queued: a post whose queue cannot grow throws, unsent.
  const work_queue::sleepers woken = queues_[queue].post(envelope{target, message, run});
  if (self != nullptr) {
    self->counters.messages_sent.add();
  } else {
    foreign_.sent.fetch_add(1, std::memory_order_relaxed);
    // A post from another thread may race stop(): one that found the
    // receiver open (or the system not stopping) before the workers were
    // joined, and queues after stop() discarded this queue, would stay
    // queued for good. stop() sets discarding_ before it takes each
    // queue's lock to discard it; we load it after releasing that lock
    // from our post (both sequentially consistent). If we read false, our
    // lock section came first and stop() finds the envelope; if true, we
    // discard the queue ourselves (under its lock: an envelope goes once).
    // No worker is left to wake.
    if (discarding_.load(std::memory_order_seq_cst)) [[unlikely]]
      return discard_late(queue);
  }
  if (woken.waiter != nullptr) woken.waiter->wake();
  if (woken.holder != nullptr) [[unlikely]]
    woken.holder->wake();
}

void executor::discard_late(std::uint32_t queue) noexcept {
  const std::uint32_t dropped = queues_[queue].discard(discard_handlers);
  if (dropped == 0) return;
  foreign_.discarded.fetch_add(dropped, std::memory_order_relaxed);
  try {
    report(diagnostic_kind::messages_unreceived,
           std::to_string(dropped) + " message(s) sent while the system stopped were never "
           "received (their allocation actions did not run)");
  } catch (const std::bad_alloc&) {
  }
}

void executor::count_finished() noexcept {
  if (worker* self = this_worker())
    self->counters.actors_finished.add();
  else
    foreign_.finished.fetch_add(1, std::memory_order_relaxed);
}

void executor::count_tx_dropped() noexcept {
  if (worker* self = this_worker())
    self->counters.tx_dropped.add();
  else
    foreign_.tx_dropped.fetch_add(1, std::memory_order_relaxed);
  count_rejected();
}

void executor::count_rejected() noexcept {
  if (worker* self = this_worker())
    self->counters.messages_rejected.add();
  else
    foreign_.rejected.fetch_add(1, std::memory_order_relaxed);
}

void executor::count_dead_letter() noexcept {
  if (worker* self = this_worker())
    self->counters.dead_letters.add();
  else
    foreign_.dead_letters.fetch_add(1, std::memory_order_relaxed);
}

worker* executor::take_guest() noexcept {
  if (this_thread_worker != nullptr || stepper_) return nullptr;
  // Counted before stopping is read, and stop() sets stopping before it
  // waits for the count to drop (both sequentially consistent): either we
  // see it stopping, or it waits for us.
  lent_threads_.fetch_add(1, std::memory_order_seq_cst);
  if (!stopping())
    for (std::uint32_t g = 0; g < worker_count_; ++g)
      if (!guest_taken_[g].load(std::memory_order_relaxed) &&
          !guest_taken_[g].exchange(true, std::memory_order_acquire)) {
        this_thread_worker = &guests_[g];
        guests_[g].lent();
        return &guests_[g];
      }
  lent_threads_.fetch_sub(1, std::memory_order_seq_cst);
  return nullptr;
}

void executor::release_guest(worker* guest) noexcept {
  if (guest == nullptr) return;
  // Not busy (the lender keeps a guest while behaviours it ran wait), so
  // its fibers are idle: they end here, on the thread that made them.
  guest->returned();
  // What it retired and cannot free yet must not wait for its next lender.
  epochs_.abandon(guest->index());
  this_thread_worker = nullptr;
  // Release: the next lender of this guest sees its state as we left it.
  guest_taken_[guest->index() - worker_count_].store(false, std::memory_order_release);
  lent_threads_.fetch_sub(1, std::memory_order_seq_cst);
}

worker& executor::take_sponsor(void (*notify)(void*) noexcept, void* context) {
  if (stepper_)
    throw std::logic_error{
        "tact: sponsors run actors on threads of their own, which a deterministic system does not "
        "have"};
  for (std::uint32_t k = 0; k < defaults::sponsors; ++k)
    if (!sponsor_taken_[k].load(std::memory_order_relaxed) &&
        !sponsor_taken_[k].exchange(true, std::memory_order_acquire)) {
      worker& runner = guests_[worker_count_ + k];
      runner.set_notify(notify, context);
      // So that the first send to the new sponsor's actors notifies it.
      queues_[sponsor_queue(runner)].register_waiter(&runner, nullptr);
      return runner;
    }
  throw std::runtime_error{"tact: a system has at most " + std::to_string(defaults::sponsors) +
                           " sponsors at once"};
}

// The sponsor's actors are done (the rule for destroying a sponsor), so no
// send reaches its queue or calls the runner's notify meanwhile.
std::uint32_t executor::release_sponsor(worker& runner) noexcept {
  const std::uint32_t left = queues_[sponsor_queue(runner)].discard(discard_handlers);
  foreign_.discarded.fetch_add(left, std::memory_order_relaxed);
  runner.set_notify(nullptr, nullptr);
  // Release: the next sponsor in this slot sees the runner as we left it.
  sponsor_taken_[runner.index() - 2 * worker_count_].store(false, std::memory_order_release);
  return left;
}

std::uint64_t executor::run_sponsor(worker& runner) {
  if (this_thread_worker != nullptr)
    throw std::logic_error{
        "tact: a sponsor was run from a behaviour; run it from its own thread (a worker "
        "cannot lend itself)"};
  // As take_guest: counted before stopping is read, so stop() waits for us.
  lent_threads_.fetch_add(1, std::memory_order_seq_cst);
  if (stopping()) {
    lent_threads_.fetch_sub(1, std::memory_order_seq_cst);
    return 0;
  }
  this_thread_worker = &runner;
  on_guest_busy();
  // Nothing to unwind: a batch runs only noexcept trampolines.
  const std::uint64_t ran = runner.drain(queues_[sponsor_queue(runner)]);
  on_guest_idle();
  epochs_.abandon(runner.index());
  this_thread_worker = nullptr;
  lent_threads_.fetch_sub(1, std::memory_order_seq_cst);
  return ran;
}

// Like a worker's park: the one that makes the system quiescent advances
// the epoch, so waiters re-check. The last guest to go idle and the last
// worker to park each update their count, then read the other's (all
// sequentially consistent): whichever comes second sees both counts at
// rest and advances; both may, which is harmless.
void executor::on_guest_idle() noexcept {
  if (busy_guests_.fetch_sub(1, std::memory_order_seq_cst) == 1 && all_parked()) advance_epoch();
}

void executor::report(diagnostic_kind kind, std::string text,
                      std::exception_ptr error) const noexcept {
  if (config_.on_diagnostic)
    config_.on_diagnostic(diagnostic{kind, std::move(text), std::move(error)});
}

void executor::note_unsent_message() noexcept {
  if (foreign_.unsent_messages.fetch_add(1, std::memory_order_relaxed) == 0)
    report(diagnostic_kind::message_never_sent,
           "a message was destroyed without ever being sent (an allocation that could be "
           "removed, or a message touched after it was freed?); further ones are counted and "
           "reported when the system stops");
}

system_stats executor::stats() const {
  system_stats s;
  s.workers.reserve(worker_count_);
  for (const worker& w : workers_) {
    s.workers.push_back(w.counters.snapshot());
    s.total += s.workers.back();
  }
  for (const worker& g : guests_) s.total += g.counters.snapshot();
  s.total.actors_created += foreign_.created.load(std::memory_order_relaxed);
  s.total.actors_finished += foreign_.finished.load(std::memory_order_relaxed);
  s.total.messages_sent += foreign_.sent.load(std::memory_order_relaxed);
  s.total.dead_letters += foreign_.dead_letters.load(std::memory_order_relaxed);
  s.total.tx_dropped += foreign_.tx_dropped.load(std::memory_order_relaxed);
  s.total.messages_rejected += foreign_.rejected.load(std::memory_order_relaxed);
  s.total.messages_discarded += foreign_.discarded.load(std::memory_order_relaxed);
  return s;
}

// parked_ only reaches N through a fetch_add by the last worker to park
// (a waker's fetch_sub can only precede its worker's fetch_add, making the
// count lower, never higher). So N means every worker committed to sleep
// after finding all its queues empty under their locks.
void executor::on_parked() noexcept {
  if (parked_.fetch_add(1, std::memory_order_seq_cst) + 1 == worker_count_ &&
      busy_guests_.load(std::memory_order_seq_cst) == 0)
    advance_epoch();
}

// Loads each state after our waker's decrement of parked_ (sequentially
// consistent on both sides): a watcher that decided to sleep because it
// saw everyone parked did so before that decrement, so we see it sleeping.
void executor::keep_watch() noexcept {
  worker* sleeper = nullptr;
  for (worker& w : workers_) {
    if (w.is_watching()) return;
    if (sleeper == nullptr && w.is_sleeping()) sleeper = &w;
  }
  if (sleeper != nullptr) sleeper->wake();
}

// Waiter: [waiters += 1; load epoch]; advancer: [epoch += 1; load waiters].
// Both sequentially consistent, so either the waiter sees the new epoch and
// does not sleep, or the advancer sees the waiter and wakes it (the kernel
// re-checks the epoch atomically before sleeping). No system call when
// nobody waits, which is the common case.
void executor::advance_epoch() noexcept {
  quiescent_epoch_.fetch_add(1, std::memory_order_seq_cst);
  if (epoch_waiters_.load(std::memory_order_seq_cst) != 0) futex_wake_all(quiescent_epoch_);
}

void executor::await_epoch_change(std::uint32_t seen) noexcept {
  epoch_waiters_.fetch_add(1, std::memory_order_seq_cst);
  while (quiescent_epoch_.load(std::memory_order_seq_cst) == seen)
    futex_wait(quiescent_epoch_, seen);
  epoch_waiters_.fetch_sub(1, std::memory_order_relaxed);
}

void executor::refuse_from_worker(const char* what) const {
  if (this_worker() != nullptr)
    throw std::logic_error{std::string{"tact: "} + what +
                           " called from a behaviour of the same system; a worker cannot wait for "
                           "itself"};
}

void executor::await_quiescence() {
  refuse_from_worker("await_quiescence()");
  if (stepper_) {
    while (stepper_->run_one()) {
    }
    return;
  }
  while (!stopped()) {
    // Epoch first: if the last worker parks after our check, the epoch has
    // moved and the wait returns at once.
    const std::uint32_t epoch = quiescent_epoch_.load(std::memory_order_acquire);
    if (quiescent()) return;
    await_epoch_change(epoch);
  }
}

// Read at quiescence: every worker's counters were published by its
// fetch_add on parked_, which our acquire load of N synchronizes with.
// Finished before created, so a race with another thread can only
// overestimate the live actors (and keep stop() waiting), never miss one.
std::uint64_t executor::live_actors() const noexcept {
  const std::uint64_t finished = foreign_.finished.load(std::memory_order_acquire) +
                                 sum(&worker_counters::actors_finished);
  const std::uint64_t created = foreign_.created.load(std::memory_order_acquire) +
                                sum(&worker_counters::actors_created);
  // More finished than created only after a program destroyed an actor
  // while its poison pill was still queued (reported on its own).
  return created > finished ? created - finished : 0;
}

std::uint64_t executor::sum(counter worker_counters::*field) const noexcept {
  std::uint64_t n = 0;
  for (const worker& w : workers_) n += (w.counters.*field).get();
  for (const worker& g : guests_) n += (g.counters.*field).get();
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
    const std::uint32_t epoch = quiescent_epoch_.load(std::memory_order_acquire);
    if (quiescent()) {
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
    await_epoch_change(epoch);
  }
}

void executor::join_workers() noexcept {
  stopping_.store(true, std::memory_order_seq_cst);
  for (worker& w : workers_) w.wake();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  // Lent threads finish the batch in hand and take no more (take_guest).
  while (lent_threads_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
}

void executor::stop(const std::function<void()>& before_join) {
  refuse_from_worker("stop()");
  std::lock_guard guard{stop_mutex_};
  if (stopped()) return;
  wait_until_finished();
  if (before_join) before_join();
  join_workers();
  // Replaced behaviours, while the executor is whole: their destructors
  // may drop actor references, and a send from one is a dead letter.
  epochs_.clear();
  std::uint64_t queued = 0;
  discarding_.store(true, std::memory_order_seq_cst);  // see post_to_mailbox
  for (work_queue& q : queues_) queued += q.discard(discard_handlers);
  foreign_.discarded.fetch_add(queued, std::memory_order_relaxed);
  // From the join on, nothing may throw: the workers are gone, so a stop()
  // left halfway could never be completed. Out of memory, the reports go.
  try {
    const std::uint64_t dead =
        sum(&worker_counters::dead_letters) + foreign_.dead_letters.load(std::memory_order_relaxed);
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
  advance_epoch();
  executor* self = this;
  default_executor.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
}

}  // namespace tact::detail
