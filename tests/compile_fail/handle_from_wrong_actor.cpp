// A handle binds only to an actor that receives every message type it
// names. With TACT_CONTROL the handle names only what the actor receives.
#include <tact/handle.hpp>

struct ping : tact::message {};
struct pong : tact::message {};

struct pinger : tact::actor {
  tact::allocation receive(ping&) { return Nodelete; }
};

#ifdef TACT_CONTROL
using pinger_handle = tact::handle<ping>;
#else
using pinger_handle = tact::handle<ping, pong>;
#endif

pinger_handle bind(pinger& p) { return p; }
