#include "executor/fibers.hpp"

#include <tact/detail/behaviour_local.hpp>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

#include <boost/context/stack_context.hpp>

#include "support/assert.hpp"
#include "support/reserve.hpp"

#if defined(__GLIBCXX__)
#include <cxxabi.h>
#endif

// Sanitizers are told about every stack switch (GCC defines these macros
// under -fsanitize=address / thread; Clang answers __has_feature).
#if defined(__SANITIZE_ADDRESS__)
#define TACT_FIBERS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TACT_FIBERS_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define TACT_FIBERS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TACT_FIBERS_TSAN 1
#endif
#endif

#if defined(TACT_FIBERS_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(TACT_FIBERS_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace tact::detail {

namespace ctx = boost::context;

class fiber_pool::context {
 public:
  enum class state { running, idle, suspended };

  ctx::fiber resume_point;  // while not running
  state now = state::running;
  exception_state exceptions;          // while not running
  std::uintptr_t behaviour_local = 0;  // while not running
  std::size_t slot = 0;                // a fiber's place in fibers_
  // AddressSanitizer: the stack's lowest address and size (the native
  // one's is learnt at the first switch away from it), and its fake stack
  // while switched away.
  const void* stack_bottom = nullptr;
  std::size_t stack_size = 0;
  void* fake_stack = nullptr;
  // ThreadSanitizer's handle for this context.
  void* tsan_fiber = nullptr;
};

namespace {

std::size_t page_size() noexcept { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

[[noreturn]] void refuse_stack(int error, const char* what) {
  throw std::system_error{
      error, std::generic_category(),
      std::string{"tact: a behaviour cannot wait: "} + what +
          " (each waiting behaviour's stack is two memory mappings, and a process has at most "
          "vm.max_map_count of them: about 32,000 behaviours waiting at once by default)"};
}

// A stack of `size` bytes whose lowest page is a guard: an overflow faults
// instead of overwriting the neighbour. Boost's protected_fixedsize_stack
// does not check that the guard was set (release builds then hand out
// stacks without one once the process runs out of mappings), so the
// stacks are mapped here, and a stack without its guard is never used.
ctx::stack_context map_stack(std::size_t size) {
  const std::size_t page = page_size();
  size = std::max((size + page - 1) / page * page, 2 * page);
  void* const base =
      ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) refuse_stack(errno, "no memory could be mapped for its stack");
  if (::mprotect(base, page, PROT_NONE) != 0) {
    const int error = errno;
    ::munmap(base, size);
    refuse_stack(error, "its stack's guard page could not be set");
  }
  ctx::stack_context s;
  s.size = size;
  s.sp = static_cast<char*>(base) + size;
  return s;
}

void unmap_stack(const ctx::stack_context& s) noexcept {
  ::munmap(static_cast<char*>(s.sp) - s.size, s.size);
}

}  // namespace

// Stacks with a guard page (see map_stack), mapped once and kept by the
// pool when their fiber ends, so that a worker that needs fibers again
// reuses them.
class fiber_pool::stack_allocator {
 public:
  stack_allocator(fiber_pool& pool, context& owner) noexcept : pool_{&pool}, owner_{&owner} {}

  ctx::stack_context allocate() {
    ctx::stack_context s;
    if (pool_->stacks_.empty()) {
      s = map_stack(pool_->stack_size_);
    } else {
      s = pool_->stacks_.back();
      pool_->stacks_.pop_back();
    }
    owner_->stack_bottom = static_cast<const char*>(s.sp) - s.size;
    owner_->stack_size = s.size;
    return s;
  }

  // Runs on the context that the ended fiber went back to (Boost frees a
  // fiber's stack from the next one), so the stack is free.
  void deallocate(ctx::stack_context& s) noexcept {
#if defined(TACT_FIBERS_ASAN)
    // What the ended fiber's frames poisoned must not trip the next user.
    __asan_unpoison_memory_region(static_cast<char*>(s.sp) - s.size, s.size);
#endif
    // Reserved by prepare() before the fiber was made: cannot throw.
    pool_->stacks_.push_back(s);
  }

 private:
  fiber_pool* pool_;
  context* owner_;
};

fiber_pool::fiber_pool(std::size_t stack_size, std::size_t kept, void (*loop)(void*),
                       void* owner)
    : stack_size_{stack_size},
      kept_{kept},
      loop_{loop},
      owner_{owner},
      native_{std::make_unique<context>()},
      running_{native_.get()} {}

