// Links between nodes over loopback, as the network layer uses them: a
// listed peer's frames arrive whole, once and in order, named as the
// allow-list names it; a client whose key is not listed, and a client
// that pins another server key, get nothing through.
#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <tact/net/keys.hpp>

#include "integration/net/link.hpp"

namespace {

using tact::net::detail::link_config;
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
    };
  }
  void wait_for(std::size_t count) {
    std::unique_lock guard{lock};
    arrived.wait(guard, [&] { return frames.size() >= count; });
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

template <class Pred>
void wait_until(Pred&& pred) {
  while (!pred()) std::this_thread::sleep_for(std::chrono::milliseconds{1});
}

}  // namespace

TEST_CASE("a listed peer's frames arrive once each, in order, under its name") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  inbox at_beta;
  secure_link beta{{.listen = loopback, .keys = beta_keys, .peers = {{"alpha", alpha_keys.public_key, ""}}},
                   at_beta.receiver()};
  inbox at_alpha;
  secure_link alpha{{.listen = loopback,
                     .keys = alpha_keys,
                     .peers = {{"beta", beta_keys.public_key, beta.endpoint()}}},
                    at_alpha.receiver()};

  CHECK(alpha.send("gamma", numbered(0)) == send_result::unknown_peer);  // not listed
  // All at once: far more than a connection takes before its peer reads
  // (1,000 frames); the rest wait in the link's queue, none is dropped.
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
}

TEST_CASE("a client whose key is not on the allow-list gets nothing through") {
  const auto alpha_keys = tact::net::generate_key_pair();
  const auto beta_keys = tact::net::generate_key_pair();
  const auto intruder_keys = tact::net::generate_key_pair();
  inbox at_beta;
  secure_link beta{{.listen = loopback, .keys = beta_keys, .peers = {{"alpha", alpha_keys.public_key, ""}}},
                   at_beta.receiver()};
  inbox unused;
  // It knows beta's key and address, which is all CURVE alone would ask.
  secure_link intruder{{.listen = loopback,
                        .keys = intruder_keys,
                        .peers = {{"beta", beta_keys.public_key, beta.endpoint()}}},
                       unused.receiver()};
  for (std::uint64_t i = 0; i < 100; ++i) REQUIRE(intruder.send("beta", numbered(i)) == send_result::queued);
  wait_until([&] { return beta.stats().refused + beta.stats().accepted >= 1; });
  CHECK(beta.stats().accepted == 0);

  // A listed peer still gets through, after the intruder was refused.
  secure_link alpha{{.listen = loopback,
                     .keys = alpha_keys,
                     .peers = {{"beta", beta_keys.public_key, beta.endpoint()}}},
                    unused.receiver()};
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
  secure_link beta{{.listen = loopback, .keys = beta_keys, .peers = {{"alpha", alpha_keys.public_key, ""}}},
                   at_beta.receiver()};
  inbox unused;
  // alpha believes that "beta" at this address has another key: whoever
  // listens there cannot complete the handshake, and reads nothing.
  secure_link alpha{{.listen = loopback,
                     .keys = alpha_keys,
                     .peers = {{"beta", impostor_keys.public_key, beta.endpoint()}}},
                    unused.receiver()};
  for (std::uint64_t i = 0; i < 100; ++i) REQUIRE(alpha.send("beta", numbered(i)) == send_result::queued);
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
  secure_link alpha{{.listen = loopback,
                     .keys = alpha_keys,
                     .peers = {{"beta", keys.public_key, gone}},
                     .max_queued = 100 * frame},
                    unused.receiver()};
  std::uint64_t queued = 0, refused = 0;
  for (std::uint64_t i = 0; i < 3'000; ++i) {
    const send_result r = alpha.send("beta", numbered(i, frame));
    REQUIRE(r != send_result::unknown_peer);
    (r == send_result::queued ? queued : refused) += 1;
  }
  // The connection takes up to 1,000 frames while it waits for its peer,
  // the link's queue 100 more; every other send was told no.
  CHECK(refused >= 1'000);
  CHECK(queued <= 1'100);
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
