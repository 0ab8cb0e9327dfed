#include "executor/discard_routes.hpp"

#include <mutex>
#include <unordered_map>

// One table for the process: a run function is code, the same in every
// system, and the classic model registers one per (receiver, message) pair
// it instantiates, which no fixed table per system could hold. Registered
// mostly before main and read only when envelopes are discarded, so a
// mutex costs nothing that matters.
namespace tact::detail {
namespace {

struct discard_routes {
  std::mutex lock;
  std::unordered_map<run_fn, drop_fn> drops;
};

// Made on first use (registrations run during static initialization, in
// an order nobody controls) and never destroyed (an envelope may be
// discarded by a system that a static destructor stops).
discard_routes& routes() {
  static discard_routes* const table = new discard_routes;
  return *table;
}

}  // namespace

bool on_discard(run_fn run, drop_fn drop) {
  discard_routes& r = routes();
  std::lock_guard guard{r.lock};
  r.drops.try_emplace(run, drop);
  return true;
}

std::uint32_t drop_unrun(const envelope& e) noexcept {
  drop_fn drop = nullptr;
  {
    discard_routes& r = routes();
    std::lock_guard guard{r.lock};
    if (const auto found = r.drops.find(e.run); found != r.drops.end()) drop = found->second;
  }
  return drop != nullptr ? drop(e) : 1;
}

}  // namespace tact::detail
