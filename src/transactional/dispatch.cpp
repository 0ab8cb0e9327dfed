#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <tact/actor_system.hpp>
#include <tact/build_config.hpp>
#include <tact/defaults.hpp>
#include <tact/detail/tx_core.hpp>
#include <tact/tx/failure.hpp>
#include <tact/tx/message.hpp>
#include <tact/tx/rollback.hpp>
#include <tact/tx/transaction.hpp>

#include "executor/room.hpp"
#include "executor/seam.hpp"
#include "support/assert.hpp"
#include "support/type_name.hpp"
#include "transactional/behaviour_slot.hpp"
#include "transactional/dispatch.hpp"
#include "transactional/domain.hpp"
#include "transactional/ordered_actions.hpp"
#include "transactional/savepoint.hpp"

// Transactional delivery (xTActors): run a handler, collecting what it
// sends and becomes; at its normal exit commit all of it at once (the
// become by compare-and-swap on the actor's behaviour slot); on a lost race
// discard it and run the message again against the new behaviour; on an
// exception discard it and report.
//
// Where messages go. A parallel actor's message may run on any queue, so a
// commit queues its first send on the queue being processed (appended to
// the batch in hand while the budget lasts: a chain of sends stays on one
// worker, hot in its cache) and spreads the others round robin over this
// worker's own queues, from which idle workers steal. That is what lets one
// actor run on several workers at once, and why becomes need the CAS. A
// serialized actor's messages all go to its home queue, which only one
// worker processes at a time; one that reaches another queue (sent before
// the actor was serialized) is forwarded there, unless the worker running
// it holds the home queue too (runner::holds: a kept queue, whose actors'
// messages may join the batch in hand).
namespace tact::detail::tx {

using tact::tx::message;
using tact::tx::message_access;

constinit thread_local staging* staged __attribute__((tls_model("initial-exec"))) = nullptr;

namespace {

// The on_commit actions a handler stages (see transaction::batch); for a
// parallel actor, the actions of one commit waiting for their turn (see
// ordered_actions.hpp), where the rest of the fields serve. They may read
// what the commit's handler could (tx::self() and the other elements of
// the handled message, the captures of the behaviour that ran), so the
// batch keeps both: the message, which holds a reference to the actor,
// and the behaviour, the one the commit replaced (retired once the
// actions ran) or one more reference to it.
struct action_batch {
  action_batch* next = nullptr;
  std::vector<std::function<void()>> actions{};
  message* handled = nullptr;
  behaviour_base* ran = nullptr;
  bool replaced = false;  // `ran` was unlinked by this commit's become

  // Made by a handler's first on_commit: from the thread's block cache, as
  // messages are, not from the heap.
  static void* operator new(std::size_t size) { return allocate_block(size); }
  static void operator delete(void* block, std::size_t size) noexcept { free_block(block, size); }
};

// What one running handler has staged (the sends in its staging, see
// tx_core.hpp). Lives on the worker's stack.
struct transaction : staging {
  const message* handled;
  message* dropped = nullptr;      // sends a stopping system refused, freed after the commit
  // A bounded receiver the commit found full: the actor waits for room in
  // it once the commit is over (see wait_after_commit). Both are retained
  // (see mute_for): the handled message may be the last to hold the actor.
  cell* full = nullptr;
  behaviour_base* next = nullptr;  // staged become
  // The staged on_commit actions, made with the first, where running out
  // of memory rolls the handler back, since nothing may fail once the
  // commit has begun; where a parallel actor's actions wait for their
  // turn. Most handlers stage none: one pointer to test.
  std::unique_ptr<action_batch> batch{};

  bool has_actions() const noexcept { return batch != nullptr && !batch->actions.empty(); }

  // The commit found `to`, a bounded receiver, full: the actor will wait
  // for room in it. The actor is kept until then as well as `to`: the
  // handled message, or a send that borrowed its reference, may be gone by
  // the time it waits, and the wait reads the actor's own gauge.
  void mute_for(cell* to) noexcept {
    retain(to);
    retain(actor);
    full = to;
  }

  transaction(cell* a, const ::tact::tx::actor_ref* s, const message* h) noexcept
      : staging{a, s}, handled{h} {}

