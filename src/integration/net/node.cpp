#include <tact/net/node.hpp>

#include <stdexcept>
#include <string>
#include <utility>

#include "integration/net/node_core.hpp"

namespace tact::net {

namespace detail {

std::uint32_t carried_index(const node_core& core, std::string_view name,
                            std::uint64_t fingerprint) {
  return core.type_index(name, fingerprint);
}

void forward_classic(node_core& core, std::size_t peer, std::uint64_t target, std::uint64_t epoch,
                     std::uint32_t type, classic_outbound& out) {
  core.forward_classic(peer, target, epoch, type, out);
}

void answer_remote(const reply_route& route, reply_base::state outcome,
                   std::vector<std::byte> reply, std::string what) noexcept {
  if (const std::shared_ptr<node_core> core = route.core.lock())
    core->answer(route, outcome, std::move(reply), std::move(what));
}

void publish_classic(node_core& core, std::string_view name, std::shared_ptr<const void> handle,
                     std::vector<classic_entry> table) {
  core.publish(name, std::move(handle), std::move(table));
}

void adopt_proxy(node_core& core, actor& proxy) { core.adopt(proxy); }

actor_system& system_of(node_core& core) noexcept { return core.system(); }

std::size_t peer_index(const node_core& core, std::string_view peer) {
  return core.peer_index(peer);
}

std::uint64_t name_id(std::string_view name) {
  if (!valid_name(name))
    throw std::invalid_argument{"tact: \"" + std::string{name} + "\" is not a published name"};
  return id_of_name(name);
}

}  // namespace detail

node::node(actor_system& system, node_config config, std::vector<detail::carried_type> types)
    : core_{std::make_shared<detail::node_core>(system, std::move(config), std::move(types))} {
  core_->start();
}

node::~node() { core_->stop(); }

const std::string& node::endpoint() const noexcept { return core_->endpoint(); }

void node::publish(std::string_view name, tx::actor_ref actor) {
  core_->publish(name, std::move(actor));
}

void node::unpublish(std::string_view name) { core_->unpublish(name); }

tx::actor_ref node::remote(std::string_view peer, std::string_view name) {
  const std::uint64_t id = detail::name_id(name);
  return core_->proxy(core_->peer_index(peer), id, 0);
}

node::monitor_id node::monitor(std::string_view peer, tx::actor_ref watcher) {
  return core_->monitor(core_->peer_index(peer), {}, std::move(watcher));
}

node::monitor_id node::monitor(std::string_view peer, std::string_view name,
                               tx::actor_ref watcher) {
  if (name.empty()) throw std::invalid_argument{"tact: a monitor of an actor names it"};
  return core_->monitor(core_->peer_index(peer), name, std::move(watcher));
}

void node::demonitor(monitor_id id) { core_->demonitor(id); }

bool node::connected(std::string_view peer) const {
  return core_->connected(core_->peer_index(peer));
}

node_stats node::stats() const noexcept { return core_->stats(); }

}  // namespace tact::net
