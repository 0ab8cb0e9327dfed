#include "executor/stepper.hpp"

#include <algorithm>

#include "executor/executor.hpp"
#include "mailbox/work_queue.hpp"

namespace tact::detail {

// The runner owns every queue (round robin over all of them for what its
// behaviours create and send), and never suspends: a step that waits runs
// nested steps instead.
stepper::stepper(executor& ex, const step_plan& plan)
    : ex_{ex},
      runner_{ex, 0, runner::block{0, ex.queue_count()}, nullptr},
      plan_{plan},
      random_state_{plan.seed},
      running_(ex.queue_count()) {
  if (plan_.kind != step_plan::policy::pct) return;
  // PCT (Burckhardt et al.): distinct initial priorities, all above the
  // depth - 1 change points' (which are 0 .. depth - 2), in random order;
  // change points at random steps of the expected run.
  const std::uint32_t depth = std::max(plan_.depth, 1u);
  priority_.resize(ex.queue_count());
  for (std::uint32_t i = 0; i < priority_.size(); ++i) priority_[i] = depth + i;
  for (std::uint32_t i = static_cast<std::uint32_t>(priority_.size()); i > 1; --i)
    std::swap(priority_[i - 1], priority_[next_random() % i]);
  const std::uint64_t horizon = std::max<std::uint64_t>(plan_.steps, 1);
  for (std::uint32_t c = 0; c + 1 < depth; ++c)
    change_points_.push_back(1 + next_random() % horizon);
}

// splitmix64: small state, full period, and the same sequence everywhere.
std::uint64_t stepper::next_random() noexcept {
  std::uint64_t z = (random_state_ += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

bool stepper::may_run(std::uint32_t index) const noexcept {
  if (running_[index]) return false;
  work_queue& q = ex_.queue_at(index);
  return q.being_processed() ? !q.batch().empty() : !q.looks_empty();
}

std::uint32_t stepper::choose(const std::vector<std::uint32_t>& ready) {
  if (plan_.kind == step_plan::policy::random)
    return ready[next_random() % ready.size()];
  const std::uint32_t chosen = *std::max_element(
      ready.begin(), ready.end(),
      [this](std::uint32_t a, std::uint32_t b) { return priority_[a] < priority_[b]; });
  // At the c-th change point the queue about to run drops below every
  // initial priority, to c.
  const std::uint64_t step = steps_ + 1;
  for (std::uint32_t c = 0; c < change_points_.size(); ++c)
    if (change_points_[c] == step) priority_[chosen] = c;
  return chosen;
}

bool stepper::run_one() {
  if (halted_) return false;
  if (ex_.has_postponed()) [[unlikely]]
    ex_.retry_postponed();
  ready_.clear();
  for (std::uint32_t i = 0; i < ex_.queue_count(); ++i)
    if (may_run(i)) ready_.push_back(i);
  if (ready_.empty()) return false;
  return run_queue(choose(ready_));
}

bool stepper::run_queue(std::uint32_t index) {
  if (halted_ || index >= ex_.queue_count() || running_[index]) return false;
  work_queue& q = ex_.queue_at(index);
  if (!q.being_processed()) {
    if (q.gulp() != work_queue::gulp_result::taken) return false;
    runner_.counters.gulps.add();
    runner_.counters.gulped_messages.add(q.take_fresh());
  }
  ++steps_;
  running_[index] = true;
  runner_.step(q, index);
  running_[index] = false;
  return true;
}

template <class F>
const envelope* stepper::find(std::uint32_t index, F&& f) {
  if (index >= ex_.queue_count()) return nullptr;
  work_queue& q = ex_.queue_at(index);
  std::uint64_t position = 0;
  const auto in = [&](const copy_queue& part) -> const envelope* {
    for (std::uint32_t i = 0; i < part.size(); ++i, ++position)
      if (f(part.at(i), position)) return &part.at(i);
    return nullptr;
  };
  if (const envelope* e = in(q.unfinished_batch())) return e;
  return in(q.mailbox());
}

const envelope* stepper::queued(std::uint32_t index, const void* target, std::uint64_t nth) {
  return find(index, [&](const envelope& e, std::uint64_t) {
    return e.target == target && nth-- == 0;
  });
}

std::optional<std::uint64_t> stepper::position(std::uint32_t index, const void* target) {
  std::uint64_t at = 0;
  if (find(index, [&](const envelope& e, std::uint64_t p) { return at = p, e.target == target; }) ==
      nullptr)
    return std::nullopt;
  return at;
}

}  // namespace tact::detail