  // What was staged when a savepoint was taken (see run_in_savepoint). The
  // become staged then is set aside, so that one staged after the mark
  // can be undone without losing it.
  struct mark {
    message** last;
    bool borrowed;
    std::size_t actions;
    behaviour_base* next;
  };
  mark take_mark() noexcept {
    return {last, borrowed, batch != nullptr ? batch->actions.size() : 0,
            std::exchange(next, nullptr)};
  }
  // The savepoint's effects join the rest: a become staged after the mark
  // replaces the one set aside.
  void keep_since(const mark& m) noexcept {
    if (next == nullptr)
      next = m.next;
    else if (m.next != nullptr)
      m.next->release();
  }
  // Everything staged is discarded: a savepoint at the start.
  void discard() noexcept { discard_since({&first, false, 0, nullptr}); }
  // The effects staged since `m` are discarded. A send after the mark
  // that borrowed the handled message's reference takes one of its own
  // first, since its destruction releases one.
  void discard_since(const mark& m) noexcept {
    if (borrowed && !m.borrowed) {
      retain(actor);
      borrowed = false;
    }
    for (message* s = std::exchange(*m.last, nullptr); s != nullptr;)
      message_access::destroy(std::exchange(s, message_access::next(*s)));
    last = m.last;
    if (next != nullptr) next->release();
    next = m.next;
    if (batch != nullptr) batch->actions.resize(m.actions);
  }
};

// The transaction whose handler runs on this thread, if any. `staged` is
// set only by in_handler, always to a transaction, so the downcast holds.
transaction* running_transaction() noexcept { return static_cast<transaction*>(staged); }

// Names `tx` as the current transaction while a handler runs. The commit,
// the discard and the on_commit actions run after it: their sends are
// immediate.
class in_handler {
 public:
  explicit in_handler(transaction& tx) noexcept { staged = &tx; }
  ~in_handler() { staged = nullptr; }
  in_handler(const in_handler&) = delete;
  in_handler& operator=(const in_handler&) = delete;
};

// Which queue of the target's executor a message to `to` goes to, sent on
// `self`, a runner of that executor, or on none (nullptr). `first`: the
// first send of a commit, which may stay on the queue in hand.
// place() for an actor that is not serialized, sent on `self`.
inline std::uint32_t place_here(runner& self, bool first) noexcept {
  return first && self.current_queue() != runner::no_queue ? self.current_queue()
                                                           : self.next_own_queue();
}
std::uint32_t place(executor& ex, runner* self, const cell& to, bool first) noexcept {
  if (to.serialized.load(std::memory_order_relaxed)) return to.home;
  if (self == nullptr) return any_queue(ex);
  return place_here(*self, first);
}

// Whether a commit of an actor of `own`, on one of own's runners, may
// queue its sends to own's actors at once on that runner's executor: the
// system takes messages and keeps none postponed (a post must queue behind
// those).
inline bool open_for_posts(domain& own) noexcept {
  return !own.postponed().any() && !own.stopping();
}
// The same for one send, to `to`: it belongs to the same system.
inline bool queues_here(const cell& to, domain& own) noexcept {
  return to.dom == &own && open_for_posts(own);
}

// A send to a system that is stopping: it takes no more messages, so m is
// a dead letter, left to the caller to free.
void refuse(executor& ex) noexcept {
  count(ex, tally::dead_letter);
  count(ex, tally::rejected);
}

// With checks: m was sent through an actor_ref that outlived its system
// (the domain outlives it for this, see domain::hold).
[[noreturn, gnu::cold]] void sent_after_destruction(const message& m) noexcept {
  lifetime_violated("a " + m.describe() +
                    " message was sent to a transactional actor after its actor_system was "
                    "destroyed; an actor_ref may outlive its system, but only to be copied, "
                    "compared or dropped");
}

// m, sent to an actor with this gauge, is counted in its mailbox, and
// marked so that its delivery counts it received (see forwarded_home).
inline void count_sent(mailbox_gauge& gauge, message& m) noexcept {
  gauge.sent.fetch_add(1, std::memory_order_relaxed);
  message_access::mark_counted(m);
}

// Whether `to`'s mailbox is bounded and full.
inline bool is_full(const cell& to) noexcept {
  const mailbox_gauge* const gauge = to.gauge.load(std::memory_order_acquire);
  return gauge != nullptr && gauge->full();
}

// Queues m for its target; m must have one. `running`: the runner this runs
// on, if any; it need not belong to the target's system. `parallel`: sent
// by the commit of an actor not created serialized, which may run on any
// queue: its sends to a serialized actor, which keeps their order, take
// the mailbox even when the receiver's queue is the one in hand (see
// runner::appends_held). no_memory if the queue could not grow, and then
// nothing changed. Inlined: it is every transactional send's path.
[[gnu::always_inline]] inline post_outcome queue_now(message* m, runner* running, bool first,
                                                     bool parallel) noexcept {
  cell& to = *message_access::target(*m).cell();
  domain& d = *to.dom;
  executor& ex = d.ex();
  if (d.stopping()) [[unlikely]] {
    if constexpr (build::checks)
      if (d.gone()) sent_after_destruction(*m);
    refuse(ex);
    return post_outcome::refused;
  }
  runner* self = running != nullptr && &running->owner() == &ex ? running : nullptr;
  // A bounded receiver counts the message before it can run it. Acquire:
  // a gauge that collisions set comes after `serialized`, which place()
  // then finds set, so a counted message goes to the home queue.
  mailbox_gauge* const gauge = to.gauge.load(std::memory_order_acquire);
  if (gauge != nullptr) [[unlikely]]
    count_sent(*gauge, *m);
  try {
    std::optional<runner::appends_held> hold;
    if (parallel && self != nullptr && to.serialized.load(std::memory_order_relaxed))
      hold.emplace(*self);
    detail::post(ex, self, place(ex, self, to, first), &to, m, &deliver);
  } catch (const std::bad_alloc&) {
    if (gauge != nullptr) gauge->sent.fetch_sub(1, std::memory_order_relaxed);
    return post_outcome::no_memory;
  }
  return post_outcome::queued;
}

// Posts m to its target, as queue_now(); false if refused (m is then the
// caller's). Where the queue cannot grow, m waits with the domain's
// postponed sends, and so does every post while some wait (see
// postponed_sends), so nothing overtakes them. A sender that can be told
// (`may_throw`: a send from outside any handler) gets std::bad_alloc
// instead, m freed, as long as nothing waits: it sent nothing.
[[gnu::always_inline]] inline bool post(message* m, runner* running, bool first,
                                        bool parallel = false, bool may_throw = false) {
  domain& d = *message_access::target(*m).cell()->dom;
  if (!d.postponed().any()) [[likely]] {
    const post_outcome outcome = queue_now(m, running, first, parallel);
    if (outcome != post_outcome::no_memory) [[likely]]
      return outcome == post_outcome::queued;
    if (may_throw) {
      message_access::destroy(m);
      throw std::bad_alloc{};
    }
    note_memory_wait(d.ex(), "a committed transaction's send could not be queued");
  }
  if (d.postponed().keep(d.ex(), m)) return true;
  refuse(d.ex());
  return false;
}

// queue_now for a commit's common send, on `w`, a runner of the
// committing actor's system `own`: to an actor of `own`, which is `open`
// (open_for_posts, as the commit read it), neither serialized nor bounded
// (a bounded actor is serialized from its creation, and nothing clears the
// flag). What queue_now would check is known then, but the place. False
// for any other send, or if the queue could not grow: nothing was posted,
// and post() takes the send from there.
//
// A parallel actor's messages run anywhere and in any order, so one may go
// on the runner's stack (runner::can_stack_anywhere), to run next: a tree
// of actors that create and answer each other unfolds depth first, and
// only a path of it is alive at a time. Unless another worker is hungry:
// then it goes to that worker's queue, a share of the work
// (runner::hungry_queue).
[[gnu::always_inline]] inline bool queue_plain(message* m, cell& to, domain& own, bool open,
                                               runner& w, bool first) noexcept {
  if (to.serialized.load(std::memory_order_relaxed) || to.dom != &own || !open) return false;
  const std::uint32_t fed = w.hungry_queue();
  if (w.can_stack_anywhere() && (fed == runner::no_queue || w.give_oldest(fed))) {
    w.push_stack_anywhere(&to, m, &deliver);
    return true;
  }
  try {
    if (fed != runner::no_queue)
      detail::post_share(w.owner(), w, fed, &to, m, &deliver);
    else
      detail::post(w.owner(), &w, place_here(w, first), &to, m, &deliver);
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

// Whether a commit's send m, with more after it, may start a run (see
// post_run): to a serialized actor that queues_here(). Such an actor's
// messages all go to its home queue, whatever the sender: a run of them
// there keeps their order.
inline bool runs_from(message& m, domain& own) noexcept {
  const cell& to = *message_access::target(m).cell();
  return to.serialized.load(std::memory_order_relaxed) && queues_here(to, own);
}

// A commit's consecutive sends to one actor, from m (see runs_from), posted
// to its home queue as one envelope per defaults::claim_joins to tx_run_most of
// them (a burst, as a producer's commit of many increments), which
// deliver_run runs one by one: a lock and a line transfer per message
// would otherwise pace the producer, and its consumer's sweeps, reading
// the same line, would slow each post; and the burst's envelopes, 24
// bytes a message, would sit in the queue beside the messages themselves
// (tx_counting's ten million: 240 MB of them). Shorter runs are left to
// the sends one by one, which may claim the queue for a conversation. A
// bounded receiver is counted before the run can run; a run that fills it
// mutes the actor after its commit, as the next send would have. Returns
// the first message not posted (null: none left, and the list is
// consumed), whose `next` still links the rest; a run the queue could not
// take (no memory) is left to the sends one by one, which wait for
// memory. A run too short returns m: the look ahead is bounded by `least`.
[[gnu::noinline]] message* post_run(transaction& tx, runner& w, message* m) noexcept {
  constexpr std::uint32_t least = defaults::claim_joins;
  constexpr std::uint32_t most = defaults::tx_run_most;
  cell* const to = message_access::target(*m).cell();
  message* last = m;
  std::uint32_t n = 1;
  for (message* k = message_access::next(*m);
       n < most && k != nullptr && message_access::target(*k).cell() == to;
       k = message_access::next(*k)) {
    last = k;
    ++n;
  }
  if (n < least) return m;
  // Cut from the rest before it is posted: a posted run may run, and be
  // gone, at once.
  message* const after = std::exchange(message_access::next(*last), nullptr);
  mailbox_gauge* const gauge = to->gauge.load(std::memory_order_acquire);
  if (gauge != nullptr) [[unlikely]] {
    // Counted first, and looked at with the run counted: each send after
    // the one that fills the mailbox would have found it full. `to` is not
    // touched once the run is posted: its messages may have run, and their
    // references to it gone.
    gauge->sent.fetch_add(n, std::memory_order_relaxed);
    for (message* k = m; k != nullptr; k = message_access::next(*k))
      message_access::mark_counted(*k);
    if (tx.full == nullptr && to != tx.actor && gauge->full()) tx.mute_for(to);
  }
  try {
    // A parallel actor's sends to a serialized one take the mailbox, as
    // in queue_now.
    std::optional<runner::appends_held> hold;
    if (!tx.actor->exclusive) hold.emplace(w);
    detail::post(w.owner(), &w, to->home, to, m, &deliver_run);
  } catch (const std::bad_alloc&) {
    // The queue could not grow: the run, linked again to the rest, goes
    // one by one (and holds `to` meanwhile).
    if (gauge != nullptr) gauge->sent.fetch_sub(n, std::memory_order_relaxed);
    message_access::next(*last) = after;
    return m;
  }
  // The post counted the envelope as one message sent.
  w.counters.messages_sent.add(n - 1);
  return after;
}

// The sends of commit_sends() from m on, in order. Out of line: most
// commits send one message, to a parallel actor of their own system.
// Whether the commit left something for after it (see finish()).
[[gnu::noinline]] bool post_each(transaction& tx, runner& w, message* m) noexcept {
  bool first = true;
  const bool parallel = !tx.actor->exclusive;
  domain& own = *tx.actor->dom;
  // Read once for the commit's sends, as if they were all posted at that
  // instant (a stop that begins meanwhile finds them queued, as it finds
  // those of a commit just before it), and again after a send that took
  // post()'s way, since that one may be postponed: the later ones must
  // then queue behind it.
  bool open = open_for_posts(own);
  for (; m != nullptr; first = false) {
    if (message_access::next(*m) != nullptr && runs_from(*m, own)) [[unlikely]] {
      // A run went: what follows it may start another. (The same m back:
      // too short a run, or no memory for it; it goes one by one.)
      if (message* const rest = post_run(tx, w, m); rest != m) {
        m = rest;
        continue;
      }
    }
    message* next = std::exchange(message_access::next(*m), nullptr);
    cell* const to = message_access::target(*m).cell();
    if (queue_plain(m, *to, own, open, w, first)) [[likely]] {
      m = next;
      continue;
    }
    if (tx.full == nullptr && to != tx.actor && is_full(*to)) [[unlikely]]
      tx.mute_for(to);
    if (!post(m, &w, first, parallel)) [[unlikely]] {
      message_access::next(*m) = tx.dropped;
      tx.dropped = m;
    }
    open = open_for_posts(own);
    m = next;
  }
  return tx.dropped != nullptr || tx.full != nullptr;
}

// The commit's sends, in order, then the end of the loan (see transaction):
// `handled` gives up its reference to the actor if a send borrowed it. From
// here the actor may be reclaimed once that send has run, which it can do
// only after a become being committed is installed (it waits for the
// committing bit); a send the stopping system refused is kept until the
// commit is over (free_dropped), since freeing it drops a reference. So
// after this a commit touches the actor only to install its become.
//
// With on_commit actions to run, which may use tx::self() (the handled
// message's reference), the loan is settled the other way, before the
// sends can run: the borrowing send takes a reference of its own.
//
// Nothing here needs memory: a send whose queue cannot grow waits with the
// domain's postponed sends (see post()). Inline is a lone send to a
// parallel actor of the same system, queued at once. Whether the commit
// left something for after it: a send refused, or a full receiver to wait
// for (see finish()).
[[gnu::always_inline]] inline bool commit_sends(transaction& tx, runner& w,
                                                message& handled) noexcept {
  if (tx.borrowed && tx.has_actions()) {
    retain(tx.actor);
    tx.borrowed = false;
  }
  message* const m = std::exchange(tx.first, nullptr);
  tx.last = &tx.first;
  bool loose_ends = false;
  if (m != nullptr) {
    domain& own = *tx.actor->dom;
    if (message_access::next(*m) != nullptr ||
        !queue_plain(m, *message_access::target(*m).cell(), own, open_for_posts(own), w, true))
        [[unlikely]]
      loose_ends = post_each(tx, w, m);
  }
  if (std::exchange(tx.borrowed, false)) message_access::disown_target(handled);
  return loose_ends;
}

void free_dropped(transaction& tx) noexcept {
  for (message* m = std::exchange(tx.dropped, nullptr); m != nullptr;)
    message_access::destroy(std::exchange(m, message_access::next(*m)));
}

// Runs a commit's actions, once it is complete (an action that throws is
// reported; the rest still run). Out of line: most commits have none.
[[gnu::noinline]] void run_each_action(executor& ex,
                                       std::vector<std::function<void()>>& actions) noexcept {
  for (auto& action : actions) {
    try {
      action();
    } catch (...) {
      const std::exception_ptr error = std::current_exception();
      report_made(
          ex, diagnostic_kind::behaviour_exception,
          [&] {
            return "a tx::on_commit action threw " + describe(error) +
                   " after its transaction committed";
          },
          error);
    }
  }
  actions.clear();
}

// On whichever runner drains `c`'s actions. An action's sends are
// immediate (how a handler reaches classic actors): they must not join
// the batch in hand (see runner::appends_held), since a parallel actor is
// an actor of no queue.
void run_batch(cell& c, action_batch* b) noexcept {
  executor& ex = c.dom->ex();
  runner& w = *this_runner(ex);
  {
    const runner::appends_held hold{w};
    run_each_action(ex, b->actions);
  }
  if (b->replaced)
    w.retire(b->ran);
  else
    b->ran->release();
  message_access::destroy(b->handled);
  delete b;
}

// Finishes a parallel actor's commit that has actions, once its sends are
// queued: its actions are queued in the actor's commit order, then run by
// this runner or by the one draining the actor's actions already. The
// batch owns the handled message from here. For a become (`next`), they
// are queued while the commit still holds the committing bit, before
// `next` is installed (see ordered_actions.hpp), and `running` is retired
// only after them, since they may read its captures. The actor may be
// freed by the last batch's message: it is kept while this drains. The
// batch was made by the handler's first on_commit(), so nothing here
// needs memory.
void commit_in_order(cell& c, transaction& tx, message& handled, behaviour_base* running,
                     behaviour_base* next) noexcept {
  const bool replaced = next != nullptr;
  if (!replaced) running->retain();  // still the actor's: pinned, see behaviour_base::release
  action_batch* const b = tx.batch.release();  // made by on_commit()
  b->handled = &handled;
  b->ran = running;
  b->replaced = replaced;
  queue_batch(c.actions, b);
  if (replaced) install(c, next);
  retain(&c);
  drain_batches<action_batch>(c.actions, [&c](action_batch* b) { run_batch(c, b); });
  release(&c);
  free_dropped(tx);
}

// A become of an actor created serialized (cell::exclusive). Its messages
// all go to its home queue (place() sends them there from its creation on,
// and nothing clears the flag), which one thread at a time processes
// (being_processed; a held queue stays with its holder), one envelope at a
// time. A handler never suspends (ask refuses to run in one); an on_commit
// action may ask and be suspended, but its queue stays being_processed
// meanwhile, and `running` is released only after the actions. So this
// thread alone reads and writes the slot: there is no race
// to settle (no compare-and-swap, no committing bit), and no other thread
// can be running `running`, so it is released here instead of retired to
// the epochs: its block goes back to this thread's cache while still hot,
// for the next become to reuse. The next thread to process the home queue
// gulps it after this one lets it go, so it sees the new behaviour. After
// the actions, which may still read the captures of the behaviour that
// staged them.
void commit_exclusive(executor& ex, cell& c, transaction& tx, runner& w, dispatch_counts& counted,
                      message& handled, behaviour_base* running) noexcept {
  if constexpr (build::checks) {
    if (behaviour_in(c.slot.load(std::memory_order_relaxed)) != running) {
      std::fputs("tact: bug: two dispatches of a serialized transactional actor at once\n",
                 stderr);
      std::abort();
    }
  }
  commit_sends(tx, w, handled);
  install(c, std::exchange(tx.next, nullptr));
  if (tx.has_actions()) [[unlikely]]
    run_each_action(ex, tx.batch->actions);
  running->release();
  counted.commits.add();
  counted.becomes.add();
}

void report_rollback(executor& ex, transaction& tx, const message& m,
                     std::exception_ptr error) noexcept {
  const auto& handler = config_of(ex).on_rollback;
  if (!handler) return;
  try {
    handler(::tact::tx::rollback{system_of(ex), *tx.self, m, std::move(error)});
  } catch (...) {
    report_made(
        ex, diagnostic_kind::behaviour_exception,
        [] { return std::string{"system_config::on_rollback threw; it must not"}; },
        std::current_exception());
  }
}

// m's customer, if m is a request and its customer asked to hear of
// failures (see cell::told_of_failures).
const ::tact::tx::actor_ref* listening_customer(const message& m) noexcept {
  if (!message_access::is_request(m)) return nullptr;
  const ::tact::tx::actor_ref* customer = m.customer();
  return customer != nullptr && *customer && customer->cell()->told_of_failures ? customer
                                                                                : nullptr;
}

// A customer that asked to hear of failures gets one. Sent as from outside
// any handler: immediately.
void tell_customer(const message& m, std::exception_ptr error) noexcept {
  const ::tact::tx::actor_ref* customer = listening_customer(m);
  if (customer == nullptr) return;
  try {
    ::tact::tx::send(*customer, ::tact::tx::failure{std::move(error)});
  } catch (...) {
    // Out of memory: the asker is left to its timeout.
  }
}

// No handler took m. With checks on, the program hears of it: a message
// that matches nothing is usually a wrong element type (an int sent to a
// handler of long), which would otherwise vanish without a trace. Out of
// memory, the report goes.
void report_unmatched(executor& ex, const message& m) noexcept {
  if constexpr (build::checks)
    report_made(ex, diagnostic_kind::unmatched_message, [&] {
      return "a transactional actor has no handler for a message of " + m.describe() +
             "; it was dropped";
    });
}

// No handler took m: a customer that hears of failures is told, since its
// request can never be answered.
void tell_unmatched(const message& m) noexcept {
  if (listening_customer(m) == nullptr) return;
  try {
    throw std::logic_error{"tact: no handler matches a message of " + m.describe()};
  } catch (...) {
    tell_customer(m, std::current_exception());
  }
}

// A commit of c sent to a bounded receiver that was full (`full`; both
// retained, see transaction::mute_for): the actor waits, muted, until that
// mailbox is down to half its bound (docs/flow_control.md). It is
// suspended on its worker as an ask inside a behaviour is, its later
// messages on this queue held back meanwhile, unless its runner cannot
// suspend it (a sponsor's), it must not wait (its own mailbox is full: see
// executor/room.hpp) or there is no memory to wait with; then it goes on,
// counted.
void wait_for_room_after(executor& ex, runner& w, cell& c, cell* full) noexcept {
  const room_wait why{c.gauge.load(std::memory_order_acquire), nullptr, nullptr,
                      &stopping_flag(ex)};
  bool waited = false;
  if (w.can_suspend() && !must_go_on(why)) {
    try {
      suspend_for_room(w, static_cast<bounded_gauge&>(*full->gauge.load(std::memory_order_acquire)),
                       why);
      waited = true;
    } catch (...) {
    }
  }
  count(ex, waited ? tally::sends_waited : tally::over_bound);
  release(full);
  release(&c);
}

// After a commit: waits if it found a bounded receiver full (the rare case
// out of line).
inline void wait_after_commit(executor& ex, runner& w, transaction& tx) noexcept {
  if (tx.full != nullptr) [[unlikely]]
    wait_for_room_after(ex, w, *tx.actor, std::exchange(tx.full, nullptr));
}

// Sends m on to the home queue of c, serialized by collisions since m was
// queued elsewhere. False if that queue cannot grow: m then runs here, as
// a message that missed the flag may (the compare-and-swap keeps its
// become correct; an actor created serialized has all its messages queued
// at home from the start).
bool forward_home(executor& ex, runner& w, cell& c, message* m) noexcept {
  try {
    detail::post(ex, &w, c.home, &c, m, &deliver);
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

// A handler threw: nothing it staged happens, and whoever listens hears.
void roll_back(executor& ex, transaction& tx, dispatch_counts& counted, const message& m,
               std::exception_ptr error) noexcept {
  tx.discard();
  counted.rollbacks.add();
  report_rollback(ex, tx, m, error);
  tell_customer(m, std::move(error));
}

// What one run of a handler came to.
enum class outcome : std::uint8_t { matched, unmatched, threw };

// Runs m against `running` with tx as the current transaction; a throw is
// rolled back here.
[[gnu::always_inline]] inline outcome run_handler(executor& ex, transaction& tx,
                                                  dispatch_counts& counted,
                                                  const behaviour_base& running,
                                                  const message& m) noexcept {
  try {
    const in_handler handling{tx};
    return running.dispatch(m) ? outcome::matched : outcome::unmatched;
  } catch (...) {
    roll_back(ex, tx, counted, m, std::current_exception());
    return outcome::threw;
  }
}

// The end of a delivery that ran its course on this runner: m is done
// with, then what the commit left for afterwards (sends a stopping system
// refused, a full receiver to wait for), if `loose_ends` says there may
// be some (free_dropped and wait_after_commit look for themselves).
inline void finish(executor& ex, runner& w, transaction& tx, message* m, bool loose_ends) noexcept {
  message_access::destroy(m);
  if (loose_ends) [[unlikely]] {
    free_dropped(tx);
    wait_after_commit(ex, w, tx);
  }
}

// A message to a serialized actor, on `w`: true if it was sent on to the
// actor's home queue, to run there (counted as a dispatch here); else it
// runs here, counted received if its sender counted it (a bounded actor's
// gauge). The receiver's count is a plain one: only a runner holding the
// home queue writes it, one message at a time. Counted messages went
// there (see queue_now); one that runs elsewhere (its home queue could
// not take it back, for lack of memory) takes its count back from `sent`
// instead, an atomic any thread may change. Messages that missed a gauge
// set by collisions were never counted, wherever they run.
[[gnu::noinline]] bool forwarded_home(executor& ex, runner& w, dispatch_counts& counted, cell& c,
                                      message* m) noexcept {
  const bool home = w.holds(c.home);
  if (!home && forward_home(ex, w, c, m)) {
    counted.dispatches.add();
    return true;
  }
  if (message_access::is_counted(*m)) {
    mailbox_gauge& gauge = *c.gauge.load(std::memory_order_relaxed);
    if (home)
      note_received(gauge);
    else
      gauge.sent.fetch_sub(1, std::memory_order_relaxed);
  }
  return false;
}

// Collisions have serialized c (this thread set the flag, once): from here
// its mailbox is bounded by the system's collision_bound, if it has one.
// Its messages now run on one worker, which senders on all the others can
// outrun without end; a bound mutes them instead. Released after the flag
// (see queue_now). Without memory for the gauge, c stays unbounded.
[[gnu::cold]] void bound_serialized(cell& c, const domain& d) noexcept {
  if (d.collision_bound() == 0) return;
  try {
    c.gauge.store(make_gauge(d.collision_bound(), overflow::wait), std::memory_order_release);
  } catch (const std::bad_alloc&) {
  }
}

// The behaviour a dispatch runs, read once no become is being committed
// and marked as this runner's (runner::protect), so that an epoch this
// runner stalls (descheduled in the middle of its batch) holds back only
// it. @pre w is pinned.
inline behaviour_base* running_behaviour(runner& w, const cell& c) noexcept {
  return w.protect([&c] { return behaviour_in(settled_slot(c)); });
}

// Everything but deliver()'s common end, from the handler's first run on:
// a throw (rolled back already), no handler matched, a become to commit,
// on_commit actions, a lost race and its retries. `running` ran first and
// `ran` says how.
[[gnu::noinline]] void deliver_rest(cell& c, message* m, runner& w, dispatch_counts& counted,
                                    transaction& tx, behaviour_base* running,
                                    outcome ran) noexcept {
  domain& d = *c.dom;
  executor& ex = d.ex();
  counted.dispatches.add();
  for (std::uint32_t collisions = 0;;) {
    if (ran == outcome::threw) break;
    if (ran == outcome::unmatched) {
      tx.discard();
      counted.unmatched.add();
      report_unmatched(ex, *m);
      tell_unmatched(*m);
      break;
    }
    if (tx.next == nullptr) {
      commit_sends(tx, w, *m);
      counted.commits.add();
      if (!tx.has_actions()) break;
      // An actor created serialized runs one commit at a time, in order:
      // its actions run here, now. A parallel one's wait for their turn.
      if (c.exclusive) {
        run_each_action(ex, tx.batch->actions);
        break;
      }
      commit_in_order(c, tx, *m, running, nullptr);
      wait_after_commit(ex, w, tx);
      return;
    }
    if (c.exclusive) {
      commit_exclusive(ex, c, tx, w, counted, *m, running);
      break;
    }
    // Claim the slot, publish the sends, then install the new behaviour
    // (see behaviour_slot.hpp). Fails if another invocation committed a
    // become since we read the slot, or is committing one now.
    if (claim(c, running)) {
      commit_sends(tx, w, *m);
      counted.commits.add();
      counted.becomes.add();
      if (!tx.has_actions()) [[likely]] {
        install(c, std::exchange(tx.next, nullptr));
        w.retire(running);
        break;
      }
      commit_in_order(c, tx, *m, running, std::exchange(tx.next, nullptr));
      wait_after_commit(ex, w, tx);
      return;
    }
    tx.discard();
    counted.collisions.add();
    if (++collisions >= d.collision_limit() &&
        !c.serialized.exchange(true, std::memory_order_relaxed)) {
      counted.serializations.add();
      bound_serialized(c, d);
    }
    if (c.serialized.load(std::memory_order_relaxed) && !w.holds(c.home) &&
        forward_home(ex, w, c, m))
      return;
    counted.retries.add();
    running = running_behaviour(w, c);
    ran = run_handler(ex, tx, counted, *running, *m);
  }
  finish(ex, w, tx, m, true);
}

}  // namespace

std::uint32_t drop(const envelope& e) noexcept {
  message_access::destroy(static_cast<message*>(e.message));
  return 1;
}

std::uint32_t drop_run(const envelope& e) noexcept {
  std::uint32_t n = 0;
  for (message* m = static_cast<message*>(e.message); m != nullptr; ++n)
    message_access::destroy(std::exchange(m, message_access::next(*m)));
  return n;
}

bool retry_postponed(void* d) noexcept {
  domain& dom = *static_cast<domain*>(d);
  runner* const self = this_runner(dom.ex());
  return dom.postponed().retry(dom.ex(), [self](message* m) {
    const post_outcome outcome = queue_now(m, self, false, false);
    if (outcome == post_outcome::refused) message_access::destroy(m);
    return outcome;
  });
}

void refuse_postponed(void* d) noexcept {
  domain& dom = *static_cast<domain*>(d);
  dom.postponed().refuse_all(dom.ex(), [&dom](message* m) {
    refuse(dom.ex());
    message_access::destroy(m);
  });
}

// Inline here is the common delivery only: a handler that matched, staged
// no become and no action, and is committed by queuing its sends (counted
// once, as dispatch_counts::plain). The rest is deliver_rest's, out of
// line, so that this path keeps few registers and a small frame: it runs
// once per transactional message.
void deliver(void* target, void* msg) noexcept {
  cell& c = *static_cast<cell*>(target);
  message* m = static_cast<message*>(msg);
  domain& d = *c.dom;
  executor& ex = d.ex();
  // Only ex's runners run its queues' envelopes.
  runner& w = *this_thread_runner;
  TACT_ASSERT(&w.owner() == &ex, "a transactional message runs on a runner of its system");
  dispatch_counts& counted = d.counts(w);
  // `serialized` only routes messages, so relaxed is enough: a message that
  // misses the flag runs here, in parallel, and the CAS keeps its become
  // correct; the flag only has to be seen eventually, which bounds retries.
  if (c.serialized.load(std::memory_order_relaxed)) [[unlikely]]
    if (forwarded_home(ex, w, counted, c, m)) return;
  // Before the slot is read. Pinned already earlier in this batch: catches
  // up with the epoch, since we hold no behaviour between dispatches.
  w.pin();
  transaction tx{&c, &message_access::target(*m), m};
  behaviour_base* const running = running_behaviour(w, c);
  const outcome ran = run_handler(ex, tx, counted, *running, *m);
  if (ran != outcome::matched || tx.next != nullptr || tx.batch != nullptr) [[unlikely]] {
    deliver_rest(c, m, w, counted, tx, running, ran);
    return;
  }
  const bool loose_ends = commit_sends(tx, w, *m);
  counted.plain.add();
  finish(ex, w, tx, m, loose_ends);
}

void deliver_run(void* target, void* first) noexcept {
  std::uint64_t n = 0;
  for (message* m = static_cast<message*>(first); m != nullptr; ++n) {
    // Unlinked before it runs: its handler may stage it again, or free it.
    message* const next = std::exchange(message_access::next(*m), nullptr);
    deliver(target, m);
    m = next;
  }
  // The runner counted the envelope as one message processed. A handler
  // that waited may have resumed here on another context, not another
  // runner: the thread is the same.
  this_thread_runner->counters.messages_processed.add(n - 1);
}

void destroy(cell* c) noexcept {
  domain* const d = c->dom;
  behaviour_in(c->slot.load(std::memory_order_relaxed))->release();
  free_gauge(c->gauge.load(std::memory_order_relaxed));
  delete c;
  if constexpr (build::checks) domain::let_go(d);
}

void send_now(message* m, cell* to) {
  if (to == nullptr) [[unlikely]] {
    // An empty reference names no system: count it in the one this code
    // runs in (a behaviour's, else the process default), if any.
    if (executor* ex = ambient_executor()) domain_of(system_of(*ex)).count_dropped();
    message_access::destroy(m);
    return;
  }
  retain(to);
  message_access::address(*m, to);
  // An immediate send (a thread's, an on_commit action's) never waits.
  if (is_full(*to)) [[unlikely]]
    count(to->dom->ex(), tally::over_bound);
  if (!post(m, this_runner(to->dom->ex()), false, false, true)) message_access::destroy(m);
}

void note_request(message& m) noexcept {
  const ::tact::tx::actor_ref* customer = m.customer();
  if (customer == nullptr || !*customer) return;
  if (const transaction* current = running_transaction(); current != nullptr) {
    const ::tact::tx::actor_ref* handled = current->handled->customer();
    if (handled != nullptr && handled->cell() == customer->cell()) return;
  }
  message_access::mark_request(m);
}

void become(behaviour_base* b) {
  transaction* const current = running_transaction();
  if (b == nullptr) throw std::invalid_argument{"tact: tx::become with a moved-from behaviour"};
  if (current == nullptr) {
    b->release();
    throw std::logic_error{"tact: tx::become called outside a transactional handler"};
  }
  if (current->next != nullptr) current->next->release();
  current->next = b;
}

cell* create(behaviour_base* b, bool serialized, actor_system* system, std::uint32_t bound) {
  if (b == nullptr)
    throw std::invalid_argument{"tact: tx::create or tx::spawn with a moved-from behaviour"};
  domain* d = nullptr;
  if (system != nullptr)
    d = &domain_of(*system);
  else if (staged != nullptr)
    d = staged->actor->dom;
  if (d == nullptr) {
    b->release();
    throw std::logic_error{
        "tact: tx::create called outside a transactional handler; use tx::spawn(system, ...)"};
  }
  cell* c = nullptr;
  try {
    c = new cell;
    if (bound != 0) c->gauge.store(make_gauge(bound, overflow::wait), std::memory_order_relaxed);
  } catch (...) {
    delete c;
    b->release();  // ours since the call: a create that throws leaves nothing behind
    throw;
  }
  c->dom = d;
  if constexpr (build::checks) d->hold();
  // Created for a sponsor (see sponsor::spawn): serialized on its queue.
  const std::uint32_t sponsored = queue_in_scope(d->ex());
  c->home = sponsored != runner::no_queue ? sponsored : home_queue(d->ex());
  // A bounded actor is serialized, for good: deliver() and commit_sends()
  // test the flag alone before the gauge.
  c->exclusive = serialized || bound != 0 || sponsored != runner::no_queue;
  c->serialized.store(c->exclusive, std::memory_order_relaxed);
  c->slot.store(reinterpret_cast<std::uintptr_t>(b), std::memory_order_relaxed);
  return c;
}

// Where a timer or a widget for `c` starts: with checks, an actor_ref that
// outlived its system is caught here.
actor_system& system_of(const cell* c) noexcept {
  if constexpr (build::checks)
    if (c->dom->gone())
      lifetime_violated(
          "a timer or a widget was made for a transactional actor after its actor_system was "
          "destroyed; an actor_ref may outlive its system, but only to be copied, compared or "
          "dropped");
  return system_of(c->dom->ex());
}

post_outcome post_envelope(cell* to, void* payload, run_fn run_payload) noexcept {
  if (to->dom->stopping()) return post_outcome::refused;
  executor& ex = to->dom->ex();
  try {
    detail::post(ex, nullptr, place(ex, nullptr, *to, false), to, payload, run_payload);
  } catch (const std::bad_alloc&) {
    return post_outcome::no_memory;
  }
  return post_outcome::queued;
}

bool forward_envelope(cell* to, void* payload, run_fn run_payload) noexcept {
  executor& ex = to->dom->ex();
  runner& w = *this_runner(ex);
  if (!to->serialized.load(std::memory_order_relaxed) || w.holds(to->home))
    return false;
  try {
    detail::post(ex, &w, to->home, to, payload, run_payload);
  } catch (const std::bad_alloc&) {
    return false;
  }
  return true;
}

void report_skipped_tick(const cell* to, std::exception_ptr error) noexcept {
  bool no_memory = false;
  try {
    std::rethrow_exception(error);
  } catch (const std::bad_alloc&) {
    no_memory = true;
  } catch (...) {
  }
  report_made(
      to->dom->ex(),
      no_memory ? diagnostic_kind::out_of_memory : diagnostic_kind::behaviour_exception,
      [&] {
        return "a periodic transactional timer skipped a tick: making its message threw " +
               describe(error);
      },
      error);
}

void run_here(message* m, cell* to) noexcept {
  retain(to);
  message_access::address(*m, to);
  // Counted as sent, since deliver() counts it received.
  if (mailbox_gauge* const gauge = to->gauge.load(std::memory_order_acquire); gauge != nullptr)
    count_sent(*gauge, *m);
  deliver(to, m);
}

void on_commit(std::function<void()> action) {
  transaction* const current = running_transaction();
  if (current == nullptr)
    throw std::logic_error{"tact: tx::on_commit called outside a transactional handler"};
  if (current->batch == nullptr) current->batch = std::make_unique<action_batch>();
  current->batch->actions.push_back(std::move(action));
}

void run_in_savepoint(const std::function<void()>& body) {
  if (staged == nullptr)
    throw std::logic_error{"tact: a savepoint taken outside a transactional handler"};
  transaction& tx = *running_transaction();
  const transaction::mark m = tx.take_mark();
  try {
    body();
  } catch (...) {
    tx.discard_since(m);
    throw;
  }
  tx.keep_since(m);
}

}  // namespace tact::detail::tx

namespace tact::tx {

std::string message::describe() const {
  std::string text = "(";
  for (std::size_t i = 0; i < type()->size; ++i) {
    if (i > 0) text += ", ";
    text += detail::type_name(*type()->elements[i]);
  }
  return text + ")";
}

void report_rollback(const rollback& r) {
  detail::report(detail::executor_of(r.system), diagnostic_kind::behaviour_exception,
                 "a transactional actor threw " + detail::describe(r.error) + " while handling " +
                     r.msg.describe() + "; its sends and become were discarded",
                 r.error);
}

}  // namespace tact::tx
