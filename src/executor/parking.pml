/*
 * The parking protocol against work stealing, as the engine implements it
 * (parker::park and parker::wake, pool_worker::park,
 * runner::register_as_waiter, thief::steal_from, work_queue::register_waiter
 * and work_queue::post), checked with spin by tests/model/parking_model.py.
 *
 * Property: once the sender has posted all its messages and woken whom
 * the posts named, no worker is left parked while a queue holds mail; and
 * once work postponed for lack of memory is kept (executor::
 * postponed_begins: the flag, then a wake-up of one worker not running),
 * no worker is left parked while it waits (a parking worker checks the
 * flag after it stores its parking state, as it checks for stop).
 *
 * What it abstracts:
 *  - WORKERS workers (2 unless -DWORKERS=3 or 4), one ownership slot each
 *    (a pool worker loops over several; one is enough for the race between a
 *    registration and a swap), as many queues, one sender outside the
 *    workers posting MESSAGES messages (2 unless defined) to any queue.
 *  - A queue is its mail count, its being_processed flag and its waiter;
 *    every section under the queue's lock is one atomic step. Processing a
 *    batch is taking the whole mailbox and clearing being_processed.
 *  - A thief may try to take the queue of any other worker that has mail
 *    and is not being processed (the real worth_stealing is stricter, so
 *    this allows more interleavings, not fewer). The swap is the two-CAS
 *    swap of queue_swap.hpp, step by step.
 *  - A parked worker waits until its state is running (the futex).
 *    Watching for stranded queues is left out: it only helps a busy
 *    owner's mail along, and every worker here is either running (and
 *    sweeps before it parks again) or parked.
 *  - Every load, store, exchange and compare-and-swap is sequentially
 *    consistent, as in the code; spin explores interleavings, not weaker
 *    orders.
 *
 * Without SLOT_CHECK, a registration does not check that the slot it came
 * through still holds the queue: spin then finds the lost wake-up that
 * check closes (a parking worker loads its slot, a thief swaps the queue
 * away, drains it and registers; the late registration overwrites the
 * thief's, and the thief sleeps on its own mail).
 *
 * With GOVERNOR, a governor process changes the count of running workers
 * CHANGES times (1 unless defined), up or down as it likes, as
 * executor::set_active does: a pass held, the count, then a wake-up of
 * every worker.
 * A worker whose index is not below the count rests (pool_worker::rest:
 * parked as resting; in place of registering on queues, it wakes the
 * worker covering it); a running worker sweeps, and registers on, the slots of
 * the resting workers it covers (executor::for_each_covered), skipping a
 * null slot when it sweeps and giving up parking when it registers; a
 * wake-up that finds a worker resting is passed on to the worker covering
 * it (pool_worker::wake). The property then also says that no worker rests
 * whose index is below the count. A registration on a covered queue is
 * refused, under the queue's lock, if the count changed since the
 * registering worker read it; with NO_COUNT_CHECK it is not, and with two
 * changes spin finds mail stranded (a late covering registration
 * overwrote the one the queue's own worker made once it ran again, and
 * the late registrant, giving up parking, no longer covered it). A change
 * of the count holds a pass (executor::set_active), so the observer does
 * not count the system quiescent while one is in flight; with
 * NO_CHANGE_PASS it does not, and with two changes spin finds a worker
 * the count brought back still resting, its queue covered by nobody, while
 * every worker counts parked. The sender posts to the last worker's
 * queue only, where the races are (its worker may rest), which keeps the
 * search short. With NO_REST_WAKE a resting worker does not wake the
 * worker covering it: spin then finds mail stranded (the post woke the
 * worker about to rest, which had registered on its queue before the
 * count changed, and nobody woke the worker covering it; a thief's swap
 * into the slot of a worker still running, so not woken, is the same
 * race with more steps).
 *
 * With BUSY (and GOVERNOR), a behaviour of the last worker waits for the
 * answer that the message carries (any batch run gives it): stood down,
 * that worker cannot rest while it waits, and sleeps instead as
 * pool_worker::wait_stood_down does (parked as waiting, not counted; its
 * registration step wakes the worker covering it instead of registering
 * on its own queue, and after that step it does not sleep if the count
 * runs it again), until woken or answered. The observer then also fires
 * while it waits, and the property also says that no worker waits so
 * below the count. With NO_STOOD_DOWN_WAKE it does not wake the worker
 * covering it: spin then finds the mail stranded (a post woke it through
 * the registration it made before the count changed, and it went back to
 * sleep). With NO_STOOD_DOWN_ABORT it does not look at the count after
 * its registration step: with the count back up, spin finds it asleep
 * below the count, its queue swept by nobody.
 *
 * The quiescence count (quiescence::parked_) is a counter apart from the
 * states, and the observer also fires when it reads WORKERS, as
 * quiescence::reached does (it reads the count, never the states), and
 * then checks that every worker is parked. In the engine a worker adds one
 * after its commit to park or rest, and a wake takes the one back while
 * the state is still a parked one, then moves it to running by
 * compare-and-swap (giving the one back and trying again if the swap
 * fails: parker::wake). Every moment between those steps holds the count
 * lower than the workers in a parked state, never higher, and a lower
 * count cannot make the observer fire (it fires on the states too); so
 * here each of them is one step with its state change, which keeps the
 * count a function of the states and the search as short as before. With
 * WAKE_EXCHANGE_FIRST, a wake exchanges the state first and takes the
 * count back in a step of its own, as the engine once did: spin then finds
 * the count at WORKERS while a worker runs (a thief's wake of its victim
 * is preempted between the two steps, and the victim parks again and
 * counts itself twice). tests/executor/parker_test.cpp checks the engine's
 * order against racing wakes.
 *
 * The keeper runs only with POSTPONED (checked with one message, which
 * keeps the search short: the keeper's race is with parking, not with
 * the mail). With NO_POSTPONED_CHECK, a parking worker does not look at the
 * postponed flag: spin then finds a worker asleep while work waits (it
 * read the flag clear at its sweep, the keeper found it still running and
 * woke nobody).
 */

