#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>

namespace tact::detail {

// The execution contexts of one worker, so that a behaviour can wait (an
// ask) without holding the worker's thread: the thread's own stack (the
// native context) and Boost.Context fibers, made when first needed and kept
// for reuse. Exactly one context runs at a time. Every other one is either
// suspended (inside a behaviour that waits; resume() continues it) or idle
// (in the worker's loop, where it handed the thread over; resume() lets it
// go on with the loop).
//
// Nothing switches until a behaviour waits: a worker whose behaviours never
// wait runs on its native context and pays nothing here (no allocation
// after the pool's own, no switch, no check per message).
//
// Contexts never change threads: only the owning thread uses a pool, and
// leave() ends its fibers before another thread may own it (a guest worker
// is lent to one thread after another).
//
// Sanitizers: every switch is announced to AddressSanitizer (the stack in
// use changes) and ThreadSanitizer (each context is a TSan fiber), and each
// context keeps its own C++ exception state (the exceptions being handled,
// which the runtime keeps per thread), so a behaviour may wait inside a
// catch block while another runs. Likewise its own detail::behaviour_local.
class fiber_pool {
 public:
  class context;

  // `loop(owner)` is what each new fiber runs (the worker's loop). It must
  // return once ending() is true, and only then. `stack_size`: each
  // fiber's stack, in bytes, guard page included. `kept`: idle fibers and
  // spare stacks kept by trim() and leave(). Allocates the native
  // context's record (std::bad_alloc), so that enter() cannot fail.
  fiber_pool(std::size_t stack_size, std::size_t kept, void (*loop)(void*), void* owner);
  // Frees the kept stacks. Only after leave(), or if enter() never ran.
  ~fiber_pool();
  fiber_pool(const fiber_pool&) = delete;
  fiber_pool& operator=(const fiber_pool&) = delete;

  // ---- only on the owning thread ----

  // The calling thread's stack becomes the native context, running.
  void enter() noexcept;
  // On the native context, with no context suspended: ends every idle
  // fiber (each returns from its loop, seeing ending()) and unmaps the
  // spare stacks beyond `kept`. enter() may follow, on this or another
  // thread.
  void leave() noexcept;
  // On the native context, with no context suspended: ends the idle
  // fibers beyond `kept`, and unmaps the spare stacks beyond what it takes
  // to have `kept` fibers again.
  void trim() noexcept;

  bool on_native() const noexcept { return running_ == native_.get(); }
  // Whether the native context waits for the loop to come back to it.
  bool native_idle() const noexcept;
  // True while leave() ends the fibers.
  bool ending() const noexcept { return ending_; }
  context& running() noexcept { return *running_; }
  context& native() noexcept { return *native_; }
  // Fibers made and not ended.
  std::size_t fibers() const noexcept { return fibers_.size(); }

  // Makes sure that the next suspend() needs no allocation: throws here
  // (std::bad_alloc, or std::system_error if no stack can be mapped)
  // before the caller changes anything. True if it made a fiber (none
  // was idle).
  bool prepare();
  // The running context stops here until resume() names it; an idle fiber
  // (one made by prepare() if none was idle) runs the loop meanwhile.
  void suspend() noexcept;
  // From a loop: `c` (suspended, or idle) runs; the running context
  // becomes idle here, and returns from this call when it is next needed
  // to run the loop (or to end).
  void resume(context& c) noexcept;

 private:
  class stack_allocator;
  struct exception_state {
    void* caught = nullptr;
    unsigned int uncaught = 0;
  };

  context& make_fiber();
  void end_idle(std::size_t keep) noexcept;
  void unmap_spare(std::size_t keep) noexcept;
  void switch_to(context& to) noexcept;
  void arrived(boost::context::fiber from) noexcept;
  boost::context::fiber depart() noexcept;
  void forget(context& ended) noexcept;
  static void exchange_thread_state(context& from, context& to) noexcept;

  const std::size_t stack_size_;
  const std::size_t kept_;
  void (*const loop_)(void*);
  void* const owner_;
  std::unique_ptr<context> native_;
  std::vector<std::unique_ptr<context>> fibers_;       // made and not ended
  std::vector<context*> idle_;                         // fibers that will run the loop next
  std::vector<boost::context::stack_context> stacks_;  // stacks of ended fibers, for reuse
  context* running_ = nullptr;
  context* previous_ = nullptr;  // the context that switched to the running one
  bool ending_ = false;
};

}  // namespace tact::detail
