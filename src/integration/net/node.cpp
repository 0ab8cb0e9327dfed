#include <tact/net/node.hpp>

#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "integration/net/link.hpp"
#include "integration/net/protocol.hpp"

namespace tact::net {

namespace detail {

namespace {

// Ids a node gives what its peers may address: a published name's is a
// hash of the name with the top bit set; a reference sent to a peer gets
// a number of its own (top bit clear), one per send.
constexpr std::uint64_t named_bit = std::uint64_t{1} << 63;

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

constexpr std::uint32_t not_carried = ~std::uint32_t{0};

// Whether a peer, by its hello, receives one of our types.
enum class on_peer : std::uint8_t { received, unknown, other_shape };

}  // namespace

class node_core : public std::enable_shared_from_this<node_core> {
 public:
  node_core(actor_system& system, node_config config, std::vector<carried_type> types)
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

  // Listens and greets every peer it sends to: the hello is the first
  // frame on each connection.
  void start() {
    link_config lc{.listen = config_.listen,
                   .keys = config_.keys,
                   .peers = config_.peers,
                   .max_queued = config_.max_queued,
                   .heartbeat = config_.heartbeat,
                   .heartbeat_timeout = config_.heartbeat_timeout,
                   .malformed_limit = config_.malformed_limit,
                   .cut_off_for = config_.cut_off_for,
                   .insecure_plaintext = config_.insecure_plaintext};
    link_ = std::make_unique<secure_link>(
        std::move(lc),
        [this](std::string_view peer, std::span<const std::byte> f) { return on_frame(peer, f); },
        [this](std::string_view peer, peer_event e) { on_connection(peer, e); });
    for (const auto& p : peers_)
      if (p->sends) link_->send(p->name, greeting());
  }

  // Stops the link (no callback runs after this), then lets go of every
  // actor it held for its peers.
  void stop() noexcept {
    link_->stop();
    for (auto& p : peers_) {
      std::unordered_map<std::uint64_t, tx::actor_ref> held;
      {
        std::lock_guard guard{p->lock};
        p->state = peer_state::closed;
        held.swap(p->exports);
        p->monitors.clear();
      }
    }
    std::unordered_map<std::uint64_t, published> names;
    {
      std::lock_guard guard{names_lock_};
      names.swap(published_);
    }
  }

  const std::string& endpoint() const noexcept { return link_->endpoint(); }

  void publish(std::string_view name, tx::actor_ref actor) {
    if (!valid_name(name))
      throw std::invalid_argument{"tact: \"" + std::string{name} +
                                  "\" is not a name to publish (letters, digits, '.', '-', '_')"};
    const std::uint64_t id = id_of_name(name);
    tx::actor_ref replaced;
    std::vector<watcher> told;
    {
      std::lock_guard guard{names_lock_};
      auto [at, made] = published_.try_emplace(id, published{std::string{name}, {}});
      if (!made && at->second.name != name)
        throw std::invalid_argument{"tact: the names \"" + at->second.name + "\" and \"" +
                                    std::string{name} +
                                    "\" cannot both be published (their ids collide)"};
      replaced = std::exchange(at->second.actor, std::move(actor));
      // The actor monitored under this name is not the one published now.
      if (!made) told = take_watchers(id);
    }
    tell_watchers(told);
  }

  void unpublish(std::string_view name) {
    tx::actor_ref dropped;
    std::vector<watcher> told;
    {
      std::lock_guard guard{names_lock_};
      const auto at = published_.find(id_of_name(name));
      if (at == published_.end() || at->second.name != name) return;
      dropped = std::move(at->second.actor);
      published_.erase(at);
      told = take_watchers(id_of_name(name));
    }
    tell_watchers(told);
  }

  // A monitor of a peer (`name` empty: told node_down when the peer is
  // lost) or of an actor it published under `name` (told actor_down).
  std::uint64_t monitor(std::size_t index, std::string_view name, tx::actor_ref watcher) {
    if (!name.empty() && !valid_name(name))
      throw std::invalid_argument{"tact: \"" + std::string{name} + "\" is not a published name"};
    peer_state& p = *peers_[index];
    const std::uint64_t tag = next_tag_.fetch_add(1, std::memory_order_relaxed);
    monitor_entry entry{std::move(watcher), std::string{name}};
    {
      std::lock_guard guard{p.lock};
      if (p.state == peer_state::waiting || p.state == peer_state::up) {
        if (!name.empty() && !queue_frame(p, encode_frame(watch{tag, id_of_name(name)})))
          throw std::runtime_error{full(p)};
        p.monitors.emplace(tag, std::move(entry));
        return tag;
      }
    }
    // Lost now: told at once.
    tell_monitor(p.name, entry, true);
    return tag;
  }

