// Links between nodes over loopback, as the network layer uses them: a
// listed peer's frames arrive whole, once and in order, named as the
// allow-list names it; a client whose key is not listed, and a client
// that pins another server key, get nothing through.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <csignal>

#include <sys/wait.h>
#include <unistd.h>

#include <tact/net/keys.hpp>
#include <zmq.hpp>

#include "integration/net/link.hpp"

namespace {

using tact::net::detail::link_config;
using tact::net::detail::peer_event;
using tact::net::detail::secure_link;
using tact::net::detail::send_result;

// What a link received, by sender; filled on the link's thread.
struct inbox {
  std::mutex lock;
  std::condition_variable arrived;
  std::vector<std::string> senders;
  std::vector<std::vector<std::byte>> frames;

  secure_link::receiver receiver() {
    return [this](std::string_view peer, std::span<const std::byte> frame) {
      std::lock_guard guard{lock};
      senders.emplace_back(peer);
      frames.emplace_back(frame.begin(), frame.end());
      arrived.notify_all();
      return true;
    };
  }
  void wait_for(std::size_t count) {
    std::unique_lock guard{lock};
    arrived.wait(guard, [&] { return frames.size() >= count; });
  }
};

// What a link reported of its peers' connections; filled on its thread.
struct events {
  std::mutex lock;
  std::condition_variable changed;
  std::vector<peer_event> seen;

  secure_link::watcher watcher() {
    return [this](std::string_view, peer_event e) {
      std::lock_guard guard{lock};
      seen.push_back(e);
      changed.notify_all();
    };
  }
  void wait_for(std::size_t count) {
    std::unique_lock guard{lock};
    changed.wait(guard, [&] { return seen.size() >= count; });
  }
};

std::vector<std::byte> numbered(std::uint64_t n, std::size_t size = 16) {
  std::vector<std::byte> frame(size, std::byte{0x5a});
  std::memcpy(frame.data(), &n, sizeof n);
  return frame;
}

std::uint64_t number_of(const std::vector<std::byte>& frame) {
  std::uint64_t n = 0;
  std::memcpy(&n, frame.data(), sizeof n);
  return n;
}

constexpr const char* loopback = "tcp://127.0.0.1:*";

// A link that listens on loopback and admits one client, named "alpha".
link_config server(const tact::net::key_pair& keys, const std::string& client_key) {
  return {.listen = loopback, .keys = keys, .peers = {{"alpha", client_key, ""}}};
}

// A link that sends to "beta" at `address`, pinning `server_key`.
link_config client(const tact::net::key_pair& keys, const std::string& server_key,
                   const std::string& address) {
  return {.listen = loopback, .keys = keys, .peers = {{"beta", server_key, address}}};
}

template <class Pred>
void wait_until(Pred&& pred) {
  while (!pred()) std::this_thread::sleep_for(std::chrono::milliseconds{1});
}

}  // namespace

TEST_CASE("a listed peer's frames arrive once each, in order, under its name") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  inbox at_beta;
  secure_link beta{server(beta_keys, alpha_keys.public_key), at_beta.receiver()};
  beta.start();
  inbox at_alpha;
  secure_link alpha{client(alpha_keys, beta_keys.public_key, beta.endpoint()), at_alpha.receiver()};
  alpha.start();

  CHECK(alpha.send("gamma", numbered(0)) == send_result::unknown_peer);  // not listed
  // All at once: far more than a connection takes before its peer reads
  // (32 messages); the rest wait in the link's queue, none is dropped.
  const std::uint64_t rounds = 20, per_round = 1'000;
  for (std::uint64_t i = 0; i < rounds * per_round; ++i)
    REQUIRE(alpha.send("beta", numbered(i, 16 + (i % per_round % 7) * 100)) == send_result::queued);
  at_beta.wait_for(rounds * per_round);
  std::lock_guard guard{at_beta.lock};
  REQUIRE(at_beta.frames.size() == rounds * per_round);
  std::uint64_t out_of_order = 0, misnamed = 0, wrong_size = 0;
  for (std::uint64_t i = 0; i < at_beta.frames.size(); ++i) {
    out_of_order += number_of(at_beta.frames[i]) != i;
    misnamed += at_beta.senders[i] != "alpha";
    wrong_size += at_beta.frames[i].size() != 16 + (i % per_round % 7) * 100;
  }
  CHECK(out_of_order == 0);
  CHECK(misnamed == 0);
  CHECK(wrong_size == 0);
  CHECK(beta.stats().accepted >= 1);
  CHECK(beta.stats().refused == 0);
  CHECK(beta.stats().frames_in == rounds * per_round);
  CHECK(alpha.stats().frames_out == rounds * per_round);
  CHECK(alpha.stats().overflows == 0);
  // Frames that waited for the connection left packed, several to a
  // message (32 messages fill the connection, and 20,000 frames were
  // sent faster than any connection takes them).
  CHECK(alpha.stats().messages_out < alpha.stats().frames_out);
  CHECK(alpha.stats().malformed == 0);
}

