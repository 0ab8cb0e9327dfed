#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <typeinfo>

#include <tact/detail/atomic.hpp>
#include <tact/detail/block_pool.hpp>
#include <tact/detail/envelope.hpp>
#include <tact/detail/retired.hpp>
#include <tact/export.hpp>

namespace tact {
class actor_system;
namespace tx {
class actor_ref;
class message;
}  // namespace tx
}  // namespace tact

// What the transactional templates need from the library. Not for users.
namespace tact::detail {
struct mailbox_gauge;
}

namespace tact::detail::tx {

class domain;  // a system's transactional side (src/transactional/domain.hpp)

// The element types of a message, identified by this object's address: two
// messages have the same types exactly when they point at the same one.
struct message_type {
  const std::type_info* const* elements;
  std::size_t size;
  // The first element, if it is an actor reference (the customer, by
  // convention); else nullptr.
  const ::tact::tx::actor_ref* (*customer)(const ::tact::tx::message&) noexcept;
  // A new, unaddressed message with the same elements, the first replaced
  // by *customer if given (see tx::forward).
  ::tact::tx::message* (*copy)(const ::tact::tx::message&, const ::tact::tx::actor_ref* customer);
  // Destroys a message of these elements and frees its block. Here rather
  // than in each message: one word less per message, and a message's
  // block size decides which of the block cache's lists it takes.
  void (*destroy)(::tact::tx::message*) noexcept;
};

template <class... Ts>
inline constexpr std::array<const std::type_info*, sizeof...(Ts)> element_types{&typeid(Ts)...};

// Defined with message_of (tx/message.hpp).
template <class... Ts>
const ::tact::tx::actor_ref* customer_of(const ::tact::tx::message& m) noexcept;
template <class... Ts>
::tact::tx::message* copy_of(const ::tact::tx::message& m, const ::tact::tx::actor_ref* customer);
template <class... Ts>
void destroy_of(::tact::tx::message* m) noexcept;

template <class... Ts>
inline constexpr message_type message_type_of{element_types<Ts...>.data(), sizeof...(Ts),
                                              &customer_of<Ts...>, &copy_of<Ts...>,
                                              &destroy_of<Ts...>};

// An immutable set of handlers (see tx::behaviour). Shared by reference
// count between behaviour handles and actors' behaviour slots; a replaced
// behaviour is released only after every worker that may still run it has
// moved on (see the executor's epochs), waiting there on its own link.
class behaviour_base : public retired_link {
 public:
  behaviour_base() noexcept {
    free = [](retired_link* link) noexcept { static_cast<behaviour_base*>(link)->release(); };
  }
  behaviour_base(const behaviour_base&) = delete;
  behaviour_base& operator=(const behaviour_base&) = delete;
  virtual ~behaviour_base() = default;

  // Runs the first handler whose parameters match m's element types;
  // false if none does.
  virtual bool dispatch(const ::tact::tx::message& m) const = 0;

  void retain() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  // A count of 1 is the caller's own reference, and only the holder of a
  // reference can add one (retain copies a handle, or keeps the behaviour
  // a dispatch runs, read from its actor's slot under an epoch pin, which
  // the slot's own release waits out), so nobody else can change the
  // count: the closure is freed without a read-modify-write, as CAF's
  // ref_counted::deref does.
  // The common case: a behaviour built in a handler, become'd, then
  // replaced. Acquire pairs with the release half of other holders' earlier
  // decrements, so their reads of the closure happen before its deletion.
  void release() noexcept {
    if (refs_.load(std::memory_order_acquire) == 1 ||
        refs_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete this;
  }

 private:
  atomic<std::uint32_t> refs_{1};
};

// A transactional actor: its identity. Reference counted by actor_refs and
// by the messages queued for it, so a dispatch always finds it alive.
struct cell {
  // Low bit of `slot`: a become is being committed (see dispatch.cpp).
  static constexpr std::uintptr_t committing = 1;

