#pragma once

#include <cstdint>

#include <tact/tact.hpp>

// Two classic actors hitting one ball back and forth, `hits_left` times:
// steady traffic where nothing is made per message (the ball is reused),
// for tests of what steady work costs in memory.
namespace tact::test {

struct ball : message {
  std::uint64_t hits_left = 0;
};

struct player : actor {
  using actor::actor;
  player* other = nullptr;
  allocation receive(ball& b) {
    if (b.hits_left == 0) return Nodelete;
    --b.hits_left;
    *other | b;
    return Nodelete;
  }
};

}  // namespace tact::test
