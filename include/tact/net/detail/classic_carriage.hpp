#pragma once

// How a node carries classic messages (docs/remote.md, "Classic actors"):
// the templates tact/net/node.hpp instantiates for each message type, and
// the functions of tact-net they call. Installed for those templates; not
// for users.
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <tact/actor.hpp>
#include <tact/ask.hpp>
#include <tact/detail/reply_slot.hpp>
#include <tact/export.hpp>
#include <tact/handle.hpp>
#include <tact/message.hpp>
#include <tact/net/wire.hpp>
#include <tact/send.hpp>
#include <tact/send_new.hpp>

namespace tact::net::detail {

class node_core;
using tact::detail::reply_base;
using tact::detail::reply_slot;

// The record a classic message crosses as: the message itself when it is
// declared with TACT_WIRE (a class derived from tact::message, a request
// among them), or T for a tact::payload<T>.
template <class M>
struct wire_of {
  using type = M;
};
template <class T>
struct wire_of<payload<T>> {
  using type = T;
};
template <class M>
using wire_of_t = typename wire_of<M>::type;

template <class M>
concept classic_wire_message = std::derived_from<M, message> && wire_record<wire_of_t<M>> &&
    (!request_message<M> || wire_record<typename M::reply_type>);

// The index of a wire record in a node's message_types, found by its name
// and shape; std::invalid_argument, naming it, if the node does not carry
// it.
TACT_API std::uint32_t carried_index(const node_core& core, std::string_view name,
                                     std::uint64_t fingerprint);

template <wire_record T>
std::uint32_t carried_index_of(const node_core& core) {
  return carried_index(core, wire_name<T>(), wire_fingerprint<T>());
}

// A classic message on its way to an actor of another node.
struct classic_outbound {
  const void* message = nullptr;  // the record to encode
  void (*encode)(const void* message, std::vector<std::byte>& out) = nullptr;
  // A request's slot, and how its answer (a payload of the reply type,
  // whose index is `reply_type`) is decoded into it: the node keeps both
  // until the answer, a failure, or the loss of the peer settles it.
  std::shared_ptr<reply_base> slot;
  bool (*answer)(reply_base& slot, std::span<const std::byte> payload) = nullptr;
  std::uint32_t reply_type = 0;
};

// Sends `out` to actor `target` of peer `peer` as message type `type`.
// `epoch` is 0 for a published name, else the epoch of the connection
// that brought the target's id (see node_core::proxy). Throws what a
// transactional proxy's handler throws (a type the peer does not carry, a
// full queue); on a lost connection the message is dropped and counted,
// and a request's slot answers node_down.
TACT_API void forward_classic(node_core& core, std::size_t peer, std::uint64_t target,
                              std::uint64_t epoch, std::uint32_t type, classic_outbound& out);

// Where the answer to a request from another node goes: actor `target`
// of `peer`, as type `type`, if the connection it came on still lives.
struct reply_route {
  std::weak_ptr<node_core> core;
  std::size_t peer = 0;
  std::uint64_t epoch = 0;
  std::uint64_t target = 0;
  std::uint32_t type = 0;
};

// Sends a request's outcome back along `route`: the encoded reply
// (replied), or the asked behaviour's exception's text (failed), or none
// (no_reply). Dropped if the connection was lost meanwhile.
TACT_API void answer_remote(const reply_route& route, reply_base::state outcome,
                            std::vector<std::byte> reply, std::string what) noexcept;

// A reply slot with no asker on this node: its outcome is sent back to the
// asker's node.
template <class R>
class relayed_reply final : public reply_slot<R> {
 public:
  explicit relayed_reply(reply_route route) noexcept : route_{std::move(route)} {
    this->relay_to(&relay);
  }

 private:
  static void relay(reply_base& slot, reply_base::state outcome) noexcept {
    auto& self = static_cast<relayed_reply&>(slot);
    std::vector<std::byte> reply;
    std::string what;
    try {
      if (outcome == reply_base::replied) encode(self.take(), reply);
      if (outcome == reply_base::failed) what = describe(self.error());
    } catch (...) {
      outcome = reply_base::failed;
      what = "tact: the reply could not be encoded";
    }
    answer_remote(self.route_, outcome, std::move(reply), std::move(what));
  }

  static std::string describe(const std::exception_ptr& e) {
    try {
      if (e) std::rethrow_exception(e);
    } catch (const std::exception& x) {
      return x.what();
    } catch (...) {
    }
    return "an exception that is not a std::exception";
  }