  void demonitor(std::uint64_t tag) {
    for (const auto& q : peers_) {
      peer_state& p = *q;
      std::lock_guard guard{p.lock};
      const auto at = p.monitors.find(tag);
      if (at == p.monitors.end()) continue;
      if (!at->second.name.empty() && p.state != peer_state::lost && p.state != peer_state::closed)
        static_cast<void>(
            queue_frame(p, encode_frame(unwatch{tag})));  // full: told down later, ignored
      p.monitors.erase(at);
      return;
    }
  }

  std::size_t peer_index(std::string_view name) const {
    for (std::size_t i = 0; i < peers_.size(); ++i)
      if (peers_[i]->name == name) {
        if (!peers_[i]->sends) throw std::invalid_argument{no_address(name)};
        return i;
      }
    throw std::invalid_argument{"tact: \"" + std::string{name} + "\" is not on the allow-list"};
  }

  tx::actor_ref proxy(std::size_t peer, std::uint64_t id, std::uint64_t epoch) {
    auto target = std::make_shared<const proxy_target>(weak_from_this(), peer, id, epoch);
    return tx::spawn(system_, {[target](const tx::message& m) {
                       const std::shared_ptr<node_core> core = target->core.lock();
                       if (!core)
                         throw std::runtime_error{"tact: the node of this remote actor has ended"};
                       core->forward(target->peer, target->id, target->epoch, m);
                     }},
                     tx::mode::serialized);
  }

  bool connected(std::size_t peer) const {
    std::lock_guard guard{peers_[peer]->lock};
    return peers_[peer]->state == peer_state::up && peers_[peer]->greeted;
  }

  node_stats stats() const noexcept {
    const link_stats link = link_->stats();
    return {.sent = sent_.load(std::memory_order_relaxed),
            .received = received_.load(std::memory_order_relaxed),
            .undelivered = undelivered_.load(std::memory_order_relaxed) + link.dropped_at_loss,
            .unknown_targets = unknown_targets_.load(std::memory_order_relaxed),
            .unknown_types = unknown_types_.load(std::memory_order_relaxed),
            .malformed = malformed_.load(std::memory_order_relaxed) + link.malformed,
            .peers_lost = peers_lost_.load(std::memory_order_relaxed),
            .refused_clients = link.refused,
            .cut_offs = link.cut_offs};
  }

 private:
  struct published {
    std::string name;
    tx::actor_ref actor;
  };

  struct monitor_entry {
    tx::actor_ref watcher;
    std::string name;  // empty: a monitor of the node
  };

  struct peer_state {
    std::string name;
    bool sends = false;       // has an address
    mutable std::mutex lock;  // guards what follows
    // waiting: no connection made yet (frames wait here); up; lost: the
    // connection was lost and is not back (sends are dropped); closed: the
    // node is ending.
    enum { waiting, up, lost, closed } state = waiting;
    // Bumped each time the peer is lost or found restarted: what was
    // exchanged with it before (references both ways) is void.
    std::uint64_t epoch = 1;
    std::uint64_t incarnation = 0;              // theirs, 0 until their hello
    bool greeted = false;                       // their hello came: the tables below are set
    bool greeted_in_epoch = false;              // ... in this epoch
    std::vector<std::uint32_t> ours_of_theirs;  // their type index -> ours, or not_carried
    std::vector<on_peer> sendable;              // per type of ours
    // Actors sent to the peer as customers, by the id it knows them by.
    std::unordered_map<std::uint64_t, tx::actor_ref> exports;
    std::uint64_t next_export = 1;
    std::deque<std::vector<std::byte>> unsent;  // while waiting
    std::size_t unsent_bytes = 0;
    // This node's monitors of the peer and its names, by tag.
    std::unordered_map<std::uint64_t, monitor_entry> monitors;
  };

  // What the peer and its actors had of this node when an epoch ended.
  struct ended_epoch {
    bool ended = false;
    std::unordered_map<std::uint64_t, tx::actor_ref> exports;
    std::unordered_map<std::uint64_t, monitor_entry> monitors;
  };