  atomic<std::uint32_t> refs{1};
  atomic<bool> serialized{false};
  // Created serialized (never changes): every message for it has gone to
  // its home queue, so its slot is read and written only by the one thread
  // processing that queue, one message at a time (see dispatch.cpp). An
  // actor serialized later by collisions is not: messages that missed the
  // flag may still run anywhere.
  bool exclusive = false;
  // Set before the actor is known to anyone: when a request naming this
  // actor as its customer (see message::request_) rolls back or matches no
  // handler, it is sent a tx::failure.
  bool told_of_failures = false;
  std::uint32_t home = 0;  // the one queue a serialized actor's messages go to
  domain* dom = nullptr;   // its system's
  atomic<std::uintptr_t> slot{0};  // behaviour_base*, plus the committing bit
  // A parallel actor's on_commit actions waiting for their turn, and who
  // runs them (see src/transactional/ordered_actions.hpp).
  atomic<std::uintptr_t> actions{0};
  // Set at creation for a bounded actor (created serialized), or once for
  // an actor that collisions serialize (if system_config::collision_bound
  // asks for it); freed with the actor. Released when set later, so that
  // a sender that loads it (acquire) also sees `serialized` set.
  atomic<mailbox_gauge*> gauge{nullptr};
};

inline void retain(cell* c) noexcept { c->refs.fetch_add(1, std::memory_order_relaxed); }
TACT_API void destroy(cell* c) noexcept;
inline void release(cell* c) noexcept {
  if (c->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(c);
}

// What a running handler has staged so far, the part a send reaches inline
// (the rest of the transaction is dispatch.cpp's). Lives on the worker's
// stack while the handler runs.
//
// A staged send to the running actor itself borrows the reference to it
// that the message being handled holds, instead of taking one of its own:
// a countdown that re-sends to itself then pays no atomic increment and
// decrement per message. A commit settles the loan (the handled message
// gives its reference up); a discard returns it (the send takes a
// reference of its own, then is destroyed with it).
struct staging {
  cell* actor;
  const ::tact::tx::actor_ref* self;
  ::tact::tx::message* first = nullptr;  // staged sends, in order
  ::tact::tx::message** last = &first;
  bool borrowed = false;  // a staged send holds the handled message's reference

  staging(cell* a, const ::tact::tx::actor_ref* s) noexcept : actor{a}, self{s} {}
  staging(const staging&) = delete;
  staging& operator=(const staging&) = delete;

  // Addresses m to `to` (not null) and appends it to the staged sends.
  inline void stage(::tact::tx::message* m, cell* to) noexcept;
};

// The handler running on this thread, if any: a send, become or create
// there is staged in it. Only the library sets it.
TACT_API extern constinit thread_local staging* staged __attribute__((tls_model("initial-exec")));

// Addresses a message built by tx::send to `to` (which may be null), then
// stages it in the running handler (inline: the common case) or delivers
// it (send_now); takes ownership of it. Defined in tx/message.hpp.
inline void send(::tact::tx::message* m, cell* to);
// The same outside a handler, or to an empty reference (dropped and
// counted). Throws std::bad_alloc only when a queue cannot grow (m is
// freed).
TACT_API void send_now(::tact::tx::message* m, cell* to);

// Marks m, which names a customer first, as that customer's request (see
// message::request_), unless a handler is passing on the customer of the
// message it handles: a delegation, or a side copy, is not a new request.
TACT_API void note_request(::tact::tx::message& m) noexcept;

// Stage a become (takes a reference to b); std::logic_error outside a
// handler.
TACT_API void become(behaviour_base* b);
// A new actor running b (takes a reference to it, released if this throws),
// joined to `system`, or with none to the running handler's system
// (std::logic_error outside one). `bound`: its mailbox bound, 0 for none;
// a bounded actor is serialized.
TACT_API cell* create(behaviour_base* b, bool serialized, actor_system* system,
                      std::uint32_t bound = 0);
// Stage an action; std::logic_error outside a handler.
TACT_API void on_commit(std::function<void()> action);
// The running handler's actor, or nullptr outside a handler.
inline const ::tact::tx::actor_ref* self() noexcept {
  return staged != nullptr ? staged->self : nullptr;
}

// The system an actor belongs to. With checks on, aborts if it has been
// destroyed (a timer or a widget for an actor_ref that outlived it).
TACT_API actor_system& system_of(const cell* c) noexcept;

// For envelopes that carry something other than a message (a timer):
// posts {to, payload, run} to the queue a message to `to` would take, from
// a thread that is not one of its system's workers; refused if the system
// is stopping. Does not count a reference to `to`: the payload must hold
// one.
TACT_API post_outcome post_envelope(cell* to, void* payload,
                                    void (*run)(void*, void*) noexcept) noexcept;

// On a worker running such an envelope: if `to` is serialized and this is
// not its home queue, re-posts the envelope there (as a message would be)
// and returns true. False also if that queue could not grow: an actor
// serialized by collisions may run a message anywhere (see dispatch.cpp),
// so the envelope then runs here.
TACT_API bool forward_envelope(cell* to, void* payload,
                               void (*run)(void*, void*) noexcept) noexcept;

// A periodic timer to `to` skipped a tick: making its message threw
// `error` (reported: out_of_memory for std::bad_alloc, else as a
// behaviour's exception).
TACT_API void report_skipped_tick(const cell* to, std::exception_ptr error) noexcept;

// On a worker running such an envelope, on `to`'s home queue if it is
// serialized: addresses m to `to` (taking a reference) and runs it here
// and now, as if it had been queued.
TACT_API void run_here(::tact::tx::message* m, cell* to) noexcept;

}  // namespace tact::detail::tx
