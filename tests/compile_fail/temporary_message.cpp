// Messages are not copied: sending a temporary, which would dangle before
// delivery, must not compile. With TACT_CONTROL it sends a named object.
#include <tact/tact.hpp>

struct ping : tact::message {};

struct pinger : tact::actor {
  tact::allocation receive(ping&) { return Nodelete; }
};

void send_it(pinger& p) {
#ifdef TACT_CONTROL
  static ping m;
  p | m;
#else
  p | ping{};
#endif
}
