#include "integration/net/link.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <zmq.hpp>

#include "integration/net/packing.hpp"

namespace tact::net::detail {

namespace {

// ZeroMQ asks the handler bound here (one per context) about every CURVE
// client before it reads a byte of its traffic (ZAP, RFC 27).
constexpr const char* zap_endpoint = "inproc://zeromq.zap.01";
constexpr const char* monitor_endpoint = "inproc://tact-link-monitor";
constexpr int handshake_failures = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                   ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                   ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
// Messages read from the ROUTER in a row before the link looks at its
// other sockets again: a flood from one peer does not hold off the ZAP
// handler.
constexpr int messages_per_turn = 256;
// Bytes of frames packed into one message, at most (unless one frame is
// larger: it goes alone). Large enough that encryption's cost per message
// is spread thin, small enough that one message does not hold the
// connection long.
constexpr std::size_t packed_bytes = std::size_t{64} << 10;
// Messages a peer's connection takes while the peer does not read (its
// DEALER's high-water mark): past them, frames wait in the link's own
// queue, which is bounded in bytes. Few, since each may pack
// packed_bytes: enough to keep a connection busy, and while it is full, frames
// gather in the link's queue and leave packed.
constexpr int connection_messages = 32;
// After a peer refused our connection (or failed our check of its key),
// ZeroMQ does not connect again: the link does, after this pause.
constexpr std::chrono::milliseconds reconnect_after_refusal{1'000};

}  // namespace

// The link thread's own state: the sockets, and what it knows of each
// peer's connections. Only that thread touches it once the link runs.
struct secure_link::io {
  using clock = std::chrono::steady_clock;

  explicit io(secure_link& l)
      : link{l},
        dealers(l.config_.peers.size()),
        watches(l.config_.peers.size()),
        generation(l.config_.peers.size(), 0),
        up(l.config_.peers.size(), false),
        blocked(l.config_.peers.size(), false),
        strikes(l.config_.peers.size(), 0),
        banned_until(l.config_.peers.size(), clock::time_point::min()),
        connect_at(l.config_.peers.size(), clock::time_point::min()),
        moved(l.config_.peers.size(), false),
        newest(l.config_.peers.size(), 0),
        last_frame(l.config_.peers.size(), clock::now()),
        resting(l.config_.peers.size(), false),
        reopened_at(l.config_.peers.size(), clock::time_point::min()) {
    for (const peer& p : l.config_.peers) addresses.push_back(p.address);
  }

  secure_link& link;
  zmq::context_t context{1};
  zmq::socket_t zap{context, zmq::socket_type::rep};
  zmq::socket_t router{context, zmq::socket_type::router};
  zmq::socket_t monitor{context, zmq::socket_type::pair};
  // Per peer, as in config_.peers:
  std::vector<std::unique_ptr<zmq::socket_t>> dealers;  // made at its first frame
  std::vector<std::unique_ptr<zmq::socket_t>> watches;  // per dealer: its connection's events
  std::vector<std::uint32_t> generation;                // dealers made so far: names each watch
  std::vector<bool> up;                                 // connected
  std::vector<bool> blocked;                            // its connection is full: polled for room
  std::vector<std::uint32_t> strikes;                   // malformed frames since its last cut-off
  std::vector<clock::time_point> banned_until;          // cut off: its key refused until then
  std::vector<clock::time_point> connect_at;  // no dealer to it until then (min: none due)
  std::vector<std::string> addresses;         // where it listens: listed, or learned
  std::vector<bool> moved;                    // learned anew: connect there
  std::vector<std::uint64_t> newest;          // the routing id of its newest connection to us
  std::vector<clock::time_point> last_frame;  // when its connection last carried one, either way
  // Its connection was retired (idle_after): not reported lost, and made
  // again, unreported, by its next frame.
  std::vector<bool> resting;
  std::vector<clock::time_point> reopened_at;  // when a resting one's new connection was begun
  std::vector<std::byte> packed;              // a message being packed

  const link_config& config() const noexcept { return link.config_; }