#ifndef WORKERS
#define WORKERS 2
#endif
#define QUEUES WORKERS
#ifndef MESSAGES
#define MESSAGES 2
#endif
#define NONE 255

#define RUNNING 0
#define PARKING 1
#define PARKED 2
#define RESTING 3
#define WAITING 4  /* stood down while a behaviour of its own waits (BUSY) */
#ifndef CHANGES
#define CHANGES 1
#endif

byte slot[WORKERS];
byte mail[QUEUES];
bool processing[QUEUES];
byte waiter[QUEUES];
byte state[WORKERS];
short parked = 0;        /* quiescence::parked_: may dip below zero for a moment */
bool all_posted = false;
bool postponed = false;  /* work kept for lack of memory waits */
bool kept = false;       /* the keeper is done */
byte count = WORKERS;   /* workers 0 .. count - 1 run (executor::active_workers) */
bool changing = false;   /* a change of the count is in flight: the governor holds a pass */
#ifdef BUSY
bool waits = true;       /* a behaviour of the last worker waits, for the mail's answer */
bool answered = false;   /* a worker ran a batch: the answer came */
#endif

/* a state the quiescence count counts */
#define COUNTED(s) (s == PARKED || s == RESTING)

/* work_queue::finish; with BUSY the batch carries the answer the last
   worker's behaviour waits for */
#ifdef BUSY
#define FINISH(q) d_step { processing[q] = false; answered = true }
#else
#define FINISH(q) processing[q] = false
#endif

/* executor::covering */
#define COVER(w) (w < count -> w : w % count)

/* pool_worker::wake (parker::wake, an exchange): a worker found resting
   passes the wake-up on to the worker covering it. Each step goes to a
   lower index, so it ends. */
inline wake(target) {
  x = target;
  do
  ::
#ifdef WAKE_EXCHANGE_FIRST
     atomic { prev = state[x]; state[x] = RUNNING };
     if :: COUNTED(prev) -> parked-- :: else -> skip fi;
#else
     /* The take-back, the swap (and a failed swap's give-back and retry)
        as one step: the engine's steps in between only hold the count
        lower than the parked workers, never higher, and a lower count
        cannot make the observer fire (see the header). */
     atomic { prev = state[x]; state[x] = RUNNING; if :: COUNTED(prev) -> parked-- :: else -> skip fi };
#endif
     if
#ifdef GOVERNOR
     :: prev == RESTING && COVER(x) != x -> x = COVER(x)
#endif
     :: else -> break
     fi
  od;
  x = 0;  /* dead values cleared, as below: fewer states to explore */
  prev = 0
}

init {
  byte i;
  atomic {
    for (i : 0 .. WORKERS - 1) { slot[i] = i; waiter[i] = NONE };
    run sender();
#ifdef GOVERNOR
    run governor();
#endif
#ifdef POSTPONED
    run keeper();
#else
    kept = true;
#endif
    for (i : 0 .. WORKERS - 1) { run worker(i) };
    run observer()
  }
}

/* executor::post_to_mailbox: append and take the waiter under the lock,
   then wake it. */
proctype sender() {
  byte sent = 0, q, w, x, prev;
  do
  :: sent < MESSAGES ->
#ifdef GOVERNOR
     q = QUEUES - 1;  /* the queue of the worker that may rest: its races */
#else
     select (q : 0 .. QUEUES - 1);
#endif
     atomic { mail[q]++; w = waiter[q]; waiter[q] = NONE };
     if :: w != NONE -> wake(w)
        :: else -> skip
     fi;
     sent++
  :: else -> break
  od;
  all_posted = true
}

