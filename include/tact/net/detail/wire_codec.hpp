#pragma once

// How each kind of value crosses the wire (see tact/net/wire.hpp for the
// format as users see it). Installed for the templates of wire.hpp; not
// for users.
#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <tact/net/detail/wire_io.hpp>
#include <tact/tx/actor_ref.hpp>

namespace tact::net::detail {

// What TACT_WIRE declares: a record's stable name and its members, in
// wire order.
template <class T, class... M>
struct record_info {
  std::string_view name;
  std::tuple<M T::*...> members;
};

template <class T, class... M>
constexpr record_info<T, M...> make_record(std::string_view name, M T::*... members) noexcept {
  return {name, {members...}};
}

template <class T>
concept declared_record = requires(const T* p) {
  {tact_wire_record(p)};
};

template <class T>
struct codec;  // undefined: not a wire type

template <class T>
concept has_codec = requires {
  codec<T>::least;
};

// The shape of a record nested in itself (a tree of nodes): only its name
// the second time, so that a shape is finite. The records whose shape is
// being written, innermost last, on this thread.
inline std::vector<std::string_view>& shapes_in_progress() {
  thread_local std::vector<std::string_view> names;
  return names;
}

// ---- integers, enums, floating point ----

template <class T>
requires std::same_as<T, bool>
struct codec<T> {
  static constexpr std::size_t least = 1;
  static void shape(std::string& s) { s += 'b'; }
  static void encode(wire_writer& w, bool v) { w.fixed(v ? 1 : 0, 1); }
  static bool decode(wire_reader& r, bool& v) {
    std::uint64_t b = 0;
    if (!r.fixed(b, 1)) return false;
    if (b > 1) return r.fail(wire_error::bad_value);
    v = b == 1;
    return true;
  }
};

// Unsigned: a varint. Signed: zigzag (0, -1, 1, -2, ... as 0, 1, 2, 3, ...),
// then a varint, so that small magnitudes of either sign take one byte.
// A decoded value outside T's range is bad_value, never truncated.
template <class T>
requires(std::integral<T> && !std::same_as<T, bool>) struct codec<T> {
  static constexpr std::size_t least = 1;
  static void shape(std::string& s) {
    s += std::is_signed_v<T> ? 'i' : 'u';
    s += std::to_string(8 * sizeof(T));
  }
  static void encode(wire_writer& w, T v) {
    if constexpr (std::is_signed_v<T>) {
      const auto u = static_cast<std::uint64_t>(static_cast<std::int64_t>(v));
      w.varint((u << 1) ^ (v < 0 ? ~std::uint64_t{0} : 0));
    } else {
      w.varint(v);
    }
  }
  static bool decode(wire_reader& r, T& v) {
    std::uint64_t u = 0;
    if (!r.varint(u)) return false;
    if constexpr (std::is_signed_v<T>) {
      const auto s = static_cast<std::int64_t>((u >> 1) ^ (~(u & 1) + 1));
      if (s < std::numeric_limits<T>::min() || s > std::numeric_limits<T>::max())
        return r.fail(wire_error::bad_value);
      v = static_cast<T>(s);
    } else {
      if (u > std::numeric_limits<T>::max()) return r.fail(wire_error::bad_value);
      v = static_cast<T>(u);
    }
    return true;
  }
};

// As its underlying integer. Any value of that integer decodes: an enum
// has no list of its enumerators to check against.
template <class T>
requires std::is_enum_v<T>
struct codec<T> {
  using base = codec<std::underlying_type_t<T>>;
  static constexpr std::size_t least = 1;
  static void shape(std::string& s) {
    s += "e(";
    base::shape(s);
    s += ')';
  }
  static void encode(wire_writer& w, T v) {
    base::encode(w, static_cast<std::underlying_type_t<T>>(v));
  }
  static bool decode(wire_reader& r, T& v) {
    std::underlying_type_t<T> u{};
    if (!base::decode(r, u)) return false;
    v = static_cast<T>(u);
    return true;
  }
};

// IEEE 754 bits, little-endian: every value, NaN payloads and -0 included,
// comes back bit for bit.
template <class T>
requires(std::same_as<T, float> || std::same_as<T, double>) struct codec<T> {
  static_assert(std::numeric_limits<T>::is_iec559,
                "tact: the wire format needs IEEE 754 floating point");
  using bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  static constexpr std::size_t least = sizeof(T);
  static void shape(std::string& s) { s += sizeof(T) == 4 ? "f32" : "f64"; }
  static void encode(wire_writer& w, T v) { w.fixed(std::bit_cast<bits>(v), sizeof(T)); }
  static bool decode(wire_reader& r, T& v) {
    std::uint64_t b = 0;
    if (!r.fixed(b, sizeof(T))) return false;
    v = std::bit_cast<T>(static_cast<bits>(b));
    return true;
  }
};

// ---- byte strings ----

// A length, then the bytes. std::string carries bytes, not checked text.
template <class T>
requires(std::same_as<T, std::string> || std::same_as<T, std::vector<std::byte>>) struct codec<T> {
  static constexpr std::size_t least = 1;
  static void shape(std::string& s) { s += std::same_as<T, std::string> ? 's' : 'y'; }
  static void encode(wire_writer& w, const T& v) {
    w.varint(v.size());
    w.raw(v.data(), v.size());
  }
  static bool decode(wire_reader& r, T& v) {
    std::uint64_t n = 0;
    if (!r.count(n, 1) || !r.allocate(n)) return false;
    v.resize(static_cast<std::size_t>(n));
    return r.raw(v.data(), v.size());
  }
};

// ---- containers ----

// Decodes `n` elements of E, handing each to `add`. The caller has
// charged what they take to the budget. A container with elements is one
// level of depth.
template <class E, class Add>
bool decode_elements(wire_reader& r, std::uint64_t n, Add&& add) {
  if (n == 0) return true;
  if (!r.enter()) return false;
  for (std::uint64_t i = 0; i < n && r.ok(); ++i) {
    E e{};
    if (!codec<E>::decode(r, e)) break;
    add(std::move(e));
  }
  r.leave();
  return r.ok();
}

template <class E>
requires(!std::same_as<E, std::byte>) struct codec<std::vector<E>> {
  static constexpr std::size_t least = 1;
  static void shape(std::string& s) {
    s += "v<";
    codec<E>::shape(s);
    s += '>';
  }
  static void encode(wire_writer& w, const std::vector<E>& v) {
    w.varint(v.size());
    for (const E& e : v) codec<E>::encode(w, e);
  }
  static bool decode(wire_reader& r, std::vector<E>& v) {
    v.clear();
    std::uint64_t n = 0;
    if (!r.count(n, codec<E>::least) || !r.allocate(n, sizeof(E))) return false;
    v.reserve(static_cast<std::size_t>(n));  // charged: within the budget
    return decode_elements<E>(r, n, [&](E&& e) { v.push_back(std::move(e)); });
  }
};

// Keys in strictly increasing order: a map has one encoding, and a
// repeated key is bad_value rather than a silent overwrite.
template <class K, class V>
struct codec<std::map<K, V>> {
  using entry = std::pair<K, V>;
  // A tree node's pointers and colour, beside the entry.
  static constexpr std::size_t node = sizeof(std::pair<const K, V>) + 4 * sizeof(void*);
  static constexpr std::size_t least = 1;
  static void shape(std::string& s) {
    s += "m<";
    codec<K>::shape(s);
    s += ',';
    codec<V>::shape(s);
    s += '>';
  }
  static void encode(wire_writer& w, const std::map<K, V>& m) {
    w.varint(m.size());
    for (const auto& [k, v] : m) {
      codec<K>::encode(w, k);
      codec<V>::encode(w, v);
    }
  }
  static bool decode(wire_reader& r, std::map<K, V>& m) {
    m.clear();
    std::uint64_t n = 0;
    if (!r.count(n, codec<K>::least + codec<V>::least) || !r.allocate(n, node)) return false;
    return decode_elements<entry>(r, n, [&](entry&& e) {
      if (!m.empty() && !(std::prev(m.end())->first < e.first)) {
        r.fail(wire_error::bad_value);
        return;
      }
      m.emplace_hint(m.end(), std::move(e.first), std::move(e.second));
    });
  }
};

template <class A, class B>
struct codec<std::pair<A, B>> {
  static constexpr std::size_t least = codec<A>::least + codec<B>::least;
  static void shape(std::string& s) {
    s += "p<";
    codec<A>::shape(s);
    s += ',';
    codec<B>::shape(s);
    s += '>';
  }
  static void encode(wire_writer& w, const std::pair<A, B>& p) {
    codec<A>::encode(w, p.first);
    codec<B>::encode(w, p.second);
  }
  static bool decode(wire_reader& r, std::pair<A, B>& p) {
    return codec<A>::decode(r, p.first) && codec<B>::decode(r, p.second);
  }
};

template <class E, std::size_t N>
struct codec<std::array<E, N>> {
  static constexpr std::size_t least = N * codec<E>::least;
  static void shape(std::string& s) {
    s += "a<" + std::to_string(N) + ',';
    codec<E>::shape(s);
    s += '>';
  }
  static void encode(wire_writer& w, const std::array<E, N>& a) {
    for (const E& e : a) codec<E>::encode(w, e);
  }
  static bool decode(wire_reader& r, std::array<E, N>& a) {
    if (!r.enter()) return false;
    for (E& e : a)
      if (!codec<E>::decode(r, e)) break;
    r.leave();
    return r.ok();
  }
};

// A byte 0 (empty) or 1, then the value.
template <class E>
struct codec<std::optional<E>> {
  static constexpr std::size_t least = 1;
  static void shape(std::string& s) {
    s += "o<";
    codec<E>::shape(s);
    s += '>';
  }
  static void encode(wire_writer& w, const std::optional<E>& o) {
    w.fixed(o.has_value() ? 1 : 0, 1);
    if (o) codec<E>::encode(w, *o);
  }
  static bool decode(wire_reader& r, std::optional<E>& o) {
    bool present = false;
    if (!codec<bool>::decode(r, present)) return false;
    if (!present) {
      o.reset();
      return true;
    }
    if (!r.enter()) return false;
    codec<E>::decode(r, o.emplace());
    r.leave();
    return r.ok();
  }
};

// ---- actor references ----

// What an actor reference becomes on the wire, and back: only a node
// knows, since a reference crosses as an id that the receiving node turns
// into a proxy for it (docs/remote.md). A node puts its context in place
// (reference_scope) while it encodes or decodes a message for one peer.
class reference_context {
 public:
  // The id the peer will know `actor` by, 1 or more.
  virtual std::uint64_t export_ref(const tx::actor_ref& actor) = 0;
  // A proxy for the actor the peer exported as `id`; empty if there is
  // none (the input is then refused).
  virtual tx::actor_ref import_ref(std::uint64_t id) = 0;