  bool banned(std::size_t index, clock::time_point now) const noexcept {
    return banned_until[index] > now;
  }
  // Frames wait, and no dealer is made, while a connection is due later.
  bool held(std::size_t index, clock::time_point now) const noexcept {
    return connect_at[index] > now;
  }

  std::size_t index_of_key(std::string_view key) const noexcept {
    std::size_t i = 0;
    while (i < config().peers.size() && config().peers[i].public_key != key) ++i;
    return i;
  }

  // Answers one ZAP request: 200 and the peer's name as User-Id for a
  // CURVE client whose key is listed and not cut off, 400 for anyone else.
  void answer_zap() {
    std::array<zmq::message_t, 7> request;
    std::size_t parts = 0;
    bool more = true;
    while (more) {
      zmq::message_t part;
      if (!zap.recv(part)) return;
      more = part.more();
      if (parts < request.size()) request[parts] = std::move(part);
      ++parts;
    }
    std::string status = "400", text = "not on the allow-list", user;
    if (parts == 7 && request[5].to_string_view() == "CURVE" && request[6].size() == 32) {
      std::array<char, 41> key{};
      zmq_z85_encode(key.data(), static_cast<const std::uint8_t*>(request[6].data()), 32);
      const std::size_t index = index_of_key(key.data());
      if (index < config().peers.size() && banned(index, clock::now())) {
        text = "cut off";
      } else if (index < config().peers.size()) {
        status = "200";
        text = "OK";
        user = config().peers[index].name;
      }
    }
    (status == "200" ? link.accepted_ : link.refused_).fetch_add(1, std::memory_order_relaxed);
    zap.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
    zap.send(std::move(request[1]), zmq::send_flags::sndmore);
    zap.send(zmq::buffer(status), zmq::send_flags::sndmore);
    zap.send(zmq::buffer(text), zmq::send_flags::sndmore);
    zap.send(zmq::buffer(user), zmq::send_flags::sndmore);
    zap.send(zmq::message_t{}, zmq::send_flags::none);
  }

  void read_monitor() {
    zmq::message_t event, address;
    if (!monitor.recv(event, zmq::recv_flags::dontwait)) return;
    if (event.more()) static_cast<void>(monitor.recv(address));
    link.handshakes_failed_.fetch_add(1, std::memory_order_relaxed);
  }

  // An event of the connection to peer `index`: [event id, value][address].
  void read_watch(std::size_t index) {
    zmq::message_t event, address;
    if (!watches[index]->recv(event, zmq::recv_flags::dontwait)) return;
    if (event.more()) static_cast<void>(watches[index]->recv(address));
    std::uint16_t id = 0;
    if (event.size() >= sizeof id) std::memcpy(&id, event.data(), sizeof id);
    if (id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
      if (up[index]) return;
      up[index] = true;
      last_frame[index] = clock::now();
      // A retired connection made again: its peer was never told otherwise.
      if (resting[index]) {
        resting[index] = false;
        return;
      }
      if (link.on_peer_) link.on_peer_(config().peers[index].name, peer_event::connected);
      return;
    }
    if (id != ZMQ_EVENT_DISCONNECTED) {
      // A handshake failed: the peer refused our key (not on its list, or
      // cut off), or holds another key than we pin. ZeroMQ never
      // connects again after that, so the link makes a new connection,
      // after a pause.
      drop_dealer(index);
      connect_at[index] = clock::now() + reconnect_after_refusal;
    }
    lose(index);
  }

  void drop_dealer(std::size_t index) noexcept {
    watches[index].reset();
    dealers[index].reset();
  }

  // The connection to peer `index` is gone: it is reported lost (once),
  // and what was queued for it is dropped, so that nothing sent before
  // the loss follows the next connection's first frame.
  void lose(std::size_t index) {
    if (up[index] || resting[index]) {
      up[index] = false;
      resting[index] = false;
      // First: once the receiver knows, it sends nothing more for the old
      // connection, so the queue emptied below stays empty of it.
      if (link.on_peer_) link.on_peer_(config().peers[index].name, peer_event::lost);
    }
    std::lock_guard guard{link.lock_};
    outbox& box = link.outboxes_[index];
    link.dropped_at_loss_.fetch_add(box.frames.size(), std::memory_order_relaxed);
    box.frames.clear();
    box.bytes = 0;
    blocked[index] = false;
  }