fiber_pool::~fiber_pool() {
  TACT_ASSERT(fibers_.empty(), "a pool's fibers end (leave()) before the pool goes");
  for (const ctx::stack_context& s : stacks_) unmap_stack(s);
}

// Per lending of a guest, so cheap, and it cannot fail (an ask from outside
// lends its thread from a noexcept path): what a previous owner left in the
// native context (its stack's bounds, its exception state) is overwritten
// by the first switch away from it, before anything reads it.
void fiber_pool::enter() noexcept {
  native_->now = context::state::running;
#if defined(TACT_FIBERS_TSAN)
  native_->tsan_fiber = __tsan_get_current_fiber();
#endif
  running_ = native_.get();
  previous_ = nullptr;
}

void fiber_pool::leave() noexcept {
  end_idle(0);
  unmap_spare(kept_);
}

void fiber_pool::trim() noexcept {
  end_idle(kept_);
  unmap_spare(kept_ - idle_.size());
}

// Each ended fiber goes back to the native context (see depart()), and
// Boost hands its stack to the spares there (stack_allocator::deallocate).
void fiber_pool::end_idle(std::size_t keep) noexcept {
  TACT_ASSERT(on_native(), "only the native context ends fibers");
  if (idle_.size() <= keep) return;
  ending_ = true;
  while (idle_.size() > keep) {
    context* last = idle_.back();
    idle_.pop_back();
    switch_to(*last);  // it returns from its loop and ends (see depart())
  }
  ending_ = false;
}

void fiber_pool::unmap_spare(std::size_t keep) noexcept {
  while (stacks_.size() > keep) {
    unmap_stack(stacks_.back());
    stacks_.pop_back();
  }
}

bool fiber_pool::native_idle() const noexcept { return native_->now == context::state::idle; }

bool fiber_pool::prepare() {
  if (!idle_.empty()) return false;
  // Room for the bookkeeping pushes that must not throw later: every fiber
  // may become idle (resume()), and every stack may come back (an ending).
  reserve_at_least(fibers_, fibers_.size() + 1);
  reserve_at_least(idle_, fibers_.size() + 1);
  reserve_at_least(stacks_, stacks_.size() + fibers_.size() + 1);
  idle_.push_back(&make_fiber());
  return true;
}

void fiber_pool::suspend() noexcept {
  TACT_ASSERT(!idle_.empty(), "prepare() comes before suspend()");
  context& next = *idle_.back();
  idle_.pop_back();
  running_->now = context::state::suspended;
  switch_to(next);
}

void fiber_pool::resume(context& c) noexcept {
  // An idle native context is not in idle_: a fiber hands the loop back to
  // it (see pool_worker::loop) rather than it being picked for a suspension.
  if (c.now == context::state::idle)
    if (const auto it = std::find(idle_.begin(), idle_.end(), &c); it != idle_.end())
      idle_.erase(it);
  running_->now = context::state::idle;
  if (running_ != native_.get()) idle_.push_back(running_);  // reserved by prepare()
  switch_to(c);
}

// A fiber's whole life: run the loop, then go back to the native context
// for good. Its stack holds this frame, Boost's record and whatever the
// loop calls; the first frame below Boost's entry is this lambda.
fiber_pool::context& fiber_pool::make_fiber() {
  auto made = std::make_unique<context>();
  context& c = *made;
#if defined(TACT_FIBERS_TSAN)
  c.tsan_fiber = __tsan_create_fiber(0);
  // Boost's constructor jumps onto the new stack and back once (to hand
  // the fiber its record): TSan sees that excursion as the new fiber's, so
  // the creator's shadow call stack stays balanced.
  __tsan_switch_to_fiber(c.tsan_fiber, 0);
#endif
  c.now = context::state::idle;
  try {
    c.resume_point = ctx::fiber{std::allocator_arg, stack_allocator{*this, c},
                                [this](ctx::fiber&& from) -> ctx::fiber {
                                  arrived(std::move(from));
                                  loop_(owner_);
                                  return depart();
                                }};
  } catch (...) {
#if defined(TACT_FIBERS_TSAN)
    __tsan_switch_to_fiber(running_->tsan_fiber, 0);
    __tsan_destroy_fiber(c.tsan_fiber);
#endif
    throw;
  }
#if defined(TACT_FIBERS_TSAN)
  __tsan_switch_to_fiber(running_->tsan_fiber, 0);
#endif
  c.slot = fibers_.size();
  fibers_.push_back(std::move(made));  // reserved by prepare()
  return c;
}