/* executor::set_active: a pass held (quiescence::pass_begins), the count,
   a wake-up of every worker, the pass ended. */
proctype governor() {
  byte n = 0, w, x, prev;
  do
  :: n < CHANGES ->
#ifndef NO_CHANGE_PASS
     changing = true;
#endif
     if
     :: count > 1 -> count--
     :: count < WORKERS -> count++
     fi;
     for (w : 0 .. WORKERS - 1) { wake(w) };
     changing = false;
     n++
  :: else -> break
  od
}

/* transactional::postponed_sends::keep -> executor::postponed_begins: the
   flag, then a wake-up of the first worker found not running. */
proctype keeper() {
  byte w = 0, x, prev;
  postponed = true;
  do
  :: w < WORKERS && state[w] == RUNNING -> w++
  :: w < WORKERS && state[w] != RUNNING -> wake(w); break
  :: w == WORKERS -> break
  od;
  kept = true
}

proctype worker(byte me) {
  byte q, mine, theirs, other, c, a, x, prev;
  bool ok;
sweep:
  skip;
  d_step { q = 0; mine = 0; theirs = 0; other = 0; ok = false };  /* dead values cleared */
#ifdef GOVERNOR
  if :: me >= count -> goto rest
     :: else -> skip
  fi;
#endif
#ifdef POSTPONED
  /* retry_postponed, which here always finds the memory */
  if :: postponed -> postponed = false; goto sweep
     :: else -> skip
  fi;
#endif
  q = slot[me];
  atomic {  /* work_queue::gulp */
    if :: mail[q] > 0 && !processing[q] -> mail[q] = 0; processing[q] = true; ok = true
       :: else -> ok = false
    fi
  };
  if :: ok -> FINISH(q); goto sweep  /* the batch ran: work_queue::finish */
     :: else -> skip
  fi;
#ifdef GOVERNOR
  /* the slots of the resting workers it covers; a null one is skipped */
  a = count;
  c = me + a;
  do
  :: c < WORKERS ->
     q = slot[c];
     if
     :: q != NONE ->
        atomic {
          if :: mail[q] > 0 && !processing[q] -> mail[q] = 0; processing[q] = true; ok = true
             :: else -> ok = false
          fi
        };
        if :: ok -> FINISH(q); goto sweep
           :: else -> skip
        fi
     :: else -> skip
     fi;
     c = c + a
  :: else -> break
  od;
  a = 0;
  c = 0;
#endif
  /* steal_from: at most once per empty sweep, from any other worker */
  select (other : 0 .. WORKERS - 2);
  if :: other >= me -> other++ :: else -> skip fi;
  theirs = slot[other];
  if
  :: theirs != NONE && mail[theirs] > 0 && !processing[theirs] ->
     mine = slot[me];
     atomic { if :: slot[me] == mine -> slot[me] = NONE; ok = true :: else -> ok = false fi };
     if
     :: ok ->
        atomic { if :: slot[other] == theirs -> slot[other] = mine; ok = true :: else -> ok = false fi };
        if
        :: ok -> slot[me] = theirs;
           /* the victim may have registered on its old queue only: wake it */
           if :: state[other] != RUNNING -> wake(other) :: else -> skip fi
        :: else -> slot[me] = mine
        fi
     :: else -> skip
     fi;
     goto sweep
  :: true -> skip  /* nothing worth taking, or not now */
  fi;
  /* park */
  state[me] = PARKING;
  q = slot[me];  /* register_as_waiter's load of the slot */
  atomic {  /* work_queue::register_waiter, under the queue's lock */
    if
    :: mail[q] > 0 -> ok = false
#ifdef SLOT_CHECK
    :: mail[q] == 0 && slot[me] != q -> ok = false
    :: mail[q] == 0 && slot[me] == q -> waiter[q] = me; ok = true
#else
    :: mail[q] == 0 -> waiter[q] = me; ok = true
#endif
    fi
  };
#ifdef GOVERNOR
  /* executor::register_covered: the count, then each covered slot */
  a = count;
  c = me + a;
  do
  :: ok && c < WORKERS ->
     q = slot[c];
     if
     :: q == NONE -> ok = false
     :: else ->
        atomic {
          if
          :: mail[q] > 0 -> ok = false
          :: mail[q] == 0 && slot[c] != q -> ok = false
#ifndef NO_COUNT_CHECK
          :: mail[q] == 0 && slot[c] == q && count != a -> ok = false
          :: mail[q] == 0 && slot[c] == q && count == a -> waiter[q] = me
#else
          :: mail[q] == 0 && slot[c] == q -> waiter[q] = me
#endif
          fi
        }
     fi;
     c = c + a
  :: else -> break
  od;
  a = 0;
  c = 0;
#endif
#ifdef GOVERNOR
  if :: me >= count -> ok = false  /* the abort: stood down since the sweep; rests */
     :: else -> skip
  fi;
#endif
#if defined(POSTPONED) && !defined(NO_POSTPONED_CHECK)
  if :: postponed -> ok = false  /* parker::park's abort(), after the registration */
     :: else -> skip
  fi;
#endif
  if :: !ok -> state[me] = RUNNING; goto sweep
     :: else -> skip
  fi;
  /* the commit, and quiescence::parked() after it, as one step (a lower
     count meanwhile) */
  atomic { if :: state[me] == PARKING -> state[me] = PARKED; parked++; ok = true :: else -> ok = false fi };
  if :: !ok -> goto sweep
     :: else -> skip
  fi;
end_parked:
  (state[me] == RUNNING);  /* the futex wait */
  goto sweep
#ifdef GOVERNOR
rest:
#ifdef BUSY
  if :: me == WORKERS - 1 && waits -> goto stood_down
     :: else -> skip
  fi;
#endif
  /* pool_worker::rest: parker::park, whose registration step wakes the
     worker covering it instead of registering on queues */
  state[me] = PARKING;
#ifndef NO_REST_WAKE
  c = COVER(me);
  if :: c != me -> wake(c)
     :: else -> skip
  fi;
  c = 0;
#endif
  if :: me < count -> state[me] = RUNNING; goto sweep  /* the abort: running again */
     :: else -> skip
  fi;
  atomic { if :: state[me] == PARKING -> state[me] = RESTING; parked++; ok = true :: else -> ok = false fi };
  if :: !ok -> goto sweep
     :: else -> skip
  fi;
end_rested:
  (state[me] != RESTING);
  goto sweep
#endif
#ifdef BUSY
stood_down:  /* pool_worker::wait_stood_down: runner::wait(nullptr, false),
                parked waiting (not counted: the system is not quiescent),
                its registration step wakes the worker covering it instead of
                registering on its own queues, and it aborts once the count
                runs it again */
  state[me] = PARKING;
#ifndef NO_STOOD_DOWN_WAKE
  c = COVER(me);
  if :: c != me -> wake(c)
     :: else -> skip
  fi;
  c = 0;
#endif
#ifndef NO_STOOD_DOWN_ABORT
  if :: me < count -> state[me] = RUNNING; goto sweep
     :: else -> skip
  fi;
#endif
  atomic { if :: state[me] == PARKING -> state[me] = WAITING; ok = true :: else -> ok = false fi };
  if :: !ok -> goto sweep
     :: else -> skip
  fi;
  /* woken (a post to a queue it registered on before it was stood down,
     a change of the count), or the answer came: the behaviour resumes
     and ends, and nothing of the worker waits any more */
  if
  :: state[me] != WAITING -> skip
  :: atomic { state[me] == WAITING && answered -> state[me] = RUNNING; waits = false }
  fi;
  goto sweep
#endif
}

