#include "integration/net/link.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <sys/eventfd.h>
#include <unistd.h>

#include <zmq.hpp>

#include <tact/net/detail/wire_io.hpp>

namespace tact::net::detail {

namespace {

// ZeroMQ asks the handler bound here (one per context) about every CURVE
// client before it reads a byte of its traffic (ZAP, RFC 27).
constexpr const char* zap_endpoint = "inproc://zeromq.zap.01";
constexpr const char* monitor_endpoint = "inproc://tact-link-monitor";
constexpr int handshake_failures =
    ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
// Messages read from the ROUTER in a row before the link looks at its
// other sockets again: a flood from one peer does not hold off the ZAP
// handler.
constexpr int messages_per_turn = 256;
// Bytes of frames packed into one message, at most (unless one frame is
// larger: it goes alone). Large enough that encryption's cost per message
// is spread thin, small enough that one message does not hold the
// connection long.
constexpr std::size_t packed_bytes = std::size_t{64} << 10;
// Room for a frame's length before it (a varint of 64 bits).
constexpr std::size_t length_room = 10;
// Messages a peer's connection takes while the peer does not read (its
// DEALER's high-water mark): past them, frames wait in the link's own
// queue, which is bounded in bytes. Few, since each may pack
// packed_bytes: enough to keep a connection busy, and while it is full, frames
// gather in the link's queue and leave packed.
constexpr int connection_messages = 32;

}  // namespace

struct secure_link::io {
  zmq::context_t context{1};
  zmq::socket_t zap{context, zmq::socket_type::rep};
  zmq::socket_t router{context, zmq::socket_type::router};
  zmq::socket_t monitor{context, zmq::socket_type::pair};
  std::vector<std::unique_ptr<zmq::socket_t>> dealers;  // per peer, made at its first frame
  std::vector<std::unique_ptr<zmq::socket_t>> watches;  // per dealer: its connection's events
  std::vector<bool> up;                                 // per peer: connected
};

secure_link::secure_link(link_config config, receiver on_frame, watcher on_peer)
    : config_{std::move(config)},
      on_frame_{std::move(on_frame)},
      on_peer_{std::move(on_peer)},
      io_{std::make_unique<io>()} {
  io_->dealers.resize(config_.peers.size());
  io_->watches.resize(config_.peers.size());
  io_->up.resize(config_.peers.size(), false);
  outboxes_.resize(config_.peers.size());
  // The handler first: a client that connects before it is bound would be
  // let in unchecked.
  io_->zap.bind(zap_endpoint);
  zmq::socket_t& r = io_->router;
  r.set(zmq::sockopt::linger, 0);
  r.set(zmq::sockopt::curve_server, 1);
  r.set(zmq::sockopt::curve_secretkey, config_.keys.secret_key);
  r.set(zmq::sockopt::zap_domain, "tact");
  r.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(std::max(config_.max_frame, packed_bytes) + length_room));
  if (zmq_socket_monitor(r.handle(), monitor_endpoint, handshake_failures) != 0)
    throw std::runtime_error{std::string{"tact: cannot monitor the link: "} + zmq_strerror(zmq_errno())};
  io_->monitor.connect(monitor_endpoint);
  try {
    r.bind(config_.listen);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error{"tact: cannot listen on " + config_.listen + ": " + e.what()};
  }
  endpoint_ = r.get(zmq::sockopt::last_endpoint);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw std::runtime_error{"tact: no eventfd for the link"};
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
  thread_.join();
}