// Its owner may need the link (its endpoint, learn(), send()) inside a
// callback: nothing is called before start(), however early a peer's
// frames come, and what came meanwhile arrives after, in order.
TEST_CASE("a link calls nothing before it starts: frames that came meanwhile arrive after") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  std::atomic<bool> started{false};
  std::atomic<std::uint64_t> early{0};
  inbox at_beta;
  const secure_link::receiver record = at_beta.receiver();
  secure_link beta{server(beta_keys, alpha_keys.public_key),
                   [&](std::string_view peer, std::span<const std::byte> frame) {
                     early += !started.load();
                     return record(peer, frame);
                   }};
  inbox unused;
  secure_link alpha{client(alpha_keys, beta_keys.public_key, beta.endpoint()), unused.receiver()};
  alpha.start();
  for (std::uint64_t i = 0; i < 3; ++i) REQUIRE(alpha.send("beta", numbered(i)) == send_result::queued);
  // An absence can only be watched for a while: long enough for the
  // connection and the frames, had beta been reading (before start() its
  // handshake cannot even complete, so there is no event to wait for).
  // Not a time limit: a slow machine can only make this test pass.
  wait_until([&] { return alpha.stats().frames_out == 3; });
  std::this_thread::sleep_for(std::chrono::milliseconds{300});
  started = true;
  beta.start();
  at_beta.wait_for(3);
  CHECK(early == 0);
  std::lock_guard guard{at_beta.lock};
  REQUIRE(at_beta.frames.size() == 3);
  for (std::uint64_t i = 0; i < 3; ++i) CHECK(number_of(at_beta.frames[i]) == i);
}