/* Everything posted and woken, every worker parked (or resting): nothing
   may be left, neither mail nor postponed work, and no worker below the
   count rests. */
#define STILL(w) (state[w] == PARKED || state[w] == RESTING || state[w] == WAITING)
#define RESTS_RIGHTLY(w) ((state[w] != RESTING && state[w] != WAITING) || w >= count)
#if WORKERS == 2
#define ALL_PARKED (STILL(0) && STILL(1))
#define RESTING_RIGHTLY (RESTS_RIGHTLY(0) && RESTS_RIGHTLY(1))
#define NO_MAIL (mail[0] == 0 && mail[1] == 0)
#elif WORKERS == 3
#define ALL_PARKED (STILL(0) && STILL(1) && STILL(2))
#define RESTING_RIGHTLY (RESTS_RIGHTLY(0) && RESTS_RIGHTLY(1) && RESTS_RIGHTLY(2))
#define NO_MAIL (mail[0] == 0 && mail[1] == 0 && mail[2] == 0)
#else
#define ALL_PARKED (STILL(0) && STILL(1) && STILL(2) && STILL(3))
#define RESTING_RIGHTLY \
  (RESTS_RIGHTLY(0) && RESTS_RIGHTLY(1) && RESTS_RIGHTLY(2) && RESTS_RIGHTLY(3))
#define NO_MAIL (mail[0] == 0 && mail[1] == 0 && mail[2] == 0 && mail[3] == 0)
#endif
proctype observer() {
end_watch:
  atomic { all_posted && kept && !changing && (ALL_PARKED || parked == WORKERS) ->
           assert(ALL_PARKED && NO_MAIL && !postponed && RESTING_RIGHTLY) }
}