  // A peer's monitor of a name this node published: told `down` once.
  struct watcher {
    std::size_t peer;
    std::uint64_t tag;
    std::uint64_t epoch;  // the peer's, when it asked: void once that ends
  };

  // Exports the actors a message being sent to `p` refers to, under p.lock.
  class exporter final : public reference_context {
   public:
    explicit exporter(peer_state& p) noexcept : p_{p} {}
    std::uint64_t export_ref(const tx::actor_ref& actor) override {
      const std::uint64_t id = p_.next_export++;
      made_.push_back(id);  // first: if the table cannot take it, undo() finds nothing to erase
      p_.exports.emplace(id, actor);
      return id;
    }
    tx::actor_ref import_ref(std::uint64_t) override { return {}; }
    // The message is not sent: the peer never hears of these ids.
    void undo() noexcept {
      for (std::uint64_t id : made_) p_.exports.erase(id);
    }

   private:
    peer_state& p_;
    std::vector<std::uint64_t> made_;
  };

  // Makes proxies for the actors a message from peer `index` refers to.
  class importer final : public reference_context {
   public:
    importer(node_core& core, std::size_t index, std::uint64_t epoch) noexcept
        : core_{core}, index_{index}, epoch_{epoch} {}
    std::uint64_t export_ref(const tx::actor_ref&) override {
      throw std::logic_error{"tact: a node exports references only as it sends"};
    }
    // Ids the peer gave are below named_bit (which marks our own names).
    tx::actor_ref import_ref(std::uint64_t id) override {
      if ((id & named_bit) != 0) return {};
      return core_.proxy(index_, id, epoch_);
    }

   private:
    node_core& core_;
    std::size_t index_;
    std::uint64_t epoch_;
  };

  // What a proxy forwards to: an actor of `peer`, by the id the peer gave
  // it. epoch 0: a published name, reached on whatever connection is up;
  // else a reference the peer sent in that epoch, void once it ends, and
  // released when the proxy goes.
  struct proxy_target {
    proxy_target(std::weak_ptr<node_core> c, std::size_t p, std::uint64_t i,
                 std::uint64_t e) noexcept
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

  std::vector<std::byte> greeting() const {
    hello h{.incarnation = incarnation_, .listen = {}, .types = {}};
    for (const carried_type& t : types_) h.types.push_back({t.name, t.fingerprint});
    return encode_frame(h);
  }

  // A proxy's handler: m to actor `id` of `peer`. Throws (rolling the
  // proxy's handling back, which a customer hears of as a failure) if m
  // cannot be carried; a send on a lost connection is dropped, and its
  // customer told node_down (staged in the proxy's handler).
  void forward(std::size_t peer, std::uint64_t id, std::uint64_t epoch, const tx::message& m) {
    std::uint32_t type = 0;
    while (type < types_.size() && !types_[type].carries(m)) ++type;
    if (type == types_.size())
      throw std::invalid_argument{"tact: a node cannot carry a message of " + m.describe() +
                                  ": list its type in the node's message_types"};
    peer_state& p = *peers_[peer];
    // A customer from a peer we have no address for: no reply can reach it.
    if (!p.sends) throw std::invalid_argument{no_address(p.name)};
    std::unique_lock guard{p.lock};
    if (p.greeted && p.sendable[type] != on_peer::received)
      throw std::invalid_argument{"tact: peer \"" + p.name + "\" " +
                                  (p.sendable[type] == on_peer::unknown
                                       ? "does not carry \""
                                       : "carries another shape of \"") +
                                  types_[type].name + "\": the message is not sent"};
    if (p.state == peer_state::lost || p.state == peer_state::closed ||
        (epoch != 0 && epoch != p.epoch)) {
      guard.unlock();
      undelivered_.fetch_add(1, std::memory_order_relaxed);
      if (const tx::actor_ref* customer = m.customer(); customer != nullptr && *customer)
        tx::send(*customer, tx::node_down{p.name});
      return;
    }
    // Every actor the message refers to, its customer and the references
    // inside it, becomes reachable by the peer under an id of its own.
    exporter exports{p};
    try {
      envelope e{.target = id, .type = type, .sender = 0, .payload = {}};
      const tx::actor_ref* customer = nullptr;
      {
        const reference_scope scope{exports};
        customer = types_[type].encode(m, e.payload);
      }
      if (customer != nullptr && *customer) e.sender = exports.export_ref(*customer);
      std::vector<std::byte> frame = encode_frame(batch{{std::move(e)}});
      if (frame.size() > link_->max_frame())
        throw std::length_error{"tact: a message of " + m.describe() + " takes " +
                                std::to_string(frame.size()) +
                                " bytes, more than a frame may carry"};
      if (!queue_frame(p, std::move(frame))) throw std::runtime_error{full(p)};
    } catch (...) {
      // Nothing left: the peer will not hear of those actors.
      exports.undo();
      throw;
    }
    sent_.fetch_add(1, std::memory_order_relaxed);
  }