TEST_CASE("a frame larger than the largest a link carries is refused at send") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  inbox at_beta;
  secure_link beta{server(beta_keys, alpha_keys.public_key), at_beta.receiver()};
  beta.start();
  inbox unused;
  link_config small = client(alpha_keys, beta_keys.public_key, beta.endpoint());
  small.max_frame = 1'000;
  secure_link alpha{small, unused.receiver()};
  alpha.start();
  CHECK(alpha.send("beta", numbered(1, 1'001)) == send_result::too_large);
  REQUIRE(alpha.send("beta", numbered(2, 1'000)) == send_result::queued);
  at_beta.wait_for(1);
  std::lock_guard guard{at_beta.lock};
  REQUIRE(at_beta.frames.size() == 1);
  CHECK(number_of(at_beta.frames[0]) == 2);
}

// A listed peer that does not speak the link's framing (a raw ZeroMQ
// client with alpha's keys): what it sends is read frame by frame, up to
// the first frame whose length runs past the message's end.
TEST_CASE(
    "a message that is not whole frames is delivered up to its first broken frame, and counted") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  inbox at_beta;
  secure_link beta{server(beta_keys, alpha_keys.public_key), at_beta.receiver()};
  beta.start();
  zmq::context_t context;
  zmq::socket_t raw{context, zmq::socket_type::dealer};
  raw.set(zmq::sockopt::linger, 0);
  raw.set(zmq::sockopt::curve_serverkey, beta_keys.public_key);
  raw.set(zmq::sockopt::curve_publickey, alpha_keys.public_key);
  raw.set(zmq::sockopt::curve_secretkey, alpha_keys.secret_key);
  raw.connect(beta.endpoint());
  // "ok", then a frame claiming 200 bytes (c8 01) of which 3 follow.
  const unsigned char broken[] = {2, 'o', 'k', 0xc8, 0x01, 'x', 'y', 'z'};
  const unsigned char whole[] = {3, 'y', 'e', 's', 0, 1, '!'};
  raw.send(zmq::buffer(broken), zmq::send_flags::none);
  raw.send(zmq::buffer(whole), zmq::send_flags::none);
  at_beta.wait_for(4);
  std::lock_guard guard{at_beta.lock};
  const auto text = [](const std::vector<std::byte>& f) {
    return std::string{reinterpret_cast<const char*>(f.data()), f.size()};
  };
  REQUIRE(at_beta.frames.size() == 4);
  CHECK(text(at_beta.frames[0]) == "ok");
  CHECK(text(at_beta.frames[1]) == "yes");
  CHECK(text(at_beta.frames[2]).empty());
  CHECK(text(at_beta.frames[3]) == "!");
  CHECK(at_beta.senders[1] == "alpha");
  CHECK(beta.stats().malformed == 1);
  CHECK(beta.stats().frames_in == 4);
}

TEST_CASE("a client whose key is not on the allow-list gets nothing through") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  const auto intruder_keys = tact::net::generate_key_pair();
  inbox at_beta;
  secure_link beta{server(beta_keys, alpha_keys.public_key), at_beta.receiver()};
  beta.start();
  inbox unused;
  // It knows beta's key and address, which is all CURVE alone would ask.
  secure_link intruder{client(intruder_keys, beta_keys.public_key, beta.endpoint()),
                       unused.receiver()};
  intruder.start();
  for (std::uint64_t i = 0; i < 100; ++i)
    REQUIRE(intruder.send("beta", numbered(i)) == send_result::queued);
  wait_until([&] { return beta.stats().refused + beta.stats().accepted >= 1; });
  CHECK(beta.stats().accepted == 0);

  // A listed peer still gets through, after the intruder was refused.
  secure_link alpha{client(alpha_keys, beta_keys.public_key, beta.endpoint()), unused.receiver()};
  alpha.start();
  REQUIRE(alpha.send("beta", numbered(7)) == send_result::queued);
  at_beta.wait_for(1);
  std::lock_guard guard{at_beta.lock};
  REQUIRE(at_beta.frames.size() == 1);
  CHECK(at_beta.senders[0] == "alpha");
  CHECK(number_of(at_beta.frames[0]) == 7);
  CHECK(beta.stats().frames_in == 1);
}

TEST_CASE("a client that pins another server key sends nothing to this one") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  const auto impostor_keys = tact::net::generate_key_pair();
  inbox at_beta;
  secure_link beta{server(beta_keys, alpha_keys.public_key), at_beta.receiver()};
  beta.start();
  inbox unused;
  // alpha believes that "beta" at this address has another key: whoever
  // listens there cannot complete the handshake, and reads nothing.
  secure_link alpha{client(alpha_keys, impostor_keys.public_key, beta.endpoint()),
                    unused.receiver()};
  alpha.start();
  for (std::uint64_t i = 0; i < 100; ++i)
    REQUIRE(alpha.send("beta", numbered(i)) == send_result::queued);
  wait_until([&] { return beta.stats().handshakes_failed + beta.stats().frames_in >= 1; });
  CHECK(beta.stats().accepted == 0);
  CHECK(beta.stats().frames_in == 0);
  std::lock_guard guard{at_beta.lock};
  CHECK(at_beta.frames.empty());
}

TEST_CASE("frames for a peer that does not read are refused past the bound, never dropped unsaid") {
  const auto keys = tact::net::generate_key_pair();
  inbox unused;
  std::string gone;
  {
    secure_link listener{{.listen = loopback, .keys = keys, .peers = {}}, unused.receiver()};
    gone = listener.endpoint();  // nobody listens there once it is destroyed
  }
  const auto alpha_keys = tact::net::generate_key_pair();
  const std::size_t frame = 1'000;
  link_config bounded = client(alpha_keys, keys.public_key, gone);
  bounded.max_queued = 100 * frame;
  secure_link alpha{bounded, unused.receiver()};
  alpha.start();
  std::uint64_t queued = 0, refused = 0;
  for (std::uint64_t i = 0; i < 3'000; ++i) {
    const send_result r = alpha.send("beta", numbered(i, frame));
    REQUIRE(r != send_result::unknown_peer);
    (r == send_result::queued ? queued : refused) += 1;
  }
  // The connection takes up to 32 messages while it waits for its peer,
  // each packing at most 64 KiB of frames (65 of these), and the link's
  // queue 100 more; every other send was told no.
  CHECK(queued <= 32 * 65 + 100);
  CHECK(refused >= 3'000 - (32 * 65 + 100));
  CHECK(queued + refused == 3'000);
  CHECK(alpha.stats().overflows == refused);
}

TEST_CASE("a link that cannot listen says where") {
  const auto keys = tact::net::generate_key_pair();
  inbox unused;
  secure_link first{{.listen = loopback, .keys = keys, .peers = {}}, unused.receiver()};
  try {
    secure_link second{{.listen = first.endpoint(), .keys = keys, .peers = {}}, unused.receiver()};
    FAIL("a second link listened on a port in use");
  } catch (const std::runtime_error& e) {
    CHECK(std::string{e.what()}.find(first.endpoint()) != std::string::npos);
  }
}

TEST_CASE("a peer that goes away is reported lost") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  inbox unused;
  events at_alpha;
  auto beta =
      std::make_unique<secure_link>(server(beta_keys, alpha_keys.public_key), unused.receiver());
  beta->start();
  secure_link alpha{client(alpha_keys, beta_keys.public_key, beta->endpoint()), unused.receiver(),
                    at_alpha.watcher()};
  alpha.start();
  REQUIRE(alpha.send("beta", numbered(1)) == send_result::queued);
  at_alpha.wait_for(1);
  beta.reset();
  at_alpha.wait_for(2);
  std::lock_guard guard{at_alpha.lock};
  CHECK(at_alpha.seen == std::vector<peer_event>{peer_event::connected, peer_event::lost});
}

// A peer in a process of its own, which the test stops (SIGSTOP), lets go
// on (SIGCONT) and kills: alive at the TCP level while stopped, so only
// heartbeats can tell.
TEST_CASE(
    "a stopped peer process is reported lost by heartbeats, and connected again when it resumes") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  int ends[2];
  REQUIRE(::pipe(ends) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(ends[0]);
    try {
      secure_link beta{server(beta_keys, alpha_keys.public_key),
                       [](std::string_view, std::span<const std::byte>) { return true; }};
      beta.start();
      const std::string line = beta.endpoint() + "\n";
      if (::write(ends[1], line.data(), line.size()) != static_cast<ssize_t>(line.size()))
        ::_exit(1);
      for (;;) ::pause();
    } catch (...) {
      ::_exit(2);
    }
  }
  ::close(ends[1]);
  std::string endpoint;
  for (char c; ::read(ends[0], &c, 1) == 1 && c != '\n';) endpoint += c;
  ::close(ends[0]);
  REQUIRE_FALSE(endpoint.empty());

  inbox unused;
  events at_alpha;
  {
    link_config quick = client(alpha_keys, beta_keys.public_key, endpoint);
    quick.heartbeat = std::chrono::milliseconds{100};
    quick.heartbeat_timeout = std::chrono::milliseconds{500};
    secure_link alpha{quick, unused.receiver(), at_alpha.watcher()};
    alpha.start();
    REQUIRE(alpha.send("beta", numbered(1)) == send_result::queued);
    at_alpha.wait_for(1);
    ::kill(child, SIGSTOP);
    at_alpha.wait_for(2);
    ::kill(child, SIGCONT);
    at_alpha.wait_for(3);
    ::kill(child, SIGKILL);
    at_alpha.wait_for(4);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  std::lock_guard guard{at_alpha.lock};
  CHECK(at_alpha.seen == std::vector<peer_event>{peer_event::connected, peer_event::lost,
                                                 peer_event::connected, peer_event::lost});
}

// A listed peer that keeps sending what the receiver refuses (a raw
// ZeroMQ client with alpha's keys, as a compromised or broken peer would):
// after link_config::malformed_limit such frames it is cut off both ways,
// its key is refused until the ban ends, and then it is let in again.
TEST_CASE("a peer that sends malformed frames is cut off both ways until its ban ends") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  inbox at_alpha;
  secure_link alpha{server(alpha_keys, beta_keys.public_key), at_alpha.receiver()};
  alpha.start();

  // beta sends to alpha too, so that its connection to alpha is seen closed.
  std::mutex lock;
  std::vector<std::string> accepted;
  std::vector<std::uint64_t> refused_before;  // beta's refusals when each was accepted
  secure_link* beta_link = nullptr;
  link_config strict{.listen = loopback,
                     .keys = beta_keys,
                     .peers = {{"alpha", alpha_keys.public_key, alpha.endpoint()}}};
  strict.malformed_limit = 3;
  strict.cut_off_for = std::chrono::milliseconds{3'000};
  events at_beta;
  secure_link beta{
      strict,
      [&](std::string_view, std::span<const std::byte> frame) {
        const std::string text{reinterpret_cast<const char*>(frame.data()), frame.size()};
        if (text.starts_with("bad")) return false;
        std::lock_guard guard{lock};
        accepted.push_back(text);
        refused_before.push_back(beta_link->stats().refused);
        return true;
      },
      at_beta.watcher()};
  beta_link = &beta;
  beta.start();
  REQUIRE(beta.send("alpha", numbered(1)) == send_result::queued);
  at_beta.wait_for(1);
  at_alpha.wait_for(1);

  zmq::context_t context;
  zmq::socket_t raw{context, zmq::socket_type::dealer};
  raw.set(zmq::sockopt::linger, 0);
  raw.set(zmq::sockopt::curve_serverkey, beta_keys.public_key);
  raw.set(zmq::sockopt::curve_publickey, alpha_keys.public_key);
  raw.set(zmq::sockopt::curve_secretkey, alpha_keys.secret_key);
  raw.connect(beta.endpoint());
  const unsigned char good[] = {4, 'g', 'o', 'o', 'd'};
  const unsigned char bad[] = {4, 'b', 'a', 'd', '!'};
  raw.send(zmq::buffer(good), zmq::send_flags::none);
  wait_until([&] {
    std::lock_guard guard{lock};
    return accepted.size() == 1;
  });
  for (int i = 0; i < 3; ++i) raw.send(zmq::buffer(bad), zmq::send_flags::none);
  // Cut off: beta's connection to alpha is closed and reported lost.
  at_beta.wait_for(2);
  CHECK(beta.stats().cut_offs == 1);
  CHECK(beta.stats().malformed == 3);
  // A new connection with the same key is refused until the ban ends.
  const auto connection = [&] {
    zmq::socket_t s{context, zmq::socket_type::dealer};
    s.set(zmq::sockopt::linger, 0);
    s.set(zmq::sockopt::curve_serverkey, beta_keys.public_key);
    s.set(zmq::sockopt::curve_publickey, alpha_keys.public_key);
    s.set(zmq::sockopt::curve_secretkey, alpha_keys.secret_key);
    s.connect(beta.endpoint());
    static_cast<void>(s.send(zmq::buffer(good), zmq::send_flags::dontwait));
    return s;
  };
  {
    zmq::socket_t refused = connection();
    wait_until([&] { return beta.stats().refused >= 1; });
  }
  // ZeroMQ does not connect again once refused: new connections until one
  // is let in, after the ban.
  while (true) {
    zmq::socket_t again = connection();
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
    std::lock_guard guard{lock};
    if (accepted.size() >= 2) break;
  }
  {
    std::lock_guard guard{lock};
    CHECK(accepted[0] == "good");
    CHECK(accepted[1] == "good");
    CHECK(refused_before[0] == 0);
    CHECK(refused_before[1] >= 1);
  }
  // And beta connects to alpha again once the ban is over.
  at_beta.wait_for(3);
  std::lock_guard guard{at_beta.lock};
  CHECK(at_beta.seen ==
        std::vector<peer_event>{peer_event::connected, peer_event::lost, peer_event::connected});
}

TEST_CASE(
    "insecure_plaintext links name their peers by the key they claim, and never talk to CURVE "
    "links") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  const auto plain = [](link_config c) {
    c.insecure_plaintext = true;
    return c;
  };
  inbox at_beta;
  secure_link beta{plain(server(beta_keys, alpha_keys.public_key)), at_beta.receiver()};
  beta.start();
  inbox unused;
  secure_link alpha{plain(client(alpha_keys, beta_keys.public_key, beta.endpoint())),
                    unused.receiver()};
  alpha.start();
  for (std::uint64_t i = 0; i < 1'000; ++i)
    REQUIRE(alpha.send("beta", numbered(i)) == send_result::queued);
  at_beta.wait_for(1'000);
  {
    std::lock_guard guard{at_beta.lock};
    for (std::uint64_t i = 0; i < 1'000; ++i) {
      CHECK(at_beta.senders[i] == "alpha");
      CHECK(number_of(at_beta.frames[i]) == i);
    }
  }

  // A CURVE client of a plaintext server, and a plaintext client of a
  // CURVE server: neither handshake completes, nothing is read.
  inbox at_secure;
  secure_link secure{server(beta_keys, alpha_keys.public_key), at_secure.receiver()};
  secure.start();
  secure_link plain_client{plain(client(alpha_keys, beta_keys.public_key, secure.endpoint())),
                           unused.receiver()};
  plain_client.start();
  secure_link curve_client{client(alpha_keys, beta_keys.public_key, beta.endpoint()),
                           unused.receiver()};
  curve_client.start();
  REQUIRE(plain_client.send("beta", numbered(1)) == send_result::queued);
  REQUIRE(curve_client.send("beta", numbered(2)) == send_result::queued);
  wait_until(
      [&] { return secure.stats().handshakes_failed >= 1 && beta.stats().handshakes_failed >= 1; });
  CHECK(secure.stats().frames_in == 0);
  CHECK(beta.stats().frames_in == 1'000);
}
