#include "scheduler.hpp"

#include <algorithm>
#include <utility>

#include <tact/detail/atomic.hpp>

namespace tact::model {
namespace {
scheduler* running_scheduler = nullptr;
}

scheduler::scheduler(std::uint64_t seed, strategy how, std::uint32_t horizon, std::uint32_t depth,
                     std::uint32_t steps)
    : random_{seed}, how_{how}, step_limit_{steps} {
  std::uniform_int_distribution<std::uint32_t> step{1, horizon};
  for (std::uint32_t i = 1; i < depth; ++i) change_points_.push_back(step(random_));
}

scheduler::~scheduler() {
  if (leak_)
    for (auto& t : threads_) (void)t.release();
}

void scheduler::spawn(std::function<void()> body) {
  auto t = std::make_unique<thread>();
  t->body = std::move(body);
  t->fiber = boost::context::fiber{[this, raw = t.get()](boost::context::fiber&& back) {
    back_ = std::move(back);
    raw->body();
    raw->done = true;
    return std::move(back_);
  }};
  threads_.push_back(std::move(t));
}

scheduler* scheduler::current() noexcept { return running_scheduler; }

std::string scheduler::run(const std::function<std::string()>& invariant) {
  if (how_ == strategy::pct) {
    // Distinct random priorities above every later drop.
    std::vector<std::int64_t> order(threads_.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(i + 1);
    std::shuffle(order.begin(), order.end(), random_);
    for (std::size_t i = 0; i < order.size(); ++i) threads_[i]->priority = order[i];
  }
  running_scheduler = this;
  for (;;) {
    if (invariant) {
      if (std::string broken = invariant(); !broken.empty()) {
        failure_ = "invariant: " + broken;
        break;
      }
    }
    if (std::all_of(threads_.begin(), threads_.end(), [](auto& t) { return t->done; })) break;
    if (++steps_ > step_limit_) {
      failure_ = "livelock: no end after " + std::to_string(step_limit_) + " steps";
      break;
    }
    thread& next = *threads_[pick()];
    running_ = &next;
    next.fiber = std::move(next.fiber).resume();
    running_ = nullptr;
    if (!failure_.empty()) break;
  }
  running_scheduler = nullptr;
  // Threads suspended inside engine code, which may be noexcept: unwinding
  // their fibers would terminate. Left as they are.
  if (!failure_.empty()) leak_ = true;
  return failure_;
}

std::size_t scheduler::pick() {
  std::vector<std::size_t> ready;
  for (std::size_t i = 0; i < threads_.size(); ++i)
    if (!threads_[i]->done) ready.push_back(i);
  if (how_ == strategy::random)
    return ready[std::uniform_int_distribution<std::size_t>{0, ready.size() - 1}(random_)];
  return *std::max_element(ready.begin(), ready.end(), [this](std::size_t a, std::size_t b) {
    return threads_[a]->priority < threads_[b]->priority;
  });
}

void scheduler::point(bool spinning) noexcept {
  if (running_ == nullptr) return;  // set-up code, outside the threads
  if (how_ == strategy::pct && (spinning || std::find(change_points_.begin(), change_points_.end(),
                                                      steps_) != change_points_.end()))
    running_->priority = --lowest_;
  back_ = std::move(back_).resume();
}

void scheduler::fail(std::string what) {
  failure_ = std::move(what);
  for (;;) back_ = std::move(back_).resume();  // never resumed again
}

}  // namespace tact::model

void tact::detail::model::schedule_point(bool spinning) noexcept {
  if (tact::model::scheduler* s = tact::model::scheduler::current()) s->point(spinning);
}