  reply_route route_;
};

// How a published classic actor receives one message type from another
// node: decodes it into a message it makes, and sends it through the
// actor's handle (`handle`, a handle<Hs...>). A request's answer goes back
// along `route` (null: nobody asked).
using classic_deliver_fn = wire_error (*)(const void* handle, std::span<const std::byte> payload,
                                          const reply_route* route);

template <class M, class... Hs>
wire_error deliver_classic(const void* actor, std::span<const std::byte> payload,
                           const reply_route* route) {
  auto m = std::make_unique<tact::detail::made<M>>();
  m->allow_unsent();  // unsent if it does not decode
  const wire_error e = decode(payload, static_cast<wire_of_t<M>&>(*m));
  if (e != wire_error::none) return e;
  m->set_allocation(allocation::Delete);
  if constexpr (request_message<M>) {
    using reply = typename M::reply_type;
    if (route != nullptr)
      tact::detail::request_access::attach<reply>(*m,
                                                  std::make_shared<relayed_reply<reply>>(*route));
  }
  send(*static_cast<const handle<Hs...>*>(actor), static_cast<M&>(*m));
  m.release();  // the delivery frees it
  return wire_error::none;
}

// One entry of a published classic actor's table: the type it receives
// (an index into the node's message_types), how, and the type of its
// reply, if it is a request.
struct classic_entry {
  std::uint32_t type = 0;
  classic_deliver_fn deliver = nullptr;
  std::uint32_t reply_type = 0;
};

// The table of a classic actor reached through a handle<Ms...>, by the
// node's indices of its types (std::invalid_argument if it does not carry
// one).
template <class M>
classic_entry classic_entry_of(const node_core& core) {
  std::uint32_t reply = 0;
  if constexpr (request_message<M>) reply = carried_index_of<typename M::reply_type>(core);
  return {carried_index_of<wire_of_t<M>>(core), nullptr, reply};
}

template <class... Ms>
std::vector<classic_entry> classic_table(const node_core& core) {
  std::vector<classic_entry> table{classic_entry_of<Ms>(core)...};
  const classic_deliver_fn delivers[] = {&deliver_classic<Ms, Ms...>...};
  for (std::size_t i = 0; i < table.size(); ++i) table[i].deliver = delivers[i];
  return table;
}

TACT_API void publish_classic(node_core& core, std::string_view name,
                              std::shared_ptr<const void> handle, std::vector<classic_entry> table);

// The node keeps each classic proxy it makes, and deletes it (delete_msg)
// when it ends.
TACT_API void adopt_proxy(node_core& core, actor& proxy);
TACT_API actor_system& system_of(node_core& core) noexcept;
TACT_API std::size_t peer_index(const node_core& core, std::string_view peer);
TACT_API std::uint64_t name_id(std::string_view name);

template <class Self, class M>
struct proxy_receive {
  allocation receive(M& m) { return static_cast<Self&>(*this).forward(m); }
};

// A local stand-in for a classic actor of another node: a classic actor
// that receives each of Ms and forwards it, in the order received.
template <class... Ms>
class classic_proxy final : public actor, public proxy_receive<classic_proxy<Ms...>, Ms>... {
 public:
  using indices = std::array<std::uint32_t, sizeof...(Ms)>;

  // `types`: the index in the node's message_types of each of Ms; `replies`:
  // of each one's reply type, for requests (see indices_of).
  classic_proxy(const std::shared_ptr<node_core>& core, std::size_t peer, std::uint64_t target,
                std::uint64_t epoch, indices types, indices replies)
      : actor{system_of(*core)},
        core_{core},
        peer_{peer},
        target_{target},
        epoch_{epoch},
        types_{types},
        replies_{replies} {}

  // Throws std::invalid_argument if the node does not carry one of them.
  static std::pair<indices, indices> indices_of(const node_core& core) {
    return {{carried_index_of<wire_of_t<Ms>>(core)...}, {reply_index<Ms>(core)...}};
  }

  using proxy_receive<classic_proxy, Ms>::receive...;