  // Under p.lock, p waiting or up: `frame` leaves for the peer in order,
  // or waits for its first connection. False if the queue is full.
  bool queue_frame(peer_state& p, std::vector<std::byte> frame) {
    if (p.state != peer_state::waiting)
      return link_->send(p.name, std::move(frame)) != send_result::overflow;
    if (frame.size() > config_.max_queued - std::min(p.unsent_bytes, config_.max_queued))
      return false;
    p.unsent_bytes += frame.size();
    p.unsent.push_back(std::move(frame));
    return true;
  }

  static std::string no_address(std::string_view peer) {
    return "tact: peer \"" + std::string{peer} +
           "\" has no address on the allow-list: this node cannot send to it";
  }

  static std::string full(const peer_state& p) {
    return "tact: the queue to peer \"" + p.name + "\" is full (node_config::max_queued)";
  }

  // A proxy of a reference the peer sent in `epoch` is gone.
  void released(std::size_t peer, std::uint64_t id, std::uint64_t epoch) noexcept {
    peer_state& p = *peers_[peer];
    std::lock_guard guard{p.lock};
    if (p.state != peer_state::up || p.epoch != epoch) return;
    try {
      static_cast<void>(link_->send(p.name, encode_frame(release{{id}})));
    } catch (...) {
      // No memory for the frame: the peer holds the actor until the
      // connection ends.
    }
  }

