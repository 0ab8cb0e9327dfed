// A handle refuses a message type it does not name, just like a direct
// send refuses one the actor does not receive. With TACT_CONTROL the same
// program sends a named type and compiles.
#include <tact/handle.hpp>

struct ping : tact::message {};
struct pong : tact::message {};

void send_it(const tact::handle<ping>& h) {
#ifdef TACT_CONTROL
  ping m;
#else
  pong m;
#endif
  h | m;
}
