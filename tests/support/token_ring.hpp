#pragma once

#include <cstdint>

#include <tact/tact.hpp>

// Classic actors in a ring passing one token until it has made its hops:
// steady, countable traffic (each hop is one message sent and processed)
// for tests that check what the statistics say about it.
namespace tact::test {

struct token : message {
  std::uint64_t hops_left = 0;
};

struct ring_node : actor {
  ring_node* next = nullptr;
  allocation receive(token& t) {
    if (t.hops_left > 0) {
      --t.hops_left;
      *next | t;
    }
    return Nodelete;
  }
};

}  // namespace tact::test