send_result secure_link::send(std::string_view peer, std::vector<std::byte> frame) {
  std::size_t index = 0;
  while (index < config_.peers.size() && config_.peers[index].name != peer) ++index;
  if (index == config_.peers.size() || config_.peers[index].address.empty())
    return send_result::unknown_peer;
  if (frame.size() > config_.max_frame) return send_result::too_large;
  bool first = false;
  {
    std::lock_guard guard{lock_};
    outbox& box = outboxes_[index];
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

link_stats secure_link::stats() const noexcept {
  return {.accepted = accepted_.load(std::memory_order_relaxed),
          .refused = refused_.load(std::memory_order_relaxed),
          .handshakes_failed = handshakes_failed_.load(std::memory_order_relaxed),
          .frames_in = frames_in_.load(std::memory_order_relaxed),
          .frames_out = frames_out_.load(std::memory_order_relaxed),
          .messages_out = messages_out_.load(std::memory_order_relaxed),
          .overflows = overflows_.load(std::memory_order_relaxed),
          .malformed = malformed_.load(std::memory_order_relaxed)};
}

void secure_link::run() noexcept {
  io& s = *io_;
  // Answers one ZAP request: 200 and the peer's name as User-Id for a
  // CURVE client whose key is listed, 400 for anyone else.
  const auto answer_zap = [&] {
    std::array<zmq::message_t, 7> request;
    std::size_t parts = 0;
    bool more = true;
    while (more) {
      zmq::message_t part;
      if (!s.zap.recv(part)) return;
      more = part.more();
      if (parts < request.size()) request[parts] = std::move(part);
      ++parts;
    }
    std::string status = "400", text = "not on the allow-list", user;
    if (parts == 7 && request[5].to_string_view() == "CURVE" && request[6].size() == 32) {
      std::array<char, 41> key{};
      zmq_z85_encode(key.data(), static_cast<const std::uint8_t*>(request[6].data()), 32);
      for (const peer& p : config_.peers)
        if (p.public_key == key.data()) {
          status = "200";
          text = "OK";
          user = p.name;
        }
    }
    (status == "200" ? accepted_ : refused_).fetch_add(1, std::memory_order_relaxed);
    s.zap.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
    s.zap.send(std::move(request[1]), zmq::send_flags::sndmore);
    s.zap.send(zmq::buffer(status), zmq::send_flags::sndmore);
    s.zap.send(zmq::buffer(text), zmq::send_flags::sndmore);
    s.zap.send(zmq::buffer(user), zmq::send_flags::sndmore);
    s.zap.send(zmq::message_t{}, zmq::send_flags::none);
  };
  const auto read_monitor = [&] {
    zmq::message_t event, address;
    if (!s.monitor.recv(event, zmq::recv_flags::dontwait)) return;
    if (event.more()) static_cast<void>(s.monitor.recv(address));
    handshakes_failed_.fetch_add(1, std::memory_order_relaxed);
  };
  // An event of the connection to peer `index`: [event id, value][address].
  const auto read_watch = [&](std::size_t index) {
    zmq::message_t event, address;
    if (!s.watches[index]->recv(event, zmq::recv_flags::dontwait)) return;
    if (event.more()) static_cast<void>(s.watches[index]->recv(address));
    std::uint16_t id = 0;
    if (event.size() >= sizeof id) std::memcpy(&id, event.data(), sizeof id);
    // Watched for two events only: a handshake that succeeded, or a
    // disconnection (closed, or silent past the heartbeat timeout).
    const bool connected = id == ZMQ_EVENT_HANDSHAKE_SUCCEEDED;
    if (connected == s.up[index]) return;
    s.up[index] = connected;
    if (on_peer_) on_peer_(config_.peers[index].name, connected ? peer_event::connected : peer_event::lost);
  };
  // A message is [routing id][frames]; its sender is the User-Id its ZAP
  // answer gave. Anything else from an authenticated peer is dropped.
  const auto read_frames = [&] {
    for (int i = 0; i < messages_per_turn; ++i) {
      zmq::message_t id, message;
      if (!s.router.recv(id, zmq::recv_flags::dontwait)) return;
      if (!id.more()) continue;
      static_cast<void>(s.router.recv(message));
      bool extra = message.more();
      while (extra) {
        zmq::message_t rest;
        static_cast<void>(s.router.recv(rest));
        extra = rest.more();
      }
      if (message.more()) continue;
      const char* user = nullptr;
      try {
        user = message.gets("User-Id");
      } catch (const zmq::error_t&) {
        continue;  // not through our ZAP handler: cannot be
      }
      // Each frame after its length; lengths are checked against the
      // bytes left, and a message that is not whole frames stops there.
      wire_reader in{{static_cast<const std::byte*>(message.data()), message.size()}, 0, 0};
      while (in.left() != 0) {
        std::uint64_t length = 0;
        std::span<const std::byte> frame;
        if (!in.count(length, 1) || !in.view(frame, static_cast<std::size_t>(length))) {
          malformed_.fetch_add(1, std::memory_order_relaxed);
          break;
        }
        frames_in_.fetch_add(1, std::memory_order_relaxed);
        on_frame_(user, frame);
      }
    }
  };
  const auto dealer_for = [&](std::size_t index) -> zmq::socket_t& {
    std::unique_ptr<zmq::socket_t>& d = s.dealers[index];
    if (!d) {
      d = std::make_unique<zmq::socket_t>(s.context, zmq::socket_type::dealer);
      d->set(zmq::sockopt::linger, 0);
      d->set(zmq::sockopt::sndhwm, connection_messages);
      d->set(zmq::sockopt::curve_serverkey, config_.peers[index].public_key);
      d->set(zmq::sockopt::curve_publickey, config_.keys.public_key);
      d->set(zmq::sockopt::curve_secretkey, config_.keys.secret_key);
      d->set(zmq::sockopt::heartbeat_ivl, static_cast<int>(config_.heartbeat.count()));
      d->set(zmq::sockopt::heartbeat_timeout, static_cast<int>(config_.heartbeat_timeout.count()));
      d->set(zmq::sockopt::heartbeat_ttl, static_cast<int>(config_.heartbeat_timeout.count()));
      // Watched before it connects: no event is missed.
      const std::string watch = "inproc://tact-link-peer-" + std::to_string(index);
      if (zmq_socket_monitor(d->handle(), watch.c_str(),
                             ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED) != 0)
        throw zmq::error_t{};
      s.watches[index] = std::make_unique<zmq::socket_t>(s.context, zmq::socket_type::pair);
      s.watches[index]->connect(watch);
      d->connect(config_.peers[index].address);
    }
    return *d;
  };
  // Hands each peer's queued frames to its connection until the queue is
  // empty or the connection is full (then `blocked`, and polled for room).
  // Returns false once stopping.
  //
  // Invariant, under lock_: after a drain, each peer's queue is empty or
  // its peer is blocked. So a sender that finds a queue non-empty need not
  // wake the link (send() writes the eventfd only into an empty queue):
  // either the wake of the frame that found it empty is still to be
  // read, or the link polls that connection for room and drains again.
  std::vector<bool> blocked(config_.peers.size(), false);
  std::vector<std::byte> packed;
  const auto drain_outboxes = [&] {
    std::lock_guard guard{lock_};
    if (stopping_) return false;
    for (std::size_t index = 0; index < outboxes_.size(); ++index) {
      outbox& box = outboxes_[index];
      blocked[index] = false;
      while (!box.frames.empty()) {
        // The frames at the front that fit in one message (one at least),
        // each after its length.
        packed.clear();
        std::size_t count = 0;
        for (const std::vector<std::byte>& f : box.frames) {
          if (count != 0 && packed.size() + length_room + f.size() > packed_bytes) break;
          wire_writer out{packed};
          out.varint(f.size());
          out.raw(f.data(), f.size());
          ++count;
        }
        zmq::message_t message{packed.data(), packed.size()};
        // At the high-water mark, nothing is taken: the frames stay queued.
        if (!dealer_for(index).send(message, zmq::send_flags::dontwait)) {
          blocked[index] = true;
          break;
        }
        frames_out_.fetch_add(count, std::memory_order_relaxed);
        messages_out_.fetch_add(1, std::memory_order_relaxed);
        for (std::size_t i = 0; i < count; ++i) {
          box.bytes -= box.frames.front().size();
          box.frames.pop_front();
        }
      }
    }
    return true;
  };

  // The fixed sockets and the eventfd, then the watch of each peer's
  // connection, then a DEALER for each peer whose connection is full,
  // polled for room.
  constexpr std::size_t fixed = 4;
  std::vector<std::size_t> watched;  // the peer of each watch polled
  std::vector<zmq::pollitem_t> items{{s.router.handle(), 0, ZMQ_POLLIN, 0},
                                     {s.zap.handle(), 0, ZMQ_POLLIN, 0},
                                     {s.monitor.handle(), 0, ZMQ_POLLIN, 0},
                                     {nullptr, wake_fd_, ZMQ_POLLIN, 0}};
  try {
    for (;;) {
      items.resize(fixed);
      watched.clear();
      for (std::size_t index = 0; index < s.watches.size(); ++index)
        if (s.watches[index]) {
          items.push_back({s.watches[index]->handle(), 0, ZMQ_POLLIN, 0});
          watched.push_back(index);
        }
      const std::size_t rooms = items.size();
      for (std::size_t index = 0; index < blocked.size(); ++index)
        if (blocked[index]) items.push_back({s.dealers[index]->handle(), 0, ZMQ_POLLOUT, 0});
      zmq::poll(items.data(), items.size(), std::chrono::milliseconds{-1});
      if (items[1].revents & ZMQ_POLLIN) answer_zap();
      if (items[2].revents & ZMQ_POLLIN) read_monitor();
      for (std::size_t i = fixed; i < rooms; ++i)
        if (items[i].revents & ZMQ_POLLIN) read_watch(watched[i - fixed]);
      if (items[0].revents & ZMQ_POLLIN) read_frames();
      bool room = false;
      for (std::size_t i = rooms; i < items.size(); ++i) room = room || (items[i].revents & ZMQ_POLLOUT) != 0;
      if (items[3].revents & ZMQ_POLLIN) {
        std::uint64_t ignored = 0;
        [[maybe_unused]] const auto read = ::read(wake_fd_, &ignored, sizeof ignored);
        room = true;
      }
      if (room && !drain_outboxes()) break;
    }
  } catch (const zmq::error_t&) {
    // The context is going away: nothing left to serve.
  }
  // Closed here, on the thread that used them.
  s.dealers.clear();
  s.watches.clear();
  s.router.close();
  s.zap.close();
  s.monitor.close();
}

}  // namespace tact::net::detail
