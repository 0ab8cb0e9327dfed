#pragma once

// What a tact::net::node is made of: its peers' state, its published
// actors, its monitors, and the link that carries its frames
// (docs/remote.md, "Nodes"; docs/design.md, "Nodes").
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <tact/net/node.hpp>

#include "integration/net/link.hpp"
#include "integration/net/protocol.hpp"

namespace tact::net::detail {

// Ids a node gives what its peers may address: a published name's is a
// hash of the name with the top bit set; an actor sent to a peer, and a
// classic ask's answer, get a number of their own (top bit clear), one per
// send.
inline constexpr std::uint64_t named_bit = std::uint64_t{1} << 63;

std::uint64_t id_of_name(std::string_view name) noexcept;
bool valid_name(std::string_view name) noexcept;

class node_core : public std::enable_shared_from_this<node_core> {
 public:
  node_core(actor_system& system, node_config config, std::vector<carried_type> types);

  // Listens and greets every peer it sends to: the hello is the first
  // frame on each connection.
  void start();
  // Stops the link (no callback runs after this), then lets go of every
  // actor it held for its peers and deletes its classic proxies.
  void stop() noexcept;

  const std::string& endpoint() const noexcept { return link_->endpoint(); }
  actor_system& system() noexcept { return system_; }
  node_stats stats() const noexcept;

  // The index of peer `name`, which must be on the allow-list with an
  // address (std::invalid_argument otherwise).
  std::size_t peer_index(std::string_view name) const;
  bool connected(std::size_t peer) const;
  // The index of a carried type, by name and shape (std::invalid_argument
  // if none).
  std::uint32_t type_index(std::string_view name, std::uint64_t fingerprint) const;

  void publish(std::string_view name, tx::actor_ref actor);
  void publish(std::string_view name, std::shared_ptr<const void> handle,
               std::vector<classic_entry> table);
  void unpublish(std::string_view name);

  // A transactional proxy for actor `id` of `peer` (epoch 0: a published
  // name's id; else a reference the peer sent in that epoch).
  tx::actor_ref proxy(std::size_t peer, std::uint64_t id, std::uint64_t epoch);
  void adopt(actor& classic_proxy);
  void forward_classic(std::size_t peer, std::uint64_t target, std::uint64_t epoch,
                       std::uint32_t type, classic_outbound& out);
  void answer(const reply_route& route, reply_base::state outcome, std::vector<std::byte> reply,
              std::string what) noexcept;

  std::uint64_t monitor(std::size_t peer, std::string_view name, tx::actor_ref watcher);
  void demonitor(std::uint64_t tag);

 private:
  // A classic actor published through a handle.
  struct classic_target {
    std::shared_ptr<const void> handle;
    std::vector<classic_entry> table;
    const classic_entry* entry(std::uint32_t type) const noexcept;
  };

  struct published {
    std::string name;
    tx::actor_ref actor;                            // transactional, or
    std::shared_ptr<const classic_target> classic;  // classic
  };

  struct monitor_entry {
    tx::actor_ref watcher;
    std::string name;  // empty: a monitor of the node
  };

  // A classic ask that went to the peer: where its answer lands.
  struct pending_ask {
    std::shared_ptr<reply_base> slot;
    bool (*answer)(reply_base& slot, std::span<const std::byte> payload);
    std::uint32_t reply_type;  // ours
  };

  struct peer_state {
    std::string name;
    mutable std::mutex lock;  // guards what follows
    bool sends = false;       // has an address: listed, or learned from its hello
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
    std::vector<std::uint8_t> sendable;         // per type of ours: an on_peer
    // Actors sent to the peer, by the id it knows them by.
    std::unordered_map<std::uint64_t, tx::actor_ref> exports;
    // Classic actors sent to the peer inside messages (handles), by the
    // id it knows them by, and that id by actor and handle type.
    std::unordered_map<std::uint64_t, std::shared_ptr<const classic_target>> classic_exports;
    std::map<std::pair<const void*, classic_reference_context::table_fn>, std::uint64_t>
        classic_ids;
    // Proxies for the classic actors the peer sent, by its id, with what
    // made them (one handle type per id).
    std::unordered_map<std::uint64_t, std::pair<actor*, classic_reference_context::proxy_fn>>
        classic_imports;
    // Classic asks waiting for the peer's answer, by the id it answers.
    std::unordered_map<std::uint64_t, pending_ask> asks;
    std::size_t asks_pruned_at = 64;            // size at which settled asks are swept out next
    std::uint64_t next_id = 1;                  // for exports and asks
    std::deque<std::vector<std::byte>> unsent;  // while waiting
    std::size_t unsent_bytes = 0;
    // This node's monitors of the peer and its names, by tag.
    std::unordered_map<std::uint64_t, monitor_entry> monitors;
  };