// The switch itself. The sanitizer calls sit right before the jump, and
// arrived() right after it on the other side, as both sanitizers require.
//
// TSan keeps a shadow call stack per fiber, pushed at each instrumented
// function's entry and popped at its exit, on whichever fiber it believes
// is running; an entry and exit recorded on different fibers unbalance
// both, and a stack popped below its start crashes the runtime. So every
// TSan switch happens between the jump and the next call: the switcher
// announces the target right before resume() (whose own frame, if not
// inlined, is pushed on the target and popped by the target's pending
// resume() returning), and an ended fiber, which announced nothing (see
// depart()), is switched away from right after the jump returns here.
void fiber_pool::switch_to(context& to) noexcept {
  TACT_ASSERT(&to != running_ && to.now != context::state::running && to.resume_point,
              "a switch goes to a context that is suspended or idle");
  context& from = *running_;
  previous_ = &from;
  running_ = &to;
  to.now = context::state::running;
  exchange_thread_state(from, to);
#if defined(TACT_FIBERS_ASAN)
  __sanitizer_start_switch_fiber(&from.fake_stack, to.stack_bottom, to.stack_size);
#endif
#if defined(TACT_FIBERS_TSAN)
  __tsan_switch_to_fiber(to.tsan_fiber, 0);
#endif
  ctx::fiber back = std::move(to.resume_point).resume();
#if defined(TACT_FIBERS_TSAN)
  // The context that switched here ended: its last frames, and Boost
  // freeing its stack on ours, counted as its own; we are `from` again.
  if (!back) __tsan_switch_to_fiber(from.tsan_fiber, 0);
#endif
  arrived(std::move(back));
}

// First thing on the context switched to: `from` is where the previous
// context stopped, or nothing if it ended (see depart()).
void fiber_pool::arrived(ctx::fiber from) noexcept {
#if defined(TACT_FIBERS_ASAN)
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(running_->fake_stack, &bottom, &size);
  if (previous_ == native_.get()) {
    native_->stack_bottom = bottom;
    native_->stack_size = size;
  }
#endif
  if (from) {
    previous_->resume_point = std::move(from);
    return;
  }
  forget(*previous_);  // it ended (see depart())
}

// A fiber whose loop returned (leave() is ending it) goes back to the
// native context, which waits in leave(); Boost then frees its stack from
// there. ASan is told now, with no fake stack to keep; TSan only once the
// native context runs again (see switch_to()), since this fiber's frames
// still return after this.
ctx::fiber fiber_pool::depart() noexcept {
  context& from = *running_;
  context& to = *native_;
  previous_ = &from;
  running_ = &to;
  to.now = context::state::running;
  exchange_thread_state(from, to);
#if defined(TACT_FIBERS_ASAN)
  __sanitizer_start_switch_fiber(nullptr, to.stack_bottom, to.stack_size);
#endif
  return std::move(to.resume_point);
}

void fiber_pool::forget(context& ended) noexcept {
#if defined(TACT_FIBERS_TSAN)
  __tsan_destroy_fiber(ended.tsan_fiber);
#endif
  // Swapped with the last: leave() ends every fiber, one after another.
  const std::size_t at = ended.slot;
  if (at + 1 != fibers_.size()) {
    fibers_[at] = std::move(fibers_.back());
    fibers_[at]->slot = at;
  }
  fibers_.pop_back();
}

constinit thread_local std::uintptr_t behaviour_local = 0;

// What the thread keeps per context: the running behaviour's word (see
// tact/detail/behaviour_local.hpp), and the C++ runtime's exceptions being
// handled (a stack threaded through the exception objects) and count of
// those in flight. A behaviour that waits inside a catch block, while
// another context catches and rethrows, would otherwise pop the other's
// exception. Their layout is libstdc++'s __cxa_eh_globals on targets
// without the ARM EABI unwinder; elsewhere they are not exchanged (do not
// wait in a catch block there).
void fiber_pool::exchange_thread_state(context& from, context& to) noexcept {
  from.behaviour_local = std::exchange(detail::behaviour_local, to.behaviour_local);
#if defined(__GLIBCXX__) && !defined(__arm__)
  auto* globals = reinterpret_cast<exception_state*>(abi::__cxa_get_globals());
  from.exceptions = *globals;
  *globals = to.exceptions;
#endif
}

}  // namespace tact::detail
