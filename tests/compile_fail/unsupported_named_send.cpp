// The named send refuses an unsupported message type just like `|`.
// With TACT_CONTROL the same program sends a supported type and compiles.
#include <tact/tact.hpp>

struct ping : tact::message {};
struct pong : tact::message {};

struct pinger : tact::actor {
  tact::allocation receive(ping&) { return Nodelete; }
};

void send_it(pinger& p) {
#ifdef TACT_CONTROL
  ping m;
#else
  pong m;
#endif
  tact::send(p, m);
}