  // What the peer and its actors had of this node when an epoch ended.
  struct ended_epoch {
    bool ended = false;
    std::unordered_map<std::uint64_t, tx::actor_ref> exports;
    std::unordered_map<std::uint64_t, std::shared_ptr<const classic_target>> classic_exports;
    std::unordered_map<std::uint64_t, pending_ask> asks;
    std::unordered_map<std::uint64_t, monitor_entry> monitors;
  };

  // A peer's monitor of a name this node published: told `down` once.
  struct watcher {
    std::size_t peer;
    std::uint64_t tag;
    std::uint64_t epoch;  // the peer's, when it asked: void once that ends
  };

  class exporter;
  class importer;
  struct proxy_target;

  std::vector<std::byte> greeting() const;

  // Under p.lock: throws std::invalid_argument if the peer, by its hello,
  // does not carry our type `type`. Whether a message for an actor of
  // `epoch` (0: a name) can go: the connection is not lost since.
  void check_carried(const peer_state& p, std::uint32_t type) const;
  static bool reachable(const peer_state& p, std::uint64_t epoch) noexcept;
  // Under p.lock, p reachable: sends envelope `e`, whose payload `encode`
  // writes with the actors it refers to exported for the peer; `sender`
  // then sets e.sender (exporting a customer, or registering an ask) and
  // returns an undo for it. Throws, leaving nothing registered, if the
  // frame is too large or the queue full.
  template <class Encode, class Sender>
  void send_envelope(peer_state& p, envelope e, Encode&& encode, Sender&& sender,
                     const std::string& what);
  // Under p.lock, p waiting or up: `frame` leaves for the peer in order,
  // or waits for its first connection. False if the queue is full.
  bool queue_frame(peer_state& p, std::vector<std::byte> frame);
  void forward(std::size_t peer, std::uint64_t id, std::uint64_t epoch, const tx::message& m);
  void released(std::size_t peer, std::uint64_t id, std::uint64_t epoch) noexcept;

  // On the link's thread.
  void on_connection(std::string_view name, peer_event event);
  bool may_retire(std::string_view name);
  bool on_frame(std::string_view name, std::span<const std::byte> bytes);
  void greeted(std::size_t index, const hello& h);
  bool deliver(std::size_t index, const envelope& e);
  bool answered(std::uint32_t type, const envelope& e, pending_ask& ask);
  void outcome_came(std::size_t index, const outcome& o);
  void released_by_peer(peer_state& p, const release& r);
  bool watched(std::size_t index, const watch& w);
  void said_down(peer_state& p, const down& d);

  ended_epoch end_epoch(peer_state& p);
  void tell_ended(std::size_t index, ended_epoch& ended);
  static void tell_monitor(const std::string& peer, const monitor_entry& m, bool node_lost);
  std::vector<watcher> take_watchers(std::uint64_t id);
  void tell_watchers(const std::vector<watcher>& told);
  void replace(std::string_view name, published entry);

  // The index of a peer the link named: always on the allow-list.
  std::size_t find(std::string_view name) const noexcept;
  static std::string no_address(std::string_view peer);
  static std::string full(const peer_state& p);

  actor_system& system_;
  const node_config config_;
  const std::vector<carried_type> types_;
  std::uint64_t incarnation_ = 0;
  std::string advertised_;  // in our hello: where peers connect to us
  std::vector<std::unique_ptr<peer_state>> peers_;

  // Never held with a peer's lock.
  std::mutex names_lock_;
  std::unordered_map<std::uint64_t, published> published_;   // guarded by names_lock_
  std::unordered_multimap<std::uint64_t, watcher> watched_;  // by name id; guarded by names_lock_
  std::atomic<std::uint64_t> next_tag_{1};

  std::mutex proxies_lock_;
  std::vector<actor*> proxies_;  // classic proxies, deleted at stop; guarded by proxies_lock_

  std::atomic<std::uint64_t> sent_{0}, received_{0}, undelivered_{0}, unknown_targets_{0},
      unknown_types_{0}, peers_lost_{0};

  std::unique_ptr<secure_link> link_;
};

}  // namespace tact::net::detail
