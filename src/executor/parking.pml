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

byte slot[WORKERS];
byte mail[QUEUES];
bool processing[QUEUES];
byte waiter[QUEUES];
byte state[WORKERS];
bool all_posted = false;
bool postponed = false;  /* work kept for lack of memory waits */
bool kept = false;       /* the keeper is done */

init {
  byte i;
  atomic {
    for (i : 0 .. WORKERS - 1) { slot[i] = i; waiter[i] = NONE };
    run sender();
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
  byte sent = 0, q, w;
  do
  :: sent < MESSAGES ->
     select (q : 0 .. QUEUES - 1);
     atomic { mail[q]++; w = waiter[q]; waiter[q] = NONE };
     if :: w != NONE -> state[w] = RUNNING  /* wake(): exchange to running */
        :: else -> skip
     fi;
     sent++
  :: else -> break
  od;
  all_posted = true
}

/* transactional::postponed_sends::keep -> executor::postponed_begins: the
   flag, then a wake-up of the first worker found not running. */
proctype keeper() {
  byte w = 0;
  postponed = true;
  do
  :: w < WORKERS && state[w] == RUNNING -> w++
  :: w < WORKERS && state[w] != RUNNING -> state[w] = RUNNING; break
  :: w == WORKERS -> break
  od;
  kept = true
}

proctype worker(byte me) {
  byte q, mine, theirs, other;
  bool ok;
sweep:
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
  if :: ok -> processing[q] = false; goto sweep  /* the batch ran: work_queue::finish */
     :: else -> skip
  fi;
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
           if :: state[other] != RUNNING -> state[other] = RUNNING :: else -> skip fi
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
#if defined(POSTPONED) && !defined(NO_POSTPONED_CHECK)
  if :: postponed -> ok = false  /* parker::park's abort(), after the registration */
     :: else -> skip
  fi;
#endif
  if :: !ok -> state[me] = RUNNING; goto sweep
     :: else -> skip
  fi;
  atomic { if :: state[me] == PARKING -> state[me] = PARKED; ok = true :: else -> ok = false fi };
  if :: !ok -> goto sweep
     :: else -> skip
  fi;
end_parked:
  (state[me] == RUNNING);  /* the futex wait */
  goto sweep
}

/* Everything posted and woken, every worker parked: nothing may be left,
   neither mail nor postponed work. */
#if WORKERS == 2
#define ALL_PARKED (state[0] == PARKED && state[1] == PARKED)
#define NO_MAIL (mail[0] == 0 && mail[1] == 0)
#elif WORKERS == 3
#define ALL_PARKED (state[0] == PARKED && state[1] == PARKED && state[2] == PARKED)
#define NO_MAIL (mail[0] == 0 && mail[1] == 0 && mail[2] == 0)
#else
#define ALL_PARKED \
  (state[0] == PARKED && state[1] == PARKED && state[2] == PARKED && state[3] == PARKED)
#define NO_MAIL (mail[0] == 0 && mail[1] == 0 && mail[2] == 0 && mail[3] == 0)
#endif
proctype observer() {
end_watch:
  atomic { all_posted && kept && ALL_PARKED -> assert(NO_MAIL && !postponed) }
}