  template <class M>
  allocation forward(M& m) {
    constexpr std::size_t slot = tact::detail::handle_slot<M, Ms...>();
    classic_outbound out{&static_cast<const wire_of_t<M>&>(m),
                         [](const void* record, std::vector<std::byte>& bytes) {
                           encode(*static_cast<const wire_of_t<M>*>(record), bytes);
                         },
                         {},
                         nullptr,
                         replies_[slot]};
    if constexpr (request_message<M>) {
      using reply = typename M::reply_type;
      out.slot = tact::detail::request_access::detach<reply>(m);
      out.answer = [](reply_base& s, std::span<const std::byte> bytes) {
        reply value{};
        if (decode(bytes, value) != wire_error::none) return false;
        static_cast<reply_slot<reply>&>(s).reply(std::move(value));
        return true;
      };
    }
    try {
      const std::shared_ptr<node_core> core = core_.lock();
      if (!core) throw std::runtime_error{"tact: the node of this remote actor has ended"};
      forward_classic(*core, peer_, target_, epoch_, types_[slot], out);
    } catch (...) {
      // The asker hears of it; the engine reports it.
      if (out.slot) out.slot->fail(std::current_exception());
      throw;
    }
    return allocation::Nodelete;
  }

 private:
  template <class M>
  static std::uint32_t reply_index(const node_core& core) {
    if constexpr (request_message<M>)
      return carried_index_of<typename M::reply_type>(core);
    else
      return 0;
  }

  std::weak_ptr<node_core> core_;
  std::size_t peer_;
  std::uint64_t target_;
  std::uint64_t epoch_;
  indices types_;
  indices replies_;
};

// ---- handles inside messages ----

// What a node's reference context also does for classic actors (see
// reference_context): a handle<Ms...> inside a message crosses as an id,
// and arrives as a handle to a proxy.
class classic_reference_context {
 public:
  using table_fn = std::vector<classic_entry> (*)(const node_core&);
  using proxy_fn = actor* (*)(const std::shared_ptr<node_core>& core, std::size_t peer,
                              std::uint64_t id, std::uint64_t epoch);
  // The id the peer will know `actor`, reached through `handle` (a
  // handle's copy) with the deliveries `table` makes, by: one per actor
  // and handle type for as long as the connection lives.
  virtual std::uint64_t export_classic(const void* actor, std::shared_ptr<const void> handle,
                                       table_fn table) = 0;
  // The proxy for the peer's export `id`, which `make` made the first
  // time; null if `id` came before with another handle type.
  virtual actor* import_classic(std::uint64_t id, proxy_fn make) = 0;

 protected:
  ~classic_reference_context() = default;
};

template <class... Ms>
actor* make_classic_proxy(const std::shared_ptr<node_core>& core, std::size_t peer,
                          std::uint64_t id, std::uint64_t epoch) {
  using proxy_type = classic_proxy<Ms...>;
  const auto [types, replies] = proxy_type::indices_of(*core);
  auto proxy = std::make_unique<proxy_type>(core, peer, id, epoch, types, replies);
  adopt_proxy(*core, *proxy);
  return proxy.release();
}

// A handle to a classic actor crosses only inside a node's message, as a
// transactional reference does: an id, 0 for an empty handle. The shape
// names the messages it takes.
// clang-format off
template <class... Ms>
requires(classic_wire_message<Ms> && ...)
struct codec<handle<Ms...>> {
  // clang-format on
  static constexpr std::size_t least = 1;
  static void shape(std::string& s) {
    s += "h<";
    bool first = true;
    ((s += first ? "" : ",", first = false, codec<wire_of_t<Ms>>::shape(s)), ...);
    s += '>';
  }
  static void encode(wire_writer& w, const handle<Ms...>& h) {
    if (!h) return w.varint(0);
    auto* context = dynamic_cast<classic_reference_context*>(current_references());
    if (context == nullptr)
      throw std::invalid_argument{"tact: a handle crosses the wire only in a node's message"};
    w.varint(context->export_classic(h.get(), std::make_shared<const handle<Ms...>>(h),
                                     &classic_table<Ms...>));
  }
  static bool decode(wire_reader& r, handle<Ms...>& h) {
    std::uint64_t id = 0;
    if (!r.varint(id)) return false;
    if (id == 0) {
      h = {};
      return true;
    }
    auto* context = dynamic_cast<classic_reference_context*>(current_references());
    if (context == nullptr || !r.allocate(1, codec<tx::actor_ref>::proxy_cost))
      return r.fail(wire_error::bad_value);
    actor* proxy = context->import_classic(id, &make_classic_proxy<Ms...>);
    if (proxy == nullptr) return r.fail(wire_error::bad_value);
    h = handle<Ms...>{static_cast<classic_proxy<Ms...>&>(*proxy)};
    return true;
  }
};

}  // namespace tact::net::detail
