#include "integration/net/node_core.hpp"

#include <algorithm>
#include <functional>
#include <random>
#include <stdexcept>
#include <utility>

namespace tact::net::detail {

namespace {

constexpr std::uint32_t not_carried = ~std::uint32_t{0};

// Whether a peer, by its hello, receives one of our types.
enum on_peer : std::uint8_t { received, unknown, other_shape };

}  // namespace

std::uint64_t id_of_name(std::string_view name) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h | named_bit;
}

bool valid_name(std::string_view name) noexcept {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
  });
}

// Exports the actors a message being sent to `p` refers to, under p.lock.
class node_core::exporter final : public reference_context, public classic_reference_context {
 public:
  exporter(const node_core& core, peer_state& p) noexcept : core_{core}, p_{p} {}
  std::uint64_t export_ref(const tx::actor_ref& actor) override {
    const std::uint64_t id = p_.next_id++;
    made_.push_back(id);  // first: if the table cannot take it, undo() finds nothing to erase
    p_.exports.emplace(id, actor);
    return id;
  }
  tx::actor_ref import_ref(std::uint64_t) override { return {}; }
  // One id per classic actor and handle type, while the connection lives.
  std::uint64_t export_classic(const void* actor, std::shared_ptr<const void> handle,
                               table_fn table) override {
    const auto key = std::make_pair(actor, table);
    if (const auto at = p_.classic_ids.find(key); at != p_.classic_ids.end()) return at->second;
    auto target =
        std::make_shared<const classic_target>(classic_target{std::move(handle), table(core_)});
    const std::uint64_t id = p_.next_id++;
    made_classic_.push_back(key);
    p_.classic_ids.emplace(key, id);
    p_.classic_exports.emplace(id, std::move(target));
    return id;
  }
  actor* import_classic(std::uint64_t, proxy_fn) override { return nullptr; }
  // The message is not sent: the peer never hears of these ids.
  void undo() noexcept {
    for (std::uint64_t id : made_) p_.exports.erase(id);
    for (const auto& key : made_classic_) {
      const auto at = p_.classic_ids.find(key);
      if (at == p_.classic_ids.end()) continue;
      p_.classic_exports.erase(at->second);
      p_.classic_ids.erase(at);
    }
  }

 private:
  const node_core& core_;
  peer_state& p_;
  std::vector<std::uint64_t> made_;
  std::vector<std::pair<const void*, table_fn>> made_classic_;
};

// Makes proxies for the actors a message from peer `index` refers to.
class node_core::importer final : public reference_context, public classic_reference_context {
 public:
  importer(node_core& core, std::size_t index, std::uint64_t epoch) noexcept
      : core_{core}, index_{index}, epoch_{epoch} {}
  std::uint64_t export_ref(const tx::actor_ref&) override {
    throw std::logic_error{"tact: a node exports references only as it sends"};
  }
  // Ids the peer gave are below named_bit (which marks our own names).
  tx::actor_ref import_ref(std::uint64_t id) override {
    if ((id & named_bit) != 0) return {};
    try {
      return core_.proxy(index_, id, epoch_);
    } catch (...) {
      return {};  // refused, as above
    }
  }
  std::uint64_t export_classic(const void*, std::shared_ptr<const void>, table_fn) override {
    throw std::logic_error{"tact: a node exports handles only as it sends"};
  }
  // One proxy per id: the peer sends one actor, by one handle type, under
  // an id. An id that comes again with another handle type is refused: its
  // proxy would be taken for another type.
  actor* import_classic(std::uint64_t id, proxy_fn make) override {
    if ((id & named_bit) != 0) return nullptr;
    peer_state& p = *core_.peers_[index_];
    std::lock_guard guard{p.lock};
    if (p.epoch != epoch_) return nullptr;  // lost since: nothing there to reach
    const auto at = p.classic_imports.find(id);
    if (at != p.classic_imports.end())
      return at->second.second == make ? at->second.first : nullptr;
    // Decoding never throws: a handle whose messages this node does not
    // carry is refused like any bad value.
    try {
      actor* proxy = make(core_.shared_from_this(), index_, id, epoch_);
      p.classic_imports.emplace(id, std::make_pair(proxy, make));
      return proxy;
    } catch (...) {
      return nullptr;
    }
  }