 protected:
  ~reference_context() = default;
};

inline reference_context*& current_references() noexcept {
  thread_local reference_context* context = nullptr;
  return context;
}

// `context` is this thread's while the scope lasts.
class reference_scope {
 public:
  explicit reference_scope(reference_context& context) noexcept
      : outer_{std::exchange(current_references(), &context)} {}
  ~reference_scope() { current_references() = outer_; }
  reference_scope(const reference_scope&) = delete;
  reference_scope& operator=(const reference_scope&) = delete;

 private:
  reference_context* outer_;
};

// A varint: 0 for an empty reference, else the id the sending node gave
// the actor for the receiving one. Outside a node's scope a non-empty
// reference cannot be encoded (std::invalid_argument) and no reference
// decodes (bad_value). A decoded reference is charged as a small
// allocation: it makes a proxy.
template <>
struct codec<tx::actor_ref> {
  static constexpr std::size_t least = 1;
  static constexpr std::size_t proxy_cost = 256;
  static void shape(std::string& s) { s += 'r'; }
  static void encode(wire_writer& w, const tx::actor_ref& r) {
    if (!r) return w.varint(0);
    reference_context* context = current_references();
    if (context == nullptr)
      throw std::invalid_argument{
          "tact: an actor reference crosses the wire only in a node's message"};
    w.varint(context->export_ref(r));
  }
  static bool decode(wire_reader& r, tx::actor_ref& v) {
    std::uint64_t id = 0;
    if (!r.varint(id)) return false;
    if (id == 0) {
      v.reset();
      return true;
    }
    reference_context* context = current_references();
    if (context == nullptr || !r.allocate(1, proxy_cost)) return r.fail(wire_error::bad_value);
    v = context->import_ref(id);
    return v || r.fail(wire_error::bad_value);
  }
};

// ---- records (TACT_WIRE) ----

template <declared_record T>
struct codec<T> {
  static constexpr auto info = tact_wire_record(static_cast<const T*>(nullptr));
  static constexpr std::size_t least = std::apply(
      [](auto... m) {
        return (std::size_t{0} + ... +
                codec<std::remove_cvref_t<decltype(std::declval<T&>().*m)>>::least);
      },
      info.members);

