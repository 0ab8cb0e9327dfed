#include <tact/actor_system.hpp>

#include <tact/build_config.hpp>

#include "executor/executor.hpp"
#include "helpers/ask/askers.hpp"
#include "helpers/timers/timer_service.hpp"
#include "system/machine_placement.hpp"
#include "transactional/domain.hpp"

// The system ties the layers together: the executor, each actor model's
// side of it, and the helpers that need a thread of their own (timers).
namespace tact {

actor_system::actor_system(system_config config)
    : executor_{std::make_unique<detail::executor>(
          detail::tx::validated(config), *this,
          [&](std::uint32_t workers) { return detail::machine_placement(config, workers); })},
      tx_{std::make_unique<detail::tx::domain>(*executor_)},
      timers_{std::make_unique<detail::timer_service>(*executor_)},
      askers_{std::make_unique<detail::waiting_askers>()} {}

actor_system::actor_system(const system_config& config, const detail::step_plan& plan)
    : executor_{std::make_unique<detail::executor>(detail::tx::validated(config), *this, nullptr,
                                                   &plan)},
      tx_{std::make_unique<detail::tx::domain>(*executor_)},
      timers_{std::make_unique<detail::timer_service>(*executor_)},
      askers_{std::make_unique<detail::waiting_askers>()} {}

// What outlives the system is in docs/concepts.md, "Lifetimes". With
// checks, the transactional side stays for the actors that do (see
// domain::hold), and the executor refuses to be destroyed while a sponsor
// or an unfinished actor still needs it.
actor_system::~actor_system() {
  stop();
  if constexpr (build::checks) detail::tx::domain::orphan(std::move(tx_));
}

std::uint32_t actor_system::workers() const noexcept { return executor_->worker_count(); }
std::uint32_t actor_system::queues() const noexcept { return executor_->queue_count(); }
const system_config& actor_system::config() const noexcept { return executor_->config(); }
bool actor_system::stopped() const noexcept { return executor_->stopped(); }
system_stats actor_system::stats() const {
  system_stats s = executor_->stats();
  tx_->add_to(s);
  return s;
}
void actor_system::await_quiescence() { executor_->await_quiescence(); }
void actor_system::stop() {
  executor_->stop([this] { timers_->shutdown(); });
  askers_->close();
}

namespace detail {

executor& executor_of(actor_system& system) noexcept { return *system.executor_; }
timer_service& timers_of(actor_system& system) noexcept { return *system.timers_; }
waiting_askers& askers_of(actor_system& system) noexcept { return *system.askers_; }
tx::domain& tx::domain_of(actor_system& system) noexcept { return *system.tx_; }

ambient_scope::ambient_scope(actor_system& system) noexcept
    : ambient_scope{system, runner::no_queue} {}

ambient_scope::ambient_scope(actor_system& system, std::uint32_t home) noexcept
    : previous_{executor::scope()}, previous_home_{executor::scope_home()} {
  executor::set_scope(system.executor_.get(), home);
}

ambient_scope::~ambient_scope() { executor::set_scope(previous_, previous_home_); }

}  // namespace detail
}  // namespace tact