 private:
  node_core& core_;
  std::size_t index_;
  std::uint64_t epoch_;
};

// What a transactional proxy forwards to: an actor of `peer`, by the id the
// peer gave it. epoch 0: a published name, reached on whatever connection
// is up; else a reference the peer sent in that epoch, void once it ends,
// and released when the proxy goes.
struct node_core::proxy_target {
  proxy_target(std::weak_ptr<node_core> c, std::size_t p, std::uint64_t i, std::uint64_t e) noexcept
      : core{std::move(c)}, peer{p}, id{i}, epoch{e} {}
  ~proxy_target() {
    if (epoch == 0) return;
    if (const std::shared_ptr<node_core> c = core.lock()) c->released(peer, id, epoch);
  }
  std::weak_ptr<node_core> core;
  std::size_t peer;
  std::uint64_t id;
  std::uint64_t epoch;
};

const classic_entry* node_core::classic_target::entry(std::uint32_t type) const noexcept {
  for (const classic_entry& e : table)
    if (e.type == type) return &e;
  return nullptr;
}

node_core::node_core(actor_system& system, node_config config, std::vector<carried_type> types)
    : system_{system}, config_{std::move(config)}, types_{std::move(types)} {
  for (std::size_t i = 0; i < types_.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (types_[i].name == types_[j].name)
        throw std::invalid_argument{"tact: a node's message types name \"" + types_[i].name +
                                    "\" twice"};
  std::random_device random;
  while (incarnation_ == 0) incarnation_ = (std::uint64_t{random()} << 32) ^ random();
  for (const peer& p : config_.peers) {
    auto state = std::make_unique<peer_state>();
    state->name = p.name;
    state->sends = !p.address.empty();
    peers_.push_back(std::move(state));
  }
}

void node_core::start() {
  link_config lc{.listen = config_.listen,
                 .keys = config_.keys,
                 .peers = config_.peers,
                 .max_queued = config_.max_queued,
                 .heartbeat = config_.heartbeat,
                 .heartbeat_timeout = config_.heartbeat_timeout,
                 .malformed_limit = config_.malformed_limit,
                 .cut_off_for = config_.cut_off_for,
                 .idle_after = config_.idle_after,
                 .insecure_plaintext = config_.insecure_plaintext};
  link_ = std::make_unique<secure_link>(
      std::move(lc),
      [this](std::string_view peer, std::span<const std::byte> f) { return on_frame(peer, f); },
      [this](std::string_view peer, peer_event e) { on_connection(peer, e); },
      [this](std::string_view peer) { return may_retire(peer); });
  advertised_ = config_.advertise;
  if (advertised_.empty() && secure_link::connectable(link_->endpoint()))
    advertised_ = link_->endpoint();
  for (const auto& p : peers_) {
    std::lock_guard guard{p->lock};
    if (p->sends) link_->send(p->name, greeting());
  }
  // Last: the callbacks use link_ and advertised_.
  link_->start();
}

void node_core::stop() noexcept {
  link_->stop();
  for (auto& p : peers_) {
    std::unordered_map<std::uint64_t, tx::actor_ref> held;
    std::unordered_map<std::uint64_t, pending_ask> asks;
    {
      std::lock_guard guard{p->lock};
      p->state = peer_state::closed;
      held.swap(p->exports);
      asks.swap(p->asks);
      p->classic_exports.clear();
      p->classic_ids.clear();
      p->classic_imports.clear();
      p->monitors.clear();
    }
    // Nothing will answer them now.
    for (auto& [id, ask] : asks) ask.slot->fail_node_down();
  }
  std::unordered_map<std::uint64_t, published> names;
  {
    std::lock_guard guard{names_lock_};
    names.swap(published_);
  }
  // After what was queued for them; a send to one of them after this is
  // a send to a finished actor.
  std::vector<actor*> proxies;
  {
    std::lock_guard guard{proxies_lock_};
    proxies.swap(proxies_);
  }
  for (actor* proxy : proxies) send(*proxy, delete_msg);
}

node_stats node_core::stats() const noexcept {
  const link_stats link = link_->stats();
  return {.sent = sent_.load(std::memory_order_relaxed),
          .received = received_.load(std::memory_order_relaxed),
          .undelivered = undelivered_.load(std::memory_order_relaxed) + link.dropped_at_loss,
          .stale = link.stale,
          .unknown_targets = unknown_targets_.load(std::memory_order_relaxed),
          .unknown_types = unknown_types_.load(std::memory_order_relaxed),
          // The link counts each frame this node refuses (on_frame's false),
          // and each message that is not whole frames.
          .malformed = link.malformed,
          .peers_lost = peers_lost_.load(std::memory_order_relaxed),
          .refused_clients = link.refused,
          .cut_offs = link.cut_offs,
          .retired = link.retired};
}

std::size_t node_core::peer_index(std::string_view name) const {
  for (std::size_t i = 0; i < peers_.size(); ++i)
    if (peers_[i]->name == name) {
      std::lock_guard guard{peers_[i]->lock};
      if (!peers_[i]->sends) throw std::invalid_argument{no_address(name)};
      return i;
    }
  throw std::invalid_argument{"tact: \"" + std::string{name} + "\" is not on the allow-list"};
}

bool node_core::connected(std::size_t peer) const {
  std::lock_guard guard{peers_[peer]->lock};
  return peers_[peer]->state == peer_state::up && peers_[peer]->greeted;
}

std::uint32_t node_core::type_index(std::string_view name, std::uint64_t fingerprint) const {
  for (std::uint32_t i = 0; i < types_.size(); ++i)
    if (types_[i].name == name && types_[i].fingerprint == fingerprint) return i;
  throw std::invalid_argument{"tact: the node does not carry \"" + std::string{name} +
                              "\" (or carries another shape of it): list it in its message_types"};
}

// ---- names ----

void node_core::publish(std::string_view name, tx::actor_ref actor) {
  replace(name, published{std::string{name}, std::move(actor), {}});
}

void node_core::publish(std::string_view name, std::shared_ptr<const void> handle,
                        std::vector<classic_entry> table) {
  replace(name, published{std::string{name},
                          {},
                          std::make_shared<const classic_target>(
                              classic_target{std::move(handle), std::move(table)})});
}

void node_core::replace(std::string_view name, published entry) {
  if (!valid_name(name))
    throw std::invalid_argument{"tact: \"" + std::string{name} +
                                "\" is not a name to publish (letters, digits, '.', '-', '_')"};
  const std::uint64_t id = id_of_name(name);
  published replaced;
  std::vector<watcher> told;
  {
    std::lock_guard guard{names_lock_};
    auto [at, made] = published_.try_emplace(id, published{std::string{name}, {}, {}});
    if (!made && at->second.name != name)
      throw std::invalid_argument{"tact: the names \"" + at->second.name + "\" and \"" +
                                  std::string{name} +
                                  "\" cannot both be published (their ids collide)"};
    replaced = std::exchange(at->second, std::move(entry));
    // The actor monitored under this name is not the one published now.
    if (!made) told = take_watchers(id);
  }
  tell_watchers(told);
}

void node_core::unpublish(std::string_view name) {
  published dropped;
  std::vector<watcher> told;
  {
    std::lock_guard guard{names_lock_};
    const auto at = published_.find(id_of_name(name));
    if (at == published_.end() || at->second.name != name) return;
    dropped = std::move(at->second);
    published_.erase(at);
    told = take_watchers(id_of_name(name));
  }
  tell_watchers(told);
}

// ---- sending ----

tx::actor_ref node_core::proxy(std::size_t peer, std::uint64_t id, std::uint64_t epoch) {
  auto target = std::make_shared<const proxy_target>(weak_from_this(), peer, id, epoch);
  return tx::spawn(system_, {[target](const tx::message& m) {
                     const std::shared_ptr<node_core> core = target->core.lock();
                     if (!core)
                       throw std::runtime_error{"tact: the node of this remote actor has ended"};
                     core->forward(target->peer, target->id, target->epoch, m);
                   }},
                   tx::mode::serialized);
}

void node_core::adopt(actor& classic_proxy) {
  std::lock_guard guard{proxies_lock_};
  proxies_.push_back(&classic_proxy);
}

std::vector<std::byte> node_core::greeting() const {
  hello h{.incarnation = incarnation_, .listen = advertised_, .types = {}};
  for (const carried_type& t : types_) h.types.push_back({t.name, t.fingerprint});
  return encode_frame(h);
}

void node_core::check_carried(const peer_state& p, std::uint32_t type) const {
  if (!p.greeted || p.sendable[type] == received) return;
  throw std::invalid_argument{
      "tact: peer \"" + p.name + "\" " +
      (p.sendable[type] == unknown ? "does not carry \"" : "carries another shape of \"") +
      types_[type].name + "\": the message is not sent"};
}

bool node_core::reachable(const peer_state& p, std::uint64_t epoch) noexcept {
  return (p.state == peer_state::waiting || p.state == peer_state::up) &&
         (epoch == 0 || epoch == p.epoch);
}

template <class Encode, class Sender>
void node_core::send_envelope(peer_state& p, envelope e, Encode&& encode, Sender&& sender,
                              const std::string& what) {
  // Every actor the message refers to, its customer and the references
  // inside it, becomes reachable by the peer under an id of its own.
  exporter exports{*this, p};
  try {
    {
      const reference_scope scope{exports};
      encode(e.payload);
    }
    const auto undo_sender = sender(e, exports);
    try {
      std::vector<std::byte> frame = encode_frame(batch{{std::move(e)}});
      if (frame.size() > link_->max_frame())
        throw std::length_error{"tact: a message of " + what + " takes " +
                                std::to_string(frame.size()) +
                                " bytes, more than a frame may carry"};
      if (!queue_frame(p, std::move(frame))) throw std::runtime_error{full(p)};
    } catch (...) {
      undo_sender();
      throw;
    }
  } catch (...) {
    // Nothing left: the peer will not hear of those actors.
    exports.undo();
    throw;
  }
  sent_.fetch_add(1, std::memory_order_relaxed);
}

bool node_core::queue_frame(peer_state& p, std::vector<std::byte> frame) {
  if (p.state != peer_state::waiting)
    return link_->send(p.name, std::move(frame)) != send_result::overflow;
  if (frame.size() > config_.max_queued - std::min(p.unsent_bytes, config_.max_queued))
    return false;
  p.unsent_bytes += frame.size();
  p.unsent.push_back(std::move(frame));
  return true;
}

// A transactional proxy's handler: m to actor `id` of `peer`. Throws
// (rolling the proxy's handling back, which a customer hears of as a
// failure) if m cannot be carried; a send on a lost connection is dropped,
// and its customer told node_down (staged in the proxy's handler).
void node_core::forward(std::size_t peer, std::uint64_t id, std::uint64_t epoch,
                        const tx::message& m) {
  std::uint32_t type = 0;
  while (type < types_.size() && !types_[type].carries(m)) ++type;
  if (type == types_.size())
    throw std::invalid_argument{"tact: a node cannot carry a message of " + m.describe() +
                                ": list its type in the node's message_types"};
  peer_state& p = *peers_[peer];
  std::unique_lock guard{p.lock};
  // A customer from a peer we have no address for: no reply can reach it.
  if (!p.sends) throw std::invalid_argument{no_address(p.name)};
  check_carried(p, type);
  if (!reachable(p, epoch)) {
    guard.unlock();
    undelivered_.fetch_add(1, std::memory_order_relaxed);
    if (const tx::actor_ref* customer = m.customer(); customer != nullptr && *customer)
      tx::send(*customer, tx::node_down{p.name});
    return;
  }
  const tx::actor_ref* customer = nullptr;
  send_envelope(
      p, envelope{.target = id, .type = type, .sender = 0, .payload = {}},
      [&](std::vector<std::byte>& payload) { customer = types_[type].encode(m, payload); },
      [&](envelope& e, exporter& exports) {
        if (customer != nullptr && *customer) e.sender = exports.export_ref(*customer);
        return [] {};  // undone with the exports
      },
      m.describe());
}

void node_core::forward_classic(std::size_t peer, std::uint64_t target, std::uint64_t epoch,
                                std::uint32_t type, classic_outbound& out) {
  peer_state& p = *peers_[peer];
  std::unique_lock guard{p.lock};
  check_carried(p, type);
  if (out.slot) check_carried(p, out.reply_type);  // its reply must come back
  if (!reachable(p, epoch)) {
    guard.unlock();
    undelivered_.fetch_add(1, std::memory_order_relaxed);
    if (out.slot) out.slot->fail_node_down();
    return;
  }
  send_envelope(
      p, envelope{.target = target, .type = type, .sender = 0, .payload = {}},
      [&](std::vector<std::byte>& payload) { out.encode(out.message, payload); },
      [&](envelope& e, exporter&) {
        if (!out.slot) return std::function<void()>{[] {}};
        // Asks whose askers gave up, and whose answer never came, go now
        // and then: at most twice as many as those still open are kept.
        if (p.asks.size() >= p.asks_pruned_at) {
          std::erase_if(p.asks, [](const auto& a) { return !a.second.slot->open(); });
          p.asks_pruned_at = std::max<std::size_t>(64, 2 * p.asks.size());
        }
        e.sender = p.next_id++;
        p.asks.emplace(e.sender, pending_ask{out.slot, out.answer, out.reply_type});
        return std::function<void()>{[&p, id = e.sender] { p.asks.erase(id); }};
      },
      types_[type].name);
}

void node_core::answer(const reply_route& route, reply_base::state outcome_state,
                       std::vector<std::byte> reply, std::string what) noexcept {
  peer_state& p = *peers_[route.peer];
  std::lock_guard guard{p.lock};
  if (!reachable(p, route.epoch)) return;  // the asker was told node_down
  try {
    std::vector<std::byte> frame;
    if (outcome_state == reply_base::replied)
      frame = encode_frame(batch{{envelope{route.target, route.type, 0, std::move(reply)}}});
    else
      frame =
          encode_frame(outcome{route.target, outcome_state == reply_base::failed, std::move(what)});
    if (queue_frame(p, std::move(frame))) sent_.fetch_add(1, std::memory_order_relaxed);
  } catch (...) {
    // No memory for the answer: the asker waits for its deadline.
  }
}

// A proxy of a reference the peer sent in `epoch` is gone.
void node_core::released(std::size_t peer, std::uint64_t id, std::uint64_t epoch) noexcept {
  peer_state& p = *peers_[peer];
  std::lock_guard guard{p.lock};
  // Also while our first connection to the peer is being made (the
  // release then waits with the frames before it): else the peer would
  // hold the actor until the connection ends.
  if (!reachable(p, epoch)) return;
  try {
    static_cast<void>(queue_frame(p, encode_frame(release{{id}})));
  } catch (...) {
    // No memory for the frame: the peer holds the actor until the
    // connection ends.
  }
}

// ---- monitors ----

std::uint64_t node_core::monitor(std::size_t index, std::string_view name, tx::actor_ref watcher) {
  if (!name.empty() && !valid_name(name))
    throw std::invalid_argument{"tact: \"" + std::string{name} + "\" is not a published name"};
  peer_state& p = *peers_[index];
  const std::uint64_t tag = next_tag_.fetch_add(1, std::memory_order_relaxed);
  monitor_entry entry{std::move(watcher), std::string{name}};
  {
    std::lock_guard guard{p.lock};
    if (reachable(p, 0)) {
      if (!name.empty() && !queue_frame(p, encode_frame(watch{tag, id_of_name(name)})))
        throw std::runtime_error{full(p)};
      // Its heartbeats tell the monitor: a retired connection opens again.
      if (name.empty()) link_->open(p.name);
      p.monitors.emplace(tag, std::move(entry));
      return tag;
    }
  }
  // Lost now: told at once.
  tell_monitor(p.name, entry, true);
  return tag;
}

void node_core::demonitor(std::uint64_t tag) {
  for (const auto& q : peers_) {
    peer_state& p = *q;
    std::lock_guard guard{p.lock};
    const auto at = p.monitors.find(tag);
    if (at == p.monitors.end()) continue;
    // A full queue: the peer's down, if it comes, finds no monitor.
    if (!at->second.name.empty() && reachable(p, 0))
      static_cast<void>(queue_frame(p, encode_frame(unwatch{tag})));
    p.monitors.erase(at);
    return;
  }
}

void node_core::tell_monitor(const std::string& peer, const monitor_entry& m, bool node_lost) {
  if (m.name.empty())
    tx::send(m.watcher, tx::node_down{peer});
  else
    tx::send(m.watcher, tx::actor_down{peer, m.name, node_lost});
}

// Under names_lock_: the peers' monitors of name `id`, taken.
std::vector<node_core::watcher> node_core::take_watchers(std::uint64_t id) {
  std::vector<watcher> taken;
  const auto [first, last] = watched_.equal_range(id);
  for (auto at = first; at != last; ++at) taken.push_back(at->second);
  watched_.erase(first, last);
  return taken;
}

// Outside names_lock_: each watcher's peer is told its name is down, if
// the connection it asked on still lives.
void node_core::tell_watchers(const std::vector<watcher>& told) {
  for (const watcher& w : told) {
    peer_state& p = *peers_[w.peer];
    std::lock_guard guard{p.lock};
    if (!reachable(p, w.epoch)) continue;
    // Full: the peer is told nothing, but its monitor is told when the
    // connection, overflowing, is lost.
    static_cast<void>(queue_frame(p, encode_frame(down{w.tag})));
  }
}

// ---- on the link's thread ----

void node_core::on_connection(std::string_view name, peer_event event) {
  const std::size_t index = find(name);
  peer_state& p = *peers_[index];
  ended_epoch ended;
  {
    std::lock_guard guard{p.lock};
    if (p.state == peer_state::closed) return;
    if (event == peer_event::lost) {
      p.state = peer_state::lost;
      ended = end_epoch(p);
    } else {
      // A connection made again: greet anew (the peer may be a new
      // process); then what waited for the first one leaves.
      if (p.state == peer_state::lost) link_->send(p.name, greeting());
      p.state = peer_state::up;
      while (!p.unsent.empty()) {
        if (link_->send(p.name, std::move(p.unsent.front())) == send_result::overflow)
          undelivered_.fetch_add(1, std::memory_order_relaxed);
        p.unsent.pop_front();
      }
      p.unsent_bytes = 0;
    }
  }
  tell_ended(index, ended);
}

// Whether the idle connection to a peer may close (see secure_link::
// retirer). Retiring ends no epoch: what was exchanged stays valid, and the
// next frame for the peer opens a new connection. So it must not happen
// while this node relies on the connection's heartbeats to learn that the
// peer is gone: while it waits for the peer (its classic asks, and actors
// it sent the peer, among them a transactional ask's customer), or
// monitors it. A frame sent after the check leaves on the next
// connection, in order.
bool node_core::may_retire(std::string_view name) {
  peer_state& p = *peers_[find(name)];
  std::lock_guard guard{p.lock};
  return p.state == peer_state::up && p.asks.empty() && p.monitors.empty() &&
         p.exports.empty() && p.classic_exports.empty();
}

// Under p.lock: what was exchanged with the peer is void. Returns the
// actors it held for it, the asks it was to answer and this node's
// monitors of it, to be told (outside the lock, by tell_ended).
node_core::ended_epoch node_core::end_epoch(peer_state& p) {
  ++p.epoch;
  p.greeted_in_epoch = false;
  peers_lost_.fetch_add(1, std::memory_order_relaxed);
  p.classic_ids.clear();
  p.classic_imports.clear();  // their proxies stay, and refuse what is sent to them
  return {true, std::exchange(p.exports, {}), std::exchange(p.classic_exports, {}),
          std::exchange(p.asks, {}), std::exchange(p.monitors, {})};
}

// Outside every lock: tells each actor the peer held, each ask it was to
// answer and each monitor of it that it is lost; forgets the peer's
// monitors of our names.
void node_core::tell_ended(std::size_t index, ended_epoch& ended) {
  if (!ended.ended) return;
  const std::string& peer = peers_[index]->name;
  for (auto& [id, actor] : ended.exports) tx::send(actor, tx::node_down{peer});
  for (auto& [id, ask] : ended.asks) ask.slot->fail_node_down();
  for (auto& [tag, entry] : ended.monitors) tell_monitor(peer, entry, true);
  ended = {};
  std::lock_guard guard{names_lock_};
  std::erase_if(watched_, [index](const auto& w) { return w.second.peer == index; });
}

// False if the frame is malformed (the link counts it against the peer).
bool node_core::on_frame(std::string_view name, std::span<const std::byte> bytes) {
  const std::size_t index = find(name);
  frame f;
  if (decode_frame(bytes, f) != wire_error::none) {
    return false;
  }
  if (auto* h = std::get_if<hello>(&f)) {
    greeted(index, *h);
    return true;
  }
  if (auto* b = std::get_if<batch>(&f)) {
    bool whole = true;
    for (const envelope& e : b->envelopes) whole = deliver(index, e) && whole;
    return whole;
  }
  if (auto* r = std::get_if<release>(&f)) {
    released_by_peer(*peers_[index], *r);
    return true;
  }
  if (auto* w = std::get_if<watch>(&f)) return watched(index, *w);
  if (auto* u = std::get_if<unwatch>(&f)) {
    std::lock_guard guard{names_lock_};
    std::erase_if(watched_,
                  [&](const auto& e) { return e.second.peer == index && e.second.tag == u->tag; });
    return true;
  }
  if (auto* d = std::get_if<down>(&f)) {
    said_down(*peers_[index], *d);
    return true;
  }
  outcome_came(index, std::get<outcome>(f));
  return true;
}

void node_core::greeted(std::size_t index, const hello& h) {
  peer_state& p = *peers_[index];
  ended_epoch ended;
  {
    std::lock_guard guard{p.lock};
    // A new process; or the same one greeting again, which it does only
    // after it lost its connection to us and with it what it held of
    // ours: either way, this epoch ends on our side too.
    if ((p.incarnation != 0 && p.incarnation != h.incarnation) || p.greeted_in_epoch)
      ended = end_epoch(p);
    p.incarnation = h.incarnation;
    p.greeted = true;
    p.greeted_in_epoch = true;
    p.ours_of_theirs.assign(h.types.size(), not_carried);
    p.sendable.assign(types_.size(), unknown);
    for (std::size_t i = 0; i < h.types.size(); ++i)
      for (std::uint32_t j = 0; j < types_.size(); ++j) {
        if (types_[j].name != h.types[i].name) continue;
        const bool same = types_[j].fingerprint == h.types[i].fingerprint;
        p.sendable[j] = same ? received : other_shape;
        if (same) p.ours_of_theirs[i] = j;
      }
  }
  tell_ended(index, ended);
  // Listed without an address: it says where it listens, and we connect
  // there, greeting first, to answer it.
  if (!h.listen.empty() && link_->learn(p.name, h.listen)) {
    std::lock_guard guard{p.lock};
    if (!p.sends && p.state != peer_state::closed) {
      p.sends = true;
      link_->send(p.name, greeting());
    }
  }
}

// False if the envelope is malformed; a message for a name or a type this
// node does not know is counted, and dropped, but not malformed.
bool node_core::deliver(std::size_t index, const envelope& e) {
  peer_state& p = *peers_[index];
  tx::actor_ref target;
  std::shared_ptr<const classic_target> classic;
  std::uint32_t type = not_carried;
  std::uint64_t epoch = 0;
  {
    std::unique_lock guard{p.lock};
    if (e.type < p.ours_of_theirs.size()) type = p.ours_of_theirs[e.type];
    epoch = p.epoch;
    if ((e.target & named_bit) == 0) {
      if (const auto at = p.asks.find(e.target); at != p.asks.end() && type != not_carried) {
        pending_ask ask = std::move(at->second);
        p.asks.erase(at);
        guard.unlock();
        return answered(type, e, ask);
      }
      if (const auto at = p.exports.find(e.target); at != p.exports.end()) target = at->second;
      if (const auto at = p.classic_exports.find(e.target); at != p.classic_exports.end())
        classic = at->second;
    }
  }
  if (type == not_carried) {
    unknown_types_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  if ((e.target & named_bit) != 0) {
    std::lock_guard guard{names_lock_};
    if (const auto at = published_.find(e.target); at != published_.end()) {
      target = at->second.actor;
      classic = at->second.classic;
    }
  }
  const classic_entry* entry = classic ? classic->entry(type) : nullptr;
  if (classic && entry == nullptr) {
    unknown_types_.fetch_add(1, std::memory_order_relaxed);  // not one the actor receives
    return true;
  }
  if (!target && !classic) {
    unknown_targets_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  if ((e.sender & named_bit) != 0) {
    return false;
  }
  importer imports{*this, index, epoch};
  const reference_scope scope{imports};
  wire_error result = wire_error::none;
  if (classic) {
    const reply_route route{weak_from_this(), index, epoch, e.sender, entry->reply_type};
    result = entry->deliver(classic->handle.get(), e.payload, e.sender != 0 ? &route : nullptr);
  } else {
    tx::actor_ref customer;
    if (e.sender != 0) customer = imports.import_ref(e.sender);
    result = types_[type].deliver(e.payload, target, std::move(customer));
  }
  if (result != wire_error::none) {
    return false;
  }
  received_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// The answer to a classic ask of ours.
bool node_core::answered(std::uint32_t type, const envelope& e, pending_ask& ask) {
  if (type != ask.reply_type || !ask.answer(*ask.slot, e.payload)) {
    ask.slot->fail_unanswered();
    return false;
  }
  received_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

// A request of ours, or a transactional customer's, that has no reply.
void node_core::outcome_came(std::size_t index, const outcome& o) {
  peer_state& p = *peers_[index];
  std::shared_ptr<reply_base> slot;
  tx::actor_ref customer;
  {
    std::lock_guard guard{p.lock};
    if (const auto at = p.asks.find(o.target); at != p.asks.end()) {
      slot = std::move(at->second.slot);
      p.asks.erase(at);
    } else if (const auto exported = p.exports.find(o.target); exported != p.exports.end()) {
      customer = exported->second;
    }
  }
  const auto error = std::make_exception_ptr(std::runtime_error{
      o.failed ? o.what : "tact: the request was dropped unanswered on \"" + p.name + "\""});
  if (slot) {
    if (o.failed)
      slot->fail(error);
    else
      slot->fail_unanswered();
  } else if (customer) {
    tx::send(customer, tx::failure{error});
  }
}

void node_core::released_by_peer(peer_state& p, const release& r) {
  std::vector<tx::actor_ref> dropped;
  std::lock_guard guard{p.lock};
  for (std::uint64_t id : r.ids) {
    const auto at = p.exports.find(id);
    if (at == p.exports.end()) continue;
    dropped.push_back(std::move(at->second));
    p.exports.erase(at);
  }
}

// The peer monitors one of our names: told down when it goes, or now.
bool node_core::watched(std::size_t index, const watch& w) {
  if ((w.target & named_bit) == 0) return false;  // only names are watched
  std::uint64_t epoch = 0;
  {
    std::lock_guard guard{peers_[index]->lock};
    epoch = peers_[index]->epoch;
  }
  {
    std::lock_guard guard{names_lock_};
    if (published_.contains(w.target)) {
      watched_.emplace(w.target, watcher{index, w.tag, epoch});
      return true;
    }
  }
  tell_watchers({watcher{index, w.tag, epoch}});
  return true;
}

// A name the peer published, which a monitor of ours watched, is gone.
void node_core::said_down(peer_state& p, const down& d) {
  monitor_entry entry;
  {
    std::lock_guard guard{p.lock};
    const auto at = p.monitors.find(d.tag);
    if (at == p.monitors.end()) return;  // demonitored, or already told
    entry = std::move(at->second);
    p.monitors.erase(at);
  }
  tell_monitor(p.name, entry, false);
}

std::size_t node_core::find(std::string_view name) const noexcept {
  std::size_t i = 0;
  while (peers_[i]->name != name) ++i;
  return i;
}

std::string node_core::no_address(std::string_view peer) {
  return "tact: peer \"" + std::string{peer} +
         "\" has no address on the allow-list: this node cannot send to it";
}

std::string node_core::full(const peer_state& p) {
  return "tact: the queue to peer \"" + p.name + "\" is full (node_config::max_queued)";
}

}  // namespace tact::net::detail