  static void shape(std::string& s) {
    s += info.name;
    auto& open = shapes_in_progress();
    for (std::string_view n : open)
      if (n == info.name) return;  // nested in itself: its name says it
    open.push_back(info.name);
    struct done {  // popped however this returns
      std::vector<std::string_view>& open;
      ~done() { open.pop_back(); }
    } popped{open};
    s += '{';
    bool first = true;
    std::apply(
        [&](auto... m) {
          ((s += first ? "" : ",", first = false,
            codec<std::remove_cvref_t<decltype(std::declval<T&>().*m)>>::shape(s)),
           ...);
        },
        info.members);
    s += '}';
  }
  static void encode(wire_writer& w, const T& v) {
    std::apply([&](auto... m) { (encode_member(w, v.*m), ...); }, info.members);
  }
  static bool decode(wire_reader& r, T& v) {
    if (!r.enter()) return false;
    std::apply([&](auto... m) { static_cast<void>((true && ... && decode_member(r, v.*m))); },
               info.members);
    r.leave();
    return r.ok();
  }

 private:
  template <class M>
  static void encode_member(wire_writer& w, const M& m) {
    codec<M>::encode(w, m);
  }
  template <class M>
  static bool decode_member(wire_reader& r, M& m) {
    return codec<M>::decode(r, m);
  }
};

}  // namespace tact::net::detail