  // A malformed frame or message from peer `index`, read from socket
  // `fd`: counted, and at the limit the peer is cut off.
  void strike(std::size_t index, int fd) {
    link.malformed_.fetch_add(1, std::memory_order_relaxed);
    if (++strikes[index] < config().malformed_limit) return;
    strikes[index] = 0;
    link.cut_offs_.fetch_add(1, std::memory_order_relaxed);
    banned_until[index] = clock::now() + config().cut_off_for;
    // Its connection to us: ZeroMQ cannot close one connection of a
    // ROUTER, but it sees the socket shut under it and drops that
    // connection; a new one is refused by the ZAP handler meanwhile.
    if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
    // Ours to it, until the ban ends.
    drop_dealer(index);
    if (!addresses[index].empty()) connect_at[index] = banned_until[index];
    lose(index);
  }

  // A message is [routing id][frames]. Its sender is the User-Id its ZAP
  // answer gave, or with insecure_plaintext the key its routing id claims.
  // Anything else is dropped.
  void read_frames() {
    const auto now = clock::now();
    for (int i = 0; i < messages_per_turn; ++i) {
      zmq::message_t id, message;
      if (!router.recv(id, zmq::recv_flags::dontwait)) return;
      if (!id.more()) continue;
      static_cast<void>(router.recv(message));
      bool extra = message.more();
      while (extra) {
        zmq::message_t rest;
        static_cast<void>(router.recv(rest));
        extra = rest.more();
      }
      if (message.more()) continue;
      std::size_t index = config().peers.size();
      if (config().insecure_plaintext) {
        index = index_of_key(id.to_string_view());
      } else {
        try {
          const std::string_view user = message.gets("User-Id");
          index = 0;
          while (index < config().peers.size() && config().peers[index].name != user) ++index;
        } catch (const zmq::error_t&) {
          // not through our ZAP handler: cannot be
        }
      }
      if (index == config().peers.size() || banned(index, now)) continue;
      last_frame[index] = now;
      if (!newest_connection(index, id)) {
        link.stale_.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      int fd = -1;
      try {
        fd = message.get(ZMQ_SRCFD);
      } catch (const zmq::error_t&) {
      }
      // A message that is not whole frames counts against its sender, as
      // does each frame the receiver refuses.
      const bool whole =
          unpack_frames({static_cast<const std::byte*>(message.data()), message.size()},
                        [&](std::span<const std::byte> frame) {
                          if (banned(index, now)) return;  // cut off by an earlier frame
                          link.frames_in_.fetch_add(1, std::memory_order_relaxed);
                          if (!link.on_frame_(config().peers[index].name, frame)) strike(index, fd);
                        });
      if (!whole && !banned(index, now)) strike(index, fd);
    }
  }

  // Whether a message from peer `index` came on its newest connection.
  // A peer whose connection was lost connects anew; what it sent on the
  // old one may still come after what it sends on the new one (a
  // connection cut by a partition delivers its last bytes when the
  // network heals). Those are dropped, so that a peer's frames arrive in
  // the order sent, with gaps, never after newer ones. ZeroMQ gives each
  // connection of a ROUTER a routing id from a counter (a zero byte, then
  // 32 bits big-endian), so a newer connection has a larger id. With
  // insecure_plaintext the id is the peer's claimed key, and the ROUTER
  // hands it over to the newest connection, closing the old one.
  bool newest_connection(std::size_t index, const zmq::message_t& id) {
    if (config().insecure_plaintext) return true;
    std::uint64_t number = 0;
    for (std::size_t i = 0; i < id.size() && i < 8; ++i)
      number = (number << 8) | static_cast<const std::uint8_t*>(id.data())[i];
    if (number < newest[index]) return false;
    newest[index] = number;
    return true;
  }

  zmq::socket_t& dealer_for(std::size_t index) {
    std::unique_ptr<zmq::socket_t>& d = dealers[index];
    if (d) return *d;
    d = std::make_unique<zmq::socket_t>(context, zmq::socket_type::dealer);
    d->set(zmq::sockopt::linger, 0);
    d->set(zmq::sockopt::sndhwm, connection_messages);
    if (config().insecure_plaintext) {
      d->set(zmq::sockopt::routing_id, config().keys.public_key);
    } else {
      d->set(zmq::sockopt::curve_serverkey, config().peers[index].public_key);
      d->set(zmq::sockopt::curve_publickey, config().keys.public_key);
      d->set(zmq::sockopt::curve_secretkey, config().keys.secret_key);
    }
    d->set(zmq::sockopt::heartbeat_ivl, static_cast<int>(config().heartbeat.count()));
    d->set(zmq::sockopt::heartbeat_timeout, static_cast<int>(config().heartbeat_timeout.count()));
    d->set(zmq::sockopt::heartbeat_ttl, static_cast<int>(config().heartbeat_timeout.count()));
    // Watched before it connects: no event is missed. A name of its own
    // per dealer: a closed dealer's watch may not have let go of its
    // name yet.
    const std::string watch = "inproc://tact-link-peer-" + std::to_string(index) + '.' +
                              std::to_string(generation[index]++);
    if (zmq_socket_monitor(
            d->handle(), watch.c_str(),
            ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED | handshake_failures) != 0)
      throw zmq::error_t{};
    watches[index] = std::make_unique<zmq::socket_t>(context, zmq::socket_type::pair);
    watches[index]->connect(watch);
    d->connect(addresses[index]);
    if (resting[index]) reopened_at[index] = clock::now();
    return *d;
  }

  // Hands each peer's queued frames to its connection until the queue is
  // empty or the connection is full (then `blocked`, and polled for
  // room). A peer held (cut off, or refused us) keeps its queue until its
  // connection is due. Returns false once stopping.
  //
  // Invariant, under lock_: after a drain, each peer's queue is empty, or
  // its peer is blocked, or held (and drained when its connection is
  // due). So a sender that finds a queue non-empty need not wake the link
  // (send() writes the eventfd only into an empty queue): either the wake
  // of the frame that found it empty is still to be read, or the link
  // polls that connection for room, or waits until it is due, and drains
  // again.
  bool drain_outboxes() {
    const auto now = clock::now();
    std::lock_guard guard{link.lock_};
    if (link.stopping_) return false;
    for (std::size_t index = 0; index < link.outboxes_.size(); ++index) {
      outbox& box = link.outboxes_[index];
      blocked[index] = false;
      if (held(index, now)) continue;
      if (std::exchange(box.wanted, false) && !dealers[index]) dealer_for(index);
      while (!box.frames.empty()) {
        // The frames at the front that fit in one message (one at least),
        // each after its length.
        packed.clear();
        std::size_t count = 0;
        for (const std::vector<std::byte>& f : box.frames) {
          if (count != 0 && packed.size() + length_room + f.size() > packed_bytes) break;
          pack_frame(packed, f);
          ++count;
        }
        zmq::message_t message{packed.data(), packed.size()};
        // At the high-water mark, nothing is taken: the frames stay queued.
        if (!dealer_for(index).send(message, zmq::send_flags::dontwait)) {
          blocked[index] = true;
          break;
        }
        link.frames_out_.fetch_add(count, std::memory_order_relaxed);
        link.messages_out_.fetch_add(1, std::memory_order_relaxed);
        last_frame[index] = now;
        for (std::size_t i = 0; i < count; ++i) {
          box.bytes -= box.frames.front().size();
          box.frames.pop_front();
        }
      }
    }
    return true;
  }

  // Peers whose address was learned anew (see secure_link::learn):
  // the connection to the old one, if any, is closed, and one to the new
  // one made. Returns whether any was.
  bool connect_moved() {
    bool any = false;
    for (std::size_t index = 0; index < moved.size(); ++index) {
      if (!moved[index]) continue;
      moved[index] = false;
      any = true;
      if (dealers[index]) {
        drop_dealer(index);
        lose(index);
      }
      if (!held(index, clock::now())) dealer_for(index);
    }
    return any;
  }

  // Peers whose connection is due: connected to again, their queues
  // drained. Returns how long until the next is due (-1: none is held).
  std::chrono::milliseconds connect_due(bool& drain) {
    const auto now = clock::now();
    auto next = clock::time_point::max();
    for (std::size_t index = 0; index < connect_at.size(); ++index) {
      if (connect_at[index] == clock::time_point::min()) continue;
      if (connect_at[index] > now) {
        next = std::min(next, connect_at[index]);
        continue;
      }
      connect_at[index] = clock::time_point::min();
      dealer_for(index);
      drain = true;
    }
    if (next == clock::time_point::max()) return std::chrono::milliseconds{-1};
    return std::chrono::ceil<std::chrono::milliseconds>(next - now);
  }

  // Connections idle for idle_after with nothing queued are offered for
  // retirement (secure_link::retirer); a retired one whose new connection
  // is not made within heartbeat_timeout is lost after all. Returns how
  // long until the next of either is due (-1: none).
  //
  // Nothing is lost by retiring: a connection idle that long with its
  // heartbeats answered has delivered everything handed to it (a PING
  // travels behind the frames sent before it, so its PONG means they were
  // read), and frames queued after the check stay in the link's queue
  // for the next connection, which the peer's ROUTER numbers after the
  // old one (see newest_connection).
  std::chrono::milliseconds tend_idle() {
    const std::chrono::milliseconds idle = config().idle_after;
    if (idle.count() <= 0 || !link.may_retire_) return std::chrono::milliseconds{-1};
    const auto now = clock::now();
    auto next = clock::time_point::max();
    for (std::size_t index = 0; index < dealers.size(); ++index) {
      if (resting[index]) {
        if (!dealers[index]) continue;  // nothing sent since it was retired
        const auto due = reopened_at[index] + config().heartbeat_timeout;
        if (due <= now)
          lose(index);  // its dealer stays, and ZeroMQ goes on connecting
        else
          next = std::min(next, due);
        continue;
      }
      if (!up[index] || blocked[index]) continue;
      if (const auto due = last_frame[index] + idle; due > now) {
        next = std::min(next, due);
        continue;
      }
      bool queued = false;
      {
        std::lock_guard guard{link.lock_};
        queued = !link.outboxes_[index].frames.empty();
      }
      if (queued || !link.may_retire_(config().peers[index].name)) {
        last_frame[index] = now;  // asked again after another idle_after
        next = std::min(next, now + idle);
        continue;
      }
      drop_dealer(index);
      up[index] = false;
      resting[index] = true;
      link.retired_.fetch_add(1, std::memory_order_relaxed);
    }
    if (next == clock::time_point::max()) return std::chrono::milliseconds{-1};
    return std::chrono::ceil<std::chrono::milliseconds>(next - now);
  }

  void run() {
    // The fixed sockets and the eventfd, then the watch of each peer's
    // connection, then a DEALER for each peer whose connection is full,
    // polled for room.
    constexpr std::size_t fixed = 4;
    std::vector<std::size_t> watched;  // the peer of each watch polled
    std::vector<zmq::pollitem_t> items{{router.handle(), 0, ZMQ_POLLIN, 0},
                                       {zap.handle(), 0, ZMQ_POLLIN, 0},
                                       {monitor.handle(), 0, ZMQ_POLLIN, 0},
                                       {nullptr, link.wake_fd_, ZMQ_POLLIN, 0}};
    bool drain = false;
    for (;;) {
      std::chrono::milliseconds wait = connect_due(drain);
      if (drain && !drain_outboxes()) return;
      drain = false;
      // After the drain, which may open a retired connection again.
      if (const std::chrono::milliseconds idle = tend_idle(); idle.count() >= 0)
        wait = wait.count() < 0 ? idle : std::min(wait, idle);
      items.resize(fixed);
      watched.clear();
      for (std::size_t index = 0; index < watches.size(); ++index)
        if (watches[index]) {
          items.push_back({watches[index]->handle(), 0, ZMQ_POLLIN, 0});
          watched.push_back(index);
        }
      const std::size_t rooms = items.size();
      for (std::size_t index = 0; index < blocked.size(); ++index)
        if (blocked[index]) items.push_back({dealers[index]->handle(), 0, ZMQ_POLLOUT, 0});
      zmq::poll(items.data(), items.size(), wait);
      if (items[1].revents & ZMQ_POLLIN) answer_zap();
      if (items[2].revents & ZMQ_POLLIN) read_monitor();
      for (std::size_t i = fixed; i < rooms; ++i)
        if ((items[i].revents & ZMQ_POLLIN) && watches[watched[i - fixed]])
          read_watch(watched[i - fixed]);
      if (items[0].revents & ZMQ_POLLIN) read_frames();
      drain = connect_moved() || drain;
      for (std::size_t i = rooms; i < items.size(); ++i)
        drain = drain || (items[i].revents & ZMQ_POLLOUT) != 0;
      if (items[3].revents & ZMQ_POLLIN) {
        std::uint64_t ignored = 0;
        [[maybe_unused]] const auto read = ::read(link.wake_fd_, &ignored, sizeof ignored);
        drain = true;
      }
    }
  }

  // Closed here, on the thread that used them.
  void close() noexcept {
    watches.clear();
    dealers.clear();
    router.close();
    zap.close();
    monitor.close();
  }
};

secure_link::secure_link(link_config config, receiver on_frame, watcher on_peer,
                         retirer may_retire)
    : config_{std::move(config)},
      on_frame_{std::move(on_frame)},
      on_peer_{std::move(on_peer)},
      may_retire_{std::move(may_retire)} {
  outboxes_.resize(config_.peers.size());
  for (std::size_t i = 0; i < config_.peers.size(); ++i)
    outboxes_[i].known = !config_.peers[i].address.empty();
  io_ = std::make_unique<io>(*this);
  zmq::socket_t& r = io_->router;
  r.set(zmq::sockopt::linger, 0);
  if (config_.insecure_plaintext) {
    // A peer that restarts claims its key again: its new connection
    // takes over the routing id from the old one.
    r.set(zmq::sockopt::router_handover, 1);
  } else {
    // The handler first: a client that connects before it is bound would
    // be let in unchecked.
    io_->zap.bind(zap_endpoint);
    r.set(zmq::sockopt::curve_server, 1);
    r.set(zmq::sockopt::curve_secretkey, config_.keys.secret_key);
    r.set(zmq::sockopt::zap_domain, "tact");
  }
  // Heartbeats on connections from peers too: one that went silent
  // (a partition, a stopped process) is closed here as well, instead of
  // holding its last frames until it speaks again.
  r.set(zmq::sockopt::heartbeat_ivl, static_cast<int>(config_.heartbeat.count()));
  r.set(zmq::sockopt::heartbeat_timeout, static_cast<int>(config_.heartbeat_timeout.count()));
  r.set(zmq::sockopt::heartbeat_ttl, static_cast<int>(config_.heartbeat_timeout.count()));
  r.set(zmq::sockopt::maxmsgsize,
        static_cast<std::int64_t>(std::max(config_.max_frame, packed_bytes) + length_room));
  if (zmq_socket_monitor(r.handle(), monitor_endpoint, handshake_failures) != 0)
    throw std::runtime_error{std::string{"tact: cannot monitor the link: "} +
                             zmq_strerror(zmq_errno())};
  io_->monitor.connect(monitor_endpoint);
  try {
    r.bind(config_.listen);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error{"tact: cannot listen on " + config_.listen + ": " + e.what()};
  }
  endpoint_ = r.get(zmq::sockopt::last_endpoint);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::runtime_error{"tact: no eventfd for the link"};
}

void secure_link::start() {
  // From here the sockets are the link thread's alone.
  thread_ = std::thread{[this] { run(); }};
}

secure_link::~secure_link() {
  stop();
  ::close(wake_fd_);
}

void secure_link::stop() noexcept {
  {
    std::lock_guard guard{lock_};
    if (stopping_) return;
    stopping_ = true;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

send_result secure_link::send(std::string_view peer, std::vector<std::byte> frame) {
  std::size_t index = 0;
  while (index < config_.peers.size() && config_.peers[index].name != peer) ++index;
  if (index == config_.peers.size()) return send_result::unknown_peer;
  if (frame.size() > config_.max_frame) return send_result::too_large;
  bool first = false;
  {
    std::lock_guard guard{lock_};
    outbox& box = outboxes_[index];
    if (!box.known) return send_result::unknown_peer;
    if (frame.size() > config_.max_queued - std::min(box.bytes, config_.max_queued)) {
      overflows_.fetch_add(1, std::memory_order_relaxed);
      return send_result::overflow;
    }
    first = box.frames.empty();
    box.bytes += frame.size();
    box.frames.push_back(std::move(frame));
  }
  // Only a frame that found its queue empty needs the link's attention: the
  // link is sending the others, or waiting for room for them.
  if (first) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_fd_, &one, sizeof one);
  }
  return send_result::queued;
}

void secure_link::open(std::string_view peer) {
  std::size_t index = 0;
  while (index < config_.peers.size() && config_.peers[index].name != peer) ++index;
  if (index == config_.peers.size()) return;
  {
    std::lock_guard guard{lock_};
    outbox& box = outboxes_[index];
    if (!box.known || box.wanted) return;
    box.wanted = true;
  }
  const std::uint64_t one = 1;
  [[maybe_unused]] const auto written = ::write(wake_fd_, &one, sizeof one);
}

// A ZeroMQ TCP endpoint to connect to: tcp://HOST:PORT, with a port, and
// a host that is not a wildcard.
bool secure_link::connectable(std::string_view address) {
  constexpr std::string_view scheme = "tcp://";
  if (!address.starts_with(scheme) || address.size() > 256) return false;
  const std::string_view rest = address.substr(scheme.size());
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) return false;
  const std::string_view host = rest.substr(0, colon), port = rest.substr(colon + 1);
  if (host == "*" || host == "0.0.0.0" || host == "[::]") return false;
  return std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         std::all_of(host.begin(), host.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-' || c == ':' || c == '[' || c == ']';
         });
}

bool secure_link::learn(std::string_view peer, std::string_view address) {
  std::size_t index = 0;
  while (index < config_.peers.size() && config_.peers[index].name != peer) ++index;
  if (index == config_.peers.size() || !config_.peers[index].address.empty()) return false;
  if (!connectable(address)) return false;
  if (io_->addresses[index] == address) return true;
  io_->addresses[index] = address;
  io_->moved[index] = true;
  std::lock_guard guard{lock_};
  outboxes_[index].known = true;
  return true;
}

link_stats secure_link::stats() const noexcept {
  return {.accepted = accepted_.load(std::memory_order_relaxed),
          .refused = refused_.load(std::memory_order_relaxed),
          .handshakes_failed = handshakes_failed_.load(std::memory_order_relaxed),
          .frames_in = frames_in_.load(std::memory_order_relaxed),
          .frames_out = frames_out_.load(std::memory_order_relaxed),
          .messages_out = messages_out_.load(std::memory_order_relaxed),
          .overflows = overflows_.load(std::memory_order_relaxed),
          .malformed = malformed_.load(std::memory_order_relaxed),
          .cut_offs = cut_offs_.load(std::memory_order_relaxed),
          .dropped_at_loss = dropped_at_loss_.load(std::memory_order_relaxed),
          .stale = stale_.load(std::memory_order_relaxed),
          .retired = retired_.load(std::memory_order_relaxed)};
}

void secure_link::run() noexcept {
  try {
    io_->run();
  } catch (const zmq::error_t&) {
    // The context is going away: nothing left to serve.
  }
  io_->close();
}

}  // namespace tact::net::detail
