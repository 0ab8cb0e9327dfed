// Sending a message type the actor has no receive for must not compile.
// Built twice: with TACT_CONTROL (the same program, sending what the actor
// accepts) it must compile; without it, it must fail.
#include <tact/tact.hpp>

struct accepted : tact::message {};
struct unrelated : tact::message {};

struct picky : tact::actor {
  tact::allocation receive(accepted&) { return Nodelete; }
};

void send_it(picky& p) {
#ifdef TACT_CONTROL
  accepted m;
#else
  unrelated m;
#endif
  p | m;
}
