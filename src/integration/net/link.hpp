#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <tact/export.hpp>
#include <tact/net/keys.hpp>

namespace tact::net::detail {

struct link_config {
  // Where to listen, a ZeroMQ TCP endpoint; port 0 or '*' picks a free one
  // (see secure_link::endpoint).
  std::string listen;
  key_pair keys;
  std::vector<peer> peers;
  // The largest frame: a larger one is refused at send
  // (send_result::too_large), and ZeroMQ closes a connection that sends
  // a message that could not carry one (ZMQ_MAXMSGSIZE), unread. Both
  // ends of a link must agree.
  std::size_t max_frame = std::size_t{4} << 20;
  // Bytes of frames queued for one peer and not yet taken by its
  // connection, at most: a send past it is refused (send_result::overflow).
  std::size_t max_queued = std::size_t{64} << 20;
  // Heartbeats on every connection, both ways (ZMTP PING and PONG): a
  // peer that answers none for `heartbeat_timeout` is taken for lost even
  // while its TCP connection stands (a stopped process, a wedged machine,
  // a partition), and its connection to us is closed likewise.
  std::chrono::milliseconds heartbeat{1'000};
  std::chrono::milliseconds heartbeat_timeout{5'000};
  // A listed peer that sends this many malformed frames (or messages not
  // made of whole frames) is cut off: its connection to us is closed, ours
  // to it too (it is reported lost), and its key is refused for
  // `cut_off_for`; then the link connects to it again.
  std::uint32_t malformed_limit = 8;
  std::chrono::milliseconds cut_off_for{60'000};
  // A connection that has carried no frame either way for this long, with
  // nothing queued, is offered for retirement (secure_link::retirer); 0:
  // never. A retired connection is opened again by the next frame for the
  // peer, and counts as lost if that takes `heartbeat_timeout`.
  std::chrono::milliseconds idle_after{20'000};
  // No encryption, no authentication: a peer is known by the public key it
  // claims, which anyone can claim. Both ends must agree. For measurements
  // and closed test networks only.
  bool insecure_plaintext = false;
};

// What happened to the connection to a peer (secure_link::watcher).
enum class peer_event : std::uint8_t {
  connected,  // the handshake succeeded: frames flow
  lost,       // the connection closed or went silent; the link connects again
};

enum class send_result : std::uint8_t {
  queued,        // it will leave in order, unless the connection is lost
  unknown_peer,  // not on the allow-list, or no address to connect to
  overflow,      // the peer's queue is full (link_config::max_queued): not sent
  too_large,     // larger than link_config::max_frame: not sent
};

// What a link has seen, for tests and statistics.
struct link_stats {
  std::uint64_t accepted = 0;           // CURVE clients whose key is on the allow-list
  std::uint64_t refused = 0;            // ... whose key is not, or is cut off: nothing read
  std::uint64_t handshakes_failed = 0;  // connections whose CURVE handshake failed
  std::uint64_t frames_in = 0;
  std::uint64_t frames_out = 0;    // taken by a peer's connection
  std::uint64_t messages_out = 0;  // ZeroMQ messages that carried them (see secure_link)
  std::uint64_t overflows = 0;     // sends refused at a full queue (never dropped unsaid)
  // Messages not made of whole frames, and frames the receiver refused.
  std::uint64_t malformed = 0;
  std::uint64_t cut_offs = 0;         // peers cut off for sending too many of them
  std::uint64_t dropped_at_loss = 0;  // frames queued for a connection when it was lost
  std::uint64_t stale = 0;            // messages that came on a peer's older connection: dropped
  std::uint64_t retired = 0;          // connections closed for being idle (see idle_after)
};

// Frames of bytes between this node and the peers of its allow-list, over
// ZeroMQ with CURVE on both sides: every frame encrypted and authenticated,
// with a short-term key per connection (forward secrecy) and nonces that
// must increase (a replayed frame kills its connection). Inbound, a ZAP
// handler lets in only clients whose public key is on the allow-list, and
// names them; outbound, each connection pins its peer's public key, so a
// server with another key gets nothing. So both sides check both keys.
//
// Frames travel packed: a ZeroMQ message carries one or more, each after
// its length (a varint), as many as wait for the peer, up to 64 KiB
// (a larger frame goes alone). CURVE encrypts and authenticates per
// message, about a microsecond each, so small frames sent faster than
// the connection takes them share that cost; a frame sent alone leaves
// at once, without waiting for company. A message from a listed peer
// that is not whole frames is dropped from the first broken one and
// counted (link_stats::malformed), as is a frame the receiver refuses; a
// peer that sends link_config::malformed_limit of them is cut off.
//
// One thread (the link's) owns every ZeroMQ socket: a ROUTER that receives
// from all peers, a DEALER per peer it sends to (one ordered pipe per
// direction), the ZAP handler and a monitor of the ROUTER's handshakes.
// Other threads hand it frames through a bounded queue per peer (locked)
// and an eventfd.
class TACT_API secure_link {
 public:
  // Called on the link's thread for each frame that arrives, with the name
  // its sender has on the allow-list; returns false if the frame is
  // malformed, which counts against the peer (see link_config::
  // malformed_limit). It must not block for long: the link reads nothing
  // else meanwhile.
  using receiver = std::function<bool(std::string_view peer, std::span<const std::byte> frame)>;
  // Called on the link's thread when the connection to a peer this link
  // sends to is made or lost: connected and lost alternate, connected
  // first. Frames queued for a connection that is lost, in ZeroMQ or in
  // the link's queue, are dropped with it (counted in dropped_at_loss):
  // after `lost`, only frames sent later leave.
  using watcher = std::function<void(std::string_view peer, peer_event event)>;
  // Called on the link's thread when the connection to a peer has been
  // idle for link_config::idle_after: true closes it. A retired connection
  // is not reported lost: the peer's next frame opens a new one, in order
  // after the last, and `connected` is not reported again; if the new one
  // is not made within heartbeat_timeout, the peer is reported lost then.
  // Nothing queued for the peer when it is asked; a frame sent meanwhile
  // leaves on the new connection.
  using retirer = std::function<bool(std::string_view peer)>;

  // Binds the listening socket; throws std::runtime_error (a ZeroMQ error
  // with the endpoint) if it cannot. Nothing is read, sent or called back
  // until start(): frames sent meanwhile wait in the link's queue, and
  // peers that connect wait in ZeroMQ's.
  secure_link(link_config config, receiver on_frame, watcher on_peer = {},
              retirer may_retire = {});
  ~secure_link();
  secure_link(const secure_link&) = delete;
  secure_link& operator=(const secure_link&) = delete;

  // Starts the link's thread, from which the callbacks are called. Once,
  // when whatever they use (the link itself, say) is in place.
  void start();

  // The endpoint it listens on, with the port it got ("tcp://127.0.0.1:39021").
  const std::string& endpoint() const noexcept { return endpoint_; }

  // Queues `frame` for the peer named `peer`, which must be on the
  // allow-list with an address. Frames to one peer leave in the order
  // queued; a frame waits while the peer's connection is full (ZeroMQ's
  // high-water mark), never dropped, and a send that would queue more than
  // link_config::max_queued bytes for the peer is refused instead, as is a
  // frame larger than link_config::max_frame. Any thread.
  send_result send(std::string_view peer, std::vector<std::byte> frame);

  // Opens the connection to `peer` again if it was retired, as a frame
  // for it would: for a caller that needs its heartbeats (a monitor of the
  // peer) before it has anything to send. Any thread.
  void open(std::string_view peer);

  std::size_t max_frame() const noexcept { return config_.max_frame; }

  // Where peer `peer`, listed without an address, listens, as it says in
  // its own frames (authenticated: it has the key the list names): the
  // link connects there from now on, and send() takes frames for it.
  // False, changing nothing, if the peer has an address on the list or
  // `address` is not a TCP endpoint to connect to (tcp://HOST:PORT, not a
  // wildcard host). On the link's thread (in a receiver).
  bool learn(std::string_view peer, std::string_view address);

  // Whether `address` is an endpoint learn() takes.
  static bool connectable(std::string_view address);

  // Any thread; a snapshot.
  link_stats stats() const noexcept;

  // Closes every connection and ends the link's thread: no callback runs
  // once it returns, and frames sent later are never sent. Not on the
  // link's thread. The destructor stops a link still running.
  void stop() noexcept;

 private:
  struct io;
  void run() noexcept;

  const link_config config_;
  const receiver on_frame_;
  const watcher on_peer_;
  const retirer may_retire_;
  std::unique_ptr<io> io_;
  std::string endpoint_;

  // Frames waiting for each peer's connection, and their bytes. Guarded
  // by lock_: senders append, the link's thread hands frames to ZeroMQ.
  struct outbox {
    std::deque<std::vector<std::byte>> frames;
    std::size_t bytes = 0;
    bool known = false;  // its address, listed or learned
    bool wanted = false;  // open() asked for its connection
  };
  std::mutex lock_;
  std::vector<outbox> outboxes_;  // per peer, as in config_.peers
  bool stopping_ = false;
  int wake_fd_ = -1;  // eventfd: the outbox has frames, or stop

  std::atomic<std::uint64_t> accepted_{0}, refused_{0}, handshakes_failed_{0};
  std::atomic<std::uint64_t> frames_in_{0}, frames_out_{0}, messages_out_{0}, overflows_{0},
      malformed_{0}, cut_offs_{0}, dropped_at_loss_{0}, stale_{0}, retired_{0};

  std::thread thread_;
};

}  // namespace tact::net::detail
