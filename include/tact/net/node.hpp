#pragma once

// A node: an actor system's presence on the network (docs/remote.md,
// "Nodes"). It publishes actors under names, hands out references to the
// actors its peers published, and carries messages between them over
// encrypted links, so that an actor sends to and asks a remote actor
// exactly as a local one:
//
//   tact::net::node net{system, config, tact::net::message_types<kv::put, kv::get, kv::value>{}};
//   net.publish("kv", store);                       // on db1
//   tact::tx::actor_ref kv = net.remote("db1", "kv"); // on a client
//   tact::tx::send(kv, kv::put{"a", 1});
//   auto v = tact::tx::ask<kv::value>(system, kv, 1s, kv::get{"a"});
//
// Classic actors are published and reached through handles (publish and
// remote<Ms...> below).
//
// Part of tact-net (dependency('tact-net')).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tact/actor_system.hpp>
#include <tact/export.hpp>
#include <tact/handle.hpp>
#include <tact/net/detail/classic_carriage.hpp>
#include <tact/net/keys.hpp>
#include <tact/net/wire.hpp>
#include <tact/transactional.hpp>

namespace tact::net {

// The message types a node carries, each declared with TACT_WIRE: a
// transactional message crosses when its elements are one of them, or an
// actor reference (the customer) and one of them. Both nodes list a type
// under the same name and shape, or its messages are refused (see node).
template <wire_record... Ts>
struct message_types {};

struct node_config {
  // Where the node listens, a ZeroMQ TCP endpoint ("tcp://127.0.0.1:48896";
  // port 0 picks a free one, see node::endpoint). Every node listens:
  // each sends to a peer over a connection it opens itself.
  std::string listen;
  key_pair keys;  // read_key_file
  // Whom the node talks to: its allow-list (read_allow_list). A peer
  // listed without an address is reached where its hello says it listens
  // (see advertise), once that has come.
  std::vector<peer> peers;
  // Bytes of messages waiting for one peer, at most: a send past it fails
  // (the proxy's handler throws, see node::remote), never dropped unsaid.
  std::size_t max_queued = std::size_t{64} << 20;
  // A peer that answers no heartbeat for `heartbeat_timeout` is taken for
  // lost, even while its TCP connection stands (a stopped process).
  std::chrono::milliseconds heartbeat{1'000};
  std::chrono::milliseconds heartbeat_timeout{5'000};
  // A listed peer that sends `malformed_limit` frames that do not decode
  // is cut off: its connections both ways are closed (it is lost, see
  // node), and its key is refused for `cut_off_for`.
  std::uint32_t malformed_limit = 8;
  std::chrono::milliseconds cut_off_for{60'000};
  // A connection to a peer that has carried no message either way for
  // this long is closed, unless this node waits for the peer (an ask, an
  // actor it sent the peer) or monitors it; the next message opens a new
  // one, and nothing exchanged before is lost or void. 0: never.
  std::chrono::milliseconds idle_after{20'000};
  // DANGER: no encryption and no authentication. Anyone who can reach the
  // port can read, forge and replay messages, and claim any peer's key.
  // Both nodes must set it. For measurements and closed test networks;
  // never where another machine can reach the node.
  bool insecure_plaintext = false;
  // Where peers are to connect to this node, told them in its hello: a
  // peer that lists this node without an address connects there to
  // answer it. Empty: the endpoint it listens on, unless that is a
  // wildcard ("tcp://*:48896"), which tells nothing.
  std::string advertise{};
};

// What a node has carried and refused; a snapshot.
struct node_stats {
  std::uint64_t sent = 0;      // messages handed to a peer's link
  std::uint64_t received = 0;  // messages delivered to a local actor
  // Sent while their peer was lost, or queued when it was: dropped, and
  // their customers told node_down.
  std::uint64_t undelivered = 0;
  // ZeroMQ messages that came on a peer's connection older than its
  // newest: dropped, so that what a peer sent before a connection was
  // lost never arrives after what it sent since.
  std::uint64_t stale = 0;
  std::uint64_t unknown_targets = 0;  // arrived for a name or reference not (or no more) here
  std::uint64_t unknown_types = 0;    // arrived in a type this node does not carry as sent
  std::uint64_t malformed = 0;        // frames or messages that did not decode: dropped
  std::uint64_t peers_lost = 0;       // connections lost, and peers found restarted
  std::uint64_t refused_clients = 0;  // connections from keys not on the allow-list, or cut off
  std::uint64_t cut_offs = 0;         // peers cut off for malformed frames
  std::uint64_t retired = 0;          // idle connections closed (see node_config::idle_after)
};

namespace detail {

class node_core;

// How a node carries one message type T: as T alone, or as (customer, T).
struct carried_type {
  std::string name;
  std::uint64_t fingerprint = 0;
  // Whether m is T or (actor_ref, T).
  bool (*carries)(const tx::message& m);
  // Appends the T of m, which carries() it, to `out`; returns its
  // customer, or nullptr. Actor references inside T are exported through
  // the reference context in place.
  const tx::actor_ref* (*encode)(const tx::message& m, std::vector<std::byte>& out);
  // Decodes a T from `payload` and sends it to `target`, after `customer`
  // if that is not empty.
  wire_error (*deliver)(std::span<const std::byte> payload, const tx::actor_ref& target,
                        tx::actor_ref customer);
};

template <wire_record T>
carried_type carried() {
  return {
      std::string{wire_name<T>()}, wire_fingerprint<T>(),
      [](const tx::message& m) {
        return m.as<T>() != nullptr || m.as<tx::actor_ref, T>() != nullptr;
      },
      [](const tx::message& m, std::vector<std::byte>& out) -> const tx::actor_ref* {
        if (const auto* plain = m.as<T>()) {
          encode(std::get<0>(*plain), out);
          return nullptr;
        }
        const auto* asked = m.as<tx::actor_ref, T>();
        encode(std::get<1>(*asked), out);
        return &std::get<0>(*asked);
      },
      [](std::span<const std::byte> payload, const tx::actor_ref& target, tx::actor_ref customer) {
        T value;
        const wire_error e = decode(payload, value);
        if (e != wire_error::none) return e;
        if (customer)
          tx::send(target, std::move(customer), std::move(value));
        else
          tx::send(target, std::move(value));
        return wire_error::none;
      }};
}

}  // namespace detail

// A node of `system` on the network. It listens at once and connects to
// every peer with an address; messages to a peer wait until the first
// connection to it is made.
//
// What crosses, and how:
// * A peer reaches only what this node published, and references this
//   node sent it (a customer, first element of a message): no remote
//   spawn, no remote code.
// * Sends are at most once and in order per sender and receiver while a
//   connection lives. When it is lost (or the peer answers no heartbeat,
//   or comes back as a new process), every actor this node sent to that
//   peer as a customer is sent tx::node_down, so each pending tx::ask on it
//   ends at once with ask_error::node_down; until the connection is back,
//   sends to the peer are dropped (counted as undelivered), and their
//   customers are sent tx::node_down too.
// * A transactional handler's sends to a remote actor are staged like any
//   other: they leave the node only if the handler commits.
// * A message whose type the peer does not carry, or carries under
//   another shape, is refused before it leaves: the proxy's handler
//   throws std::invalid_argument naming the type, so an ask on it answers
//   ask_error::failed with that exception.
//
// Destroy the node before its system. Thread-safe.
class TACT_API node {
 public:
  // Listens and starts connecting; throws std::runtime_error if it cannot
  // listen, std::invalid_argument if two of Ts have one name.
  template <wire_record... Ts>
  node(actor_system& system, node_config config, message_types<Ts...>)
      : node{system, std::move(config),
             std::vector<detail::carried_type>{detail::carried<Ts>()...}} {}
  ~node();
  node(const node&) = delete;
  node& operator=(const node&) = delete;

  // The endpoint it listens on, with the port it got.
  const std::string& endpoint() const noexcept;

  // Makes `actor` reachable by every peer under `name` (letters, digits,
  // '.', '-', '_'), until unpublished or the node ends. Publishing a name
  // again replaces the actor. std::invalid_argument for a bad name.
  void publish(std::string_view name, tx::actor_ref actor);
  void unpublish(std::string_view name);

  // The same for a classic actor, through a handle naming the messages
  // peers may send it: each a TACT_WIRE record derived from tact::message
  // (a tact::request<R> among them, R declared too) or a
  // tact::payload<T> of a declared T, all listed in this node's
  // message_types (std::invalid_argument otherwise). The actor must stay
  // unfinished while published. A request from a peer is answered to its
  // asker there: a reply, the text of the exception the behaviour threw,
  // or "unanswered" if it is destroyed without a reply.
  template <class... Ms>
  requires(detail::classic_wire_message<Ms>&&...) void publish(std::string_view name,
                                                               const handle<Ms...>& actor) {
    if (!actor) throw std::invalid_argument{"tact: an empty handle cannot be published"};
    detail::publish_classic(*core_, name, std::make_shared<const handle<Ms...>>(actor),
                            detail::classic_table<Ms...>(*core_));
  }

  // A handle to the classic actor `peer` published as `name`, receiving
  // Ms (each as publish takes them): a local proxy, a classic actor that
  // forwards what it receives in order, so `h | m`, tact::send_new(h, ...)
  // and tact::ask(h, request, timeout) work as on a local actor. An ask
  // ends with ask_error::node_down when the connection is lost. Valid
  // until the node ends (then the proxy is deleted, as by delete_msg).
  // std::invalid_argument as remote() above, or if the node does not
  // carry one of Ms (or its reply type).
  template <class... Ms>
  requires(sizeof...(Ms) > 0 &&
           (detail::classic_wire_message<Ms> && ...)) handle<Ms...> remote(std::string_view peer,
                                                                           std::string_view name) {
    const std::uint64_t id = detail::name_id(name);
    actor* proxy =
        detail::make_classic_proxy<Ms...>(core_, detail::peer_index(*core_, peer), id, 0);
    return handle<Ms...>{static_cast<detail::classic_proxy<Ms...>&>(*proxy)};
  }

  // A reference to the actor `peer` published under `name`: a local proxy
  // that forwards what it is sent, in order. It is made at once, without
  // asking the peer: messages to a name the peer has not published are
  // dropped there (counted in its unknown_targets), and an ask on them
  // ends at its deadline. std::invalid_argument if this node cannot send
  // to `peer`: not on the allow-list, or listed without an address and
  // its hello, which says where it listens, has not come yet.
  tx::actor_ref remote(std::string_view peer, std::string_view name);

  // Monitors (docs/remote.md, "Monitors"). Each is told once, then
  // forgotten; demonitor forgets it before.
  using monitor_id = std::uint64_t;

  // `watcher` is sent tx::node_down{peer} the next time the connection to
  // `peer` is lost, or the peer is found restarted: at once if it is lost
  // now. std::invalid_argument as for remote() (this node sees the
  // connections it makes).
  monitor_id monitor(std::string_view peer, tx::actor_ref watcher);

  // `watcher` is sent tx::actor_down{peer, name, node_lost} when the actor
  // `peer` published as `name` cannot be reached under it any more: the
  // name is unpublished there, or published again for another actor, or
  // was not published when the monitor reached the peer (node_lost false);
  // or the connection is lost (node_lost true). std::invalid_argument as
  // above, or for a name that cannot be published; std::runtime_error if
  // the queue to the peer is full.
  monitor_id monitor(std::string_view peer, std::string_view name, tx::actor_ref watcher);

  // Forgets a monitor not yet told; nothing if it was.
  void demonitor(monitor_id id);

  // Whether the connection to `peer` is up and its hello has come, so that
  // a message of a type it does not carry is refused at send (for tests
  // and start-up: sends need not wait for it). A connection retired for
  // being idle counts as up: the next message opens it again.
  bool connected(std::string_view peer) const;

  node_stats stats() const noexcept;

 private:
  node(actor_system& system, node_config config, std::vector<detail::carried_type> types);

  std::shared_ptr<detail::node_core> core_;
};

}  // namespace tact::net
