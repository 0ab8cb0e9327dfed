#include <algorithm>
#include <utility>

#include <pthread.h>

#include <tact/actor_system.hpp>
#include <tact/defaults.hpp>
#include <tact/detail/timer_core.hpp>

#include "executor/executor.hpp"
#include "helpers/timers/timer_service.hpp"
#include "support/futex.hpp"

// Timers. A timer_record's `state` settles the race between its delivery
// and its end (cancel(), a target that is gone, a stopping system), which
// may happen on different threads:
//
//   cancelled  set by the cancel() that wins; final.
//   done       set when the target takes no more messages or the system
//              stops; final.
//   pending    an envelope is queued (set by the timer thread before it
//              posts, cleared by the delivery that takes it).
//   running    a delivery is running (cleared after it, for a periodic
//              timer; kept, for a one-shot timer: it was delivered).
//
// A delivery starts only by turning pending into running with a CAS that
// requires cancelled and done to be clear, and a timer ends only by a CAS
// that requires them clear too (and, for cancel() of a one-shot timer,
// running). So whichever CAS comes first wins and the loser knows: a
// winning cancel() means no delivery starts after it, even of an envelope
// already queued.
//
// The message of a timer that ends undelivered is freed (discard()) at
// once, by whoever ends it, unless a delivery is running; then by that
// delivery as it finishes. Either way exactly once, and never while a
// delivery may read it.
namespace tact::detail {
namespace {

constexpr std::uint32_t cancelled_bit = 1;
constexpr std::uint32_t pending_bit = 2;
constexpr std::uint32_t running_bit = 4;
constexpr std::uint32_t done_bit = 8;

// stop() found the envelope still queued.
std::uint32_t drop_envelope(const envelope& e) noexcept {
  auto* r = static_cast<timer_record*>(e.message);
  r->drop(e.target);
  r->release();
  return 1;
}

constexpr std::uint32_t ended = cancelled_bit | done_bit;

}  // namespace

struct timer_record_access {
  static std::atomic<std::uint32_t>& state(timer_record& r) noexcept { return r.state_; }
  static const std::atomic<std::uint32_t>& state(const timer_record& r) noexcept {
    return r.state_;
  }
  static timer_service& service(timer_record& r) noexcept { return r.service_; }
  static std::atomic<bool>& in_heap(timer_record& r) noexcept { return r.in_heap_; }
  static void set_due(timer_record& r, std::chrono::steady_clock::time_point due) noexcept {
    r.due_ = due;
  }
};

timer_record::timer_record(actor_system& system, std::chrono::nanoseconds period) noexcept
    : service_{timers_of(system)}, period_{period} {}

timer_record::~timer_record() = default;

void fire_timer(void* target, void* record) noexcept {
  auto& r = *static_cast<timer_record*>(record);
  auto& state = timer_record_access::state(r);
  std::uint32_t s = state.load(std::memory_order_seq_cst);
  if (!(s & ended) && r.redirect(target)) return;  // to run from the right queue
  do {
    if (s & ended) {
      r.drop(target);
      r.release();
      return;
    }
  } while (!state.compare_exchange_weak(s, (s & ~pending_bit) | running_bit,
                                        std::memory_order_seq_cst));
  r.deliver(target);
  // A periodic timer that ended during the delivery left its message to us.
  if (r.periodic() && (state.fetch_and(~running_bit, std::memory_order_seq_cst) & ended))
    r.discard();
  r.release();
}

void arm(timer_record* r, std::chrono::nanoseconds delay) {
  timer_service& service = timer_record_access::service(*r);
  service.ensure_thread();
  timer_record_access::set_due(*r, service.now() + delay);
  // Promised before the timer can be seen anywhere, so a stop() that finds
  // the system idle right after this call knows a send is coming.
  service.owner().promise_posts(1);
  r->retain();
  service.start(r);
}

bool cancel(timer_record* r) noexcept {
  auto& state = timer_record_access::state(*r);
  std::uint32_t s = state.load(std::memory_order_seq_cst);
  do {
    if (s & ended) return false;
    if (!r->periodic() && (s & running_bit)) return false;
  } while (!state.compare_exchange_weak(s, s | cancelled_bit, std::memory_order_seq_cst));
  if (!(s & running_bit)) r->discard();
  // Pairs with the timer thread's insert (store in_heap, then read state):
  // either it sees cancelled and takes r out itself, or we see in_heap and
  // ask it to. Both may happen; taking out twice is harmless.
  if (timer_record_access::in_heap(*r).load(std::memory_order_seq_cst)) {
    r->retain();
    timer_record_access::service(*r).cancelled(r);
  }
  return true;
}

namespace {

// Marks r done (its target is gone, or the system stops) unless it has
// ended already; frees its message as cancel() does.
void end_undelivered(timer_record* r) noexcept {
  auto& state = timer_record_access::state(*r);
  std::uint32_t s = state.load(std::memory_order_seq_cst);
  do {
    if (s & ended) return;
  } while (!state.compare_exchange_weak(s, (s & ~pending_bit) | done_bit,
                                        std::memory_order_seq_cst));
  if (!(s & running_bit)) r->discard();
}

}  // namespace

bool active(const timer_record* r) noexcept {
  const std::uint32_t s = timer_record_access::state(*r).load(std::memory_order_acquire);
  if (s & ended) return false;
  return r->periodic() || !(s & running_bit);
}

// ---- the service ----

timer_service::timer_service(executor& ex) : ex_{ex}, virtual_{ex.stepping() != nullptr} {
  on_discard(&fire_timer, &drop_envelope);
}

timer_service::~timer_service() {
  shutdown();
  // Starts that raced shutdown (a program sending while it stops).
  take_starts();
  take_cancels();
}

void timer_service::ring() noexcept {
  bell_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_one(bell_);
}

void timer_service::ensure_thread() {
  if (virtual_ || started_.load(std::memory_order_acquire)) return;
  std::lock_guard guard{start_mutex_};
  if (closed_ || thread_.joinable()) return;
  thread_ = std::thread{[this] { run(); }};
  pthread_setname_np(thread_.native_handle(), "tact-timer");
  started_.store(true, std::memory_order_release);
}

// Only the push that makes an inbox non-empty rings: the thread reads the
// bell before it empties an inbox, so a push onto an inbox it has not
// emptied yet is taken with the earlier ones.
void timer_service::start(timer_record* r) noexcept {
  if (starts_.push(r)) ring();
  // A start racing shutdown(): shutdown sets closing_ and then empties the
  // inbox once the thread has gone (both sequentially consistent). Either
  // it sees our push, or we see closing_ and end the timers left in the
  // inbox ourselves (take_starts ends them all once closing_ is set).
  if (closing_.load(std::memory_order_seq_cst)) take_starts();
}

void timer_service::cancelled(timer_record* r) noexcept {
  if (cancels_.push(r)) ring();
}

void timer_service::shutdown() noexcept {
  {
    std::lock_guard guard{start_mutex_};
    if (closed_) return;
    closed_ = true;
  }
  closing_.store(true, std::memory_order_seq_cst);
  ring();
  if (thread_.joinable()) thread_.join();
  take_starts();
  take_cancels();
  while (root_ != nullptr) {
    timer_record* r = root_;
    erase(r);
    end_undelivered(r);
    end(r);
  }
}

// A timer leaves the heap for good: cancel() stops telling the thread,
// stop() stops waiting for it, and the heap's reference goes.
void timer_service::end(timer_record* r) noexcept {
  timer_record_access::in_heap(*r).store(false, std::memory_order_seq_cst);
  r->finished();
  ex_.promise_posts(-1);
  r->release();
}

void timer_service::take_starts() noexcept {
  // Oldest first, so timers due at the same instant fire in the order
  // they were started.
  for (timer_record* r = starts_.take_all(); r != nullptr;) {
    timer_record* next = std::exchange(r->next_start_, nullptr);
    if (closing_.load(std::memory_order_seq_cst)) {
      end_undelivered(r);
      end(r);
    } else {
      r->sequence_ = sequence_++;
      insert(r);
      timer_record_access::in_heap(*r).store(true, std::memory_order_seq_cst);
      // See cancel(): a cancel that missed in_heap is seen here.
      if (timer_record_access::state(*r).load(std::memory_order_seq_cst) & cancelled_bit) {
        erase(r);
        end(r);
      }
    }
    r = next;
  }
}

void timer_service::take_cancels() noexcept {
  timer_record* list = cancels_.take_all();
  while (list != nullptr) {
    timer_record* r = std::exchange(list, std::exchange(list->next_cancel_, nullptr));
    if (in_heap(r)) {
      erase(r);
      end(r);
    }
    r->release();  // the inbox's reference
  }
}

// r was due and has left the heap.
void timer_service::expire(timer_record* r, std::chrono::steady_clock::time_point now) noexcept {
  auto& state = timer_record_access::state(*r);
  std::uint32_t s = state.load(std::memory_order_seq_cst);
  bool skip = false;
  do {
    if (s & ended) return end(r);
    // A periodic timer whose last tick is still queued or running skips
    // this one.
    skip = (s & (pending_bit | running_bit)) != 0;
  } while (!skip && !state.compare_exchange_weak(s, s | pending_bit, std::memory_order_seq_cst));
  if (!skip) {
    r->retain();  // the envelope's
    switch (r->post()) {
      case post_outcome::queued:
        r->starved_ = false;
        break;
      case post_outcome::refused:
        // The target is gone: so is the timer.
        end_undelivered(r);
        r->release();
        return end(r);
      case post_outcome::no_memory:
        // Nothing was queued: the firing waits in the heap, which needs no
        // memory for it, and is tried again. A cancel() meanwhile found
        // no envelope to race, and ends the timer as if still pending.
        r->release();
        state.fetch_and(~pending_bit, std::memory_order_seq_cst);
        if (!std::exchange(r->starved_, true))
          ex_.note_memory_wait("a timer's message could not be queued");
        r->due_ = now + defaults::memory_retry;
        r->sequence_ = sequence_++;
        return insert(r);
    }
  }
  if (!r->periodic()) return end(r);
  // Next tick: one period on, or (after a stall) the first one still ahead.
  auto& due = r->due_;
  due += r->period_;
  if (due <= now) due += ((now - due) / r->period_ + 1) * r->period_;
  r->sequence_ = sequence_++;
  insert(r);
}

void timer_service::run() noexcept {
  for (;;) {
    const std::uint32_t rung = bell_.load(std::memory_order_seq_cst);
    if (closing_.load(std::memory_order_seq_cst)) return;
    take_starts();
    take_cancels();
    const auto now = std::chrono::steady_clock::now();
    while (root_ != nullptr && root_->due_ <= now) {
      timer_record* r = root_;
      erase(r);
      expire(r, now);
    }
    if (root_ == nullptr)
      futex_wait(bell_, rung);
    else
      futex_wait_for(bell_, rung, root_->due_ - now);
  }
}

std::optional<std::chrono::steady_clock::time_point> timer_service::next_due() noexcept {
  take_starts();
  take_cancels();
  if (root_ == nullptr) return std::nullopt;
  return root_->due_;
}

std::size_t timer_service::pending() noexcept {
  take_starts();
  take_cancels();
  return heap_size_;
}

void timer_service::advance_to(std::chrono::steady_clock::time_point to) noexcept {
  for (;;) {
    take_starts();
    take_cancels();
    if (root_ == nullptr || root_->due_ > to) break;
    timer_record* r = root_;
    virtual_now_ = std::max(virtual_now_, r->due_);
    erase(r);
    expire(r, virtual_now_);
  }
  virtual_now_ = std::max(virtual_now_, to);
}

// ---- the heap ----

bool timer_service::before(const timer_record* a, const timer_record* b) noexcept {
  return a->due_ != b->due_ ? a->due_ < b->due_ : a->sequence_ < b->sequence_;
}

// Two heaps' roots, either null: the later one becomes the first child of
// the earlier, which is returned with its own sibling links untouched.
timer_record* timer_service::meld(timer_record* a, timer_record* b) noexcept {
  if (a == nullptr) return b;
  if (b == nullptr) return a;
  if (before(b, a)) std::swap(a, b);
  b->heap_prev_ = a;
  b->heap_next_ = a->heap_child_;
  if (a->heap_child_ != nullptr) a->heap_child_->heap_prev_ = b;
  a->heap_child_ = b;
  return a;
}

// The children of a removed node, from `first` along heap_next_, made one
// heap: melded in pairs from the left, then the pairs melded from the
// right (the two passes that give the pairing heap its bounds). The pairs
// are chained through heap_next_ in reverse order, so nothing allocates.
timer_record* timer_service::merge_pairs(timer_record* first) noexcept {
  timer_record* pairs = nullptr;
  while (first != nullptr) {
    timer_record* a = first;
    timer_record* b = a->heap_next_;
    first = b != nullptr ? b->heap_next_ : nullptr;
    a->heap_prev_ = a->heap_next_ = nullptr;
    if (b != nullptr) b->heap_prev_ = b->heap_next_ = nullptr;
    timer_record* m = meld(a, b);
    m->heap_next_ = pairs;
    pairs = m;
  }
  timer_record* root = nullptr;
  while (pairs != nullptr) {
    timer_record* next = std::exchange(pairs->heap_next_, nullptr);
    root = meld(root, pairs);
    pairs = next;
  }
  return root;
}

void timer_service::insert(timer_record* r) noexcept {
  r->heap_child_ = r->heap_next_ = r->heap_prev_ = nullptr;
  root_ = meld(root_, r);
  ++heap_size_;
}

void timer_service::erase(timer_record* r) noexcept {
  timer_record* const children = std::exchange(r->heap_child_, nullptr);
  if (r == root_) {
    root_ = merge_pairs(children);
  } else {
    // Unlinked from its parent (if a first child) or its left sibling.
    timer_record* const prev = r->heap_prev_;
    (prev->heap_child_ == r ? prev->heap_child_ : prev->heap_next_) = r->heap_next_;
    if (r->heap_next_ != nullptr) r->heap_next_->heap_prev_ = prev;
    root_ = meld(root_, merge_pairs(children));
  }
  r->heap_prev_ = r->heap_next_ = nullptr;
  --heap_size_;
}

}  // namespace tact::detail