  // On the link's thread, as the rest below.
  void on_connection(std::string_view name, peer_event event) {
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

  // Under p.lock: what was exchanged with the peer is void. Returns the
  // actors it held for it and this node's monitors of it, to be told
  // (outside the lock, by tell_ended).
  ended_epoch end_epoch(peer_state& p) {
    ++p.epoch;
    p.greeted_in_epoch = false;
    peers_lost_.fetch_add(1, std::memory_order_relaxed);
    return {true, std::exchange(p.exports, {}), std::exchange(p.monitors, {})};
  }

  // Outside every lock: tells each actor the peer held, and each monitor
  // of it, that it is lost; forgets the peer's monitors of our names.
  void tell_ended(std::size_t index, ended_epoch& ended) {
    if (!ended.ended) return;
    const std::string& peer = peers_[index]->name;
    for (auto& [id, actor] : ended.exports) tx::send(actor, tx::node_down{peer});
    for (auto& [tag, entry] : ended.monitors) tell_monitor(peer, entry, true);
    ended = {};
    std::lock_guard guard{names_lock_};
    std::erase_if(watched_, [index](const auto& w) { return w.second.peer == index; });
  }

  static void tell_monitor(const std::string& peer, const monitor_entry& m, bool node_lost) {
    if (m.name.empty())
      tx::send(m.watcher, tx::node_down{peer});
    else
      tx::send(m.watcher, tx::actor_down{peer, m.name, node_lost});
  }

  // Under names_lock_: the peers' monitors of name `id`, taken.
  std::vector<watcher> take_watchers(std::uint64_t id) {
    std::vector<watcher> taken;
    const auto [first, last] = watched_.equal_range(id);
    for (auto at = first; at != last; ++at) taken.push_back(at->second);
    watched_.erase(first, last);
    return taken;
  }

  // Outside names_lock_: each watcher's peer is told its name is down,
  // if the connection it asked on still lives.
  void tell_watchers(const std::vector<watcher>& told) {
    for (const watcher& w : told) {
      peer_state& p = *peers_[w.peer];
      std::lock_guard guard{p.lock};
      if (p.epoch != w.epoch || (p.state != peer_state::up && p.state != peer_state::waiting))
        continue;
      // Full: the peer is told nothing, but its monitor is told when the
      // connection, overflowing, is lost.
      static_cast<void>(queue_frame(p, encode_frame(down{w.tag})));
    }
  }

  // False if the frame is malformed (the link counts it against the peer).
  bool on_frame(std::string_view name, std::span<const std::byte> bytes) {
    const std::size_t index = find(name);
    frame f;
    if (decode_frame(bytes, f) != wire_error::none) {
      malformed_.fetch_add(1, std::memory_order_relaxed);
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
      std::erase_if(watched_, [&](const auto& e) {
        return e.second.peer == index && e.second.tag == u->tag;
      });
      return true;
    }
    said_down(*peers_[index], std::get<down>(f));
    return true;
  }

  // The peer monitors one of our names: told down when it goes, or now.
  bool watched(std::size_t index, const watch& w) {
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
  void said_down(peer_state& p, const down& d) {
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

  void greeted(std::size_t index, const hello& h) {
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
      p.sendable.assign(types_.size(), on_peer::unknown);
      for (std::size_t i = 0; i < h.types.size(); ++i)
        for (std::uint32_t j = 0; j < types_.size(); ++j) {
          if (types_[j].name != h.types[i].name) continue;
          const bool same = types_[j].fingerprint == h.types[i].fingerprint;
          p.sendable[j] = same ? on_peer::received : on_peer::other_shape;
          if (same) p.ours_of_theirs[i] = j;
        }
    }
    tell_ended(index, ended);
  }

  // False if the envelope is malformed; a message for a name or a type
  // this node does not know is counted, and dropped, but not malformed.
  bool deliver(std::size_t index, const envelope& e) {
    peer_state& p = *peers_[index];
    tx::actor_ref target;
    std::uint32_t type = not_carried;
    std::uint64_t epoch = 0;
    {
      std::lock_guard guard{p.lock};
      if (e.type < p.ours_of_theirs.size()) type = p.ours_of_theirs[e.type];
      epoch = p.epoch;
      if ((e.target & named_bit) == 0) {
        const auto at = p.exports.find(e.target);
        if (at != p.exports.end()) target = at->second;
      }
    }
    if (type == not_carried) {
      unknown_types_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    if ((e.target & named_bit) != 0) {
      std::lock_guard guard{names_lock_};
      const auto at = published_.find(e.target);
      if (at != published_.end()) target = at->second.actor;
    }
    if (!target) {
      unknown_targets_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    importer imports{*this, index, epoch};
    tx::actor_ref customer;
    if (e.sender != 0) {
      customer = imports.import_ref(e.sender);
      if (!customer) {
        malformed_.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
    }
    const reference_scope scope{imports};
    if (types_[type].deliver(e.payload, target, std::move(customer)) != wire_error::none) {
      malformed_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    received_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  void released_by_peer(peer_state& p, const release& r) {
    std::vector<tx::actor_ref> dropped;
    std::lock_guard guard{p.lock};
    for (std::uint64_t id : r.ids) {
      const auto at = p.exports.find(id);
      if (at == p.exports.end()) continue;
      dropped.push_back(std::move(at->second));
      p.exports.erase(at);
    }
  }

  // The index of a peer the link named: always on the allow-list.
  std::size_t find(std::string_view name) const noexcept {
    std::size_t i = 0;
    while (peers_[i]->name != name) ++i;
    return i;
  }

  actor_system& system_;
  const node_config config_;
  const std::vector<carried_type> types_;
  std::uint64_t incarnation_ = 0;
  std::vector<std::unique_ptr<peer_state>> peers_;

  // Never held with a peer's lock.
  std::mutex names_lock_;
  std::unordered_map<std::uint64_t, published> published_;   // guarded by names_lock_
  std::unordered_multimap<std::uint64_t, watcher> watched_;  // by name id; guarded by names_lock_
  std::atomic<std::uint64_t> next_tag_{1};

  std::atomic<std::uint64_t> sent_{0}, received_{0}, undelivered_{0}, unknown_targets_{0},
      unknown_types_{0}, malformed_{0}, peers_lost_{0};

  std::unique_ptr<secure_link> link_;
};

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
  if (!detail::valid_name(name))
    throw std::invalid_argument{"tact: \"" + std::string{name} + "\" is not a published name"};
  return core_->proxy(core_->peer_index(peer), detail::id_of_name(name), 0);
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
