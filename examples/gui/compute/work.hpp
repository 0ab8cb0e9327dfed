// The work, on the executor's workers: a coordinator splits a count of
// primes into chunks and hands them to counter actors, one chunk per idle
// counter, so a cancelled job leaves at most one chunk per counter to
// finish. It reports to the dashboard, which runs on the GUI thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <tact/tact.hpp>

#include "dashboard.hpp"
#include "messages.hpp"
#include "primes.hpp"

class counter : public tact::actor {
 public:
  tact::allocation receive(chunk& m);
};

class coordinator : public tact::actor {
  using clock = std::chrono::steady_clock;

 public:
  coordinator(dashboard& board, std::uint32_t counters) : board_{board} {
    for (std::uint32_t i = 0; i < counters; ++i) counters_.push_back(&system().spawn<counter>());
    idle_ = counters_;
  }

  tact::allocation receive(set_limit& m) {
    n_ = m.n;
    board_ | *new settings{n_, chunks_};
    return Nodelete;
  }
  tact::allocation receive(set_chunks& m) {
    chunks_ = m.chunks;
    board_ | *new settings{n_, chunks_};
    return Nodelete;
  }

  tact::allocation receive(start&) {
    running_ = true;
    ++job_;
    job_n_ = n_;
    job_chunks_ = chunks_;
    next_ = done_ = primes_ = 0;
    base_ = std::make_shared<const std::vector<std::uint32_t>>(primes_up_to(integer_sqrt(n_)));
    started_ = clock::now();
    board_ | *new started{job_};
    for (counter* c : std::exchange(idle_, {})) hand_out(*c);
    return Nodelete;
  }

  tact::allocation receive(cancel&) {
    stop_job();
    return Nodelete;
  }

  tact::allocation receive(chunk_counted& m) {
    --busy_;
    if (running_ && m.job == job_) {  // otherwise a chunk of a cancelled job
      primes_ += m.primes;
      if (++done_ < job_chunks_) {
        board_ | *new progress{job_, done_};
      } else {
        running_ = false;
        const std::chrono::duration<double> took = clock::now() - started_;
        board_ | *new counted{job_, primes_, took.count()};
      }
    }
    if (closing_ && busy_ == 0) return finish();
    hand_out(*m.from);
    return Nodelete;
  }

  // Once the chunks out have come back, the counters and the coordinator
  // finish; nothing is sent to the dashboard afterwards.
  tact::allocation receive(shut_down&) {
    stop_job();
    closing_ = true;
    return busy_ == 0 ? finish() : Nodelete;
  }

 private:
  // The next chunk of the job in progress to `c`, or `c` waits.
  void hand_out(counter& c) {
    if (!running_ || next_ == job_chunks_) {
      idle_.push_back(&c);
      return;
    }
    const std::uint64_t lo = job_n_ * next_ / job_chunks_;
    const std::uint64_t hi = job_n_ * (next_ + 1) / job_chunks_;
    ++next_;
    ++busy_;
    c | *new chunk{job_, lo, hi, base_, *this};
  }

  void stop_job() {
    if (!running_) return;
    running_ = false;
    board_ | *new cancelled{job_};
  }

  tact::allocation finish() {
    for (counter* c : counters_) *c | tact::delete_msg;
    return Delete;
  }

  dashboard& board_;
  std::vector<counter*> counters_, idle_;
  std::uint64_t n_ = 0, chunks_ = 1;
  // The job in progress (or the last one).
  bool running_ = false, closing_ = false;
  std::uint64_t job_ = 0, job_n_ = 0, job_chunks_ = 0;
  std::uint64_t next_ = 0, done_ = 0, primes_ = 0;
  std::uint32_t busy_ = 0;  // chunks out with counters, of any job
  prime_table base_;
  clock::time_point started_;
};

inline tact::allocation counter::receive(chunk& m) {
  *m.reply_to | *new chunk_counted{m.job, count_primes(m.lo, m.hi, *m.base), *this};
  return Nodelete;
}
