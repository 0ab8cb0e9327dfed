#pragma once

#include <tact/export.hpp>
#include <tact/tx/actor_ref.hpp>

namespace tact::widgets {

// The actors' lock (xTActors' SERIALIZER): an actor that lets one request
// at a time reach `service` and queues the others in arrival order. Each
// request (customer first) goes on to `service` with a tag of the
// serializer's as its customer; the first answer to that tag goes on to
// the original customer, and only then is the next request admitted, so a
// customer that runs one message at a time (serialized, sponsor-bound, an
// ask) gets its answers in the order of its requests. `service` may run
// a conversation of many messages per request without another request
// coming in between, as long as every path ends in one answer to its
// customer.
//
//   auto account = tact::widgets::serializer(tx::spawn(system, ledger(0)));
//   tx::send(account, tx::self(), transfer{from, to, 100});
//
// * A request whose handler in `service` throws, or matches nothing, is
//   answered with its tx::failure, and the next one goes in.
// * A service that never answers holds the lock for good, as a lock held
//   forever would: guard it with unwind_protect (the serializer then sees
//   its timeout as the answer).
// * A request with no customer first is refused (its handler throws
//   std::invalid_argument and rolls back).
//
// std::invalid_argument for an empty service. Any thread.
TACT_API tx::actor_ref serializer(const tx::actor_ref& service);

}  // namespace tact::widgets
