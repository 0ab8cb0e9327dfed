#pragma once

#include <vector>

#include <tact/export.hpp>
#include <tact/tx/actor_ref.hpp>

namespace tact::widgets {

// An actor that sends each request (customer first) to every one of
// `services` at once and passes only the first answer on to the customer.
// A service whose handler throws on the request does not win: the customer
// gets a tx::failure only when every service failed. A service that never
// answers is no failure: when the others all failed, the customer gets
// nothing, so bound the wait with a timeout gate as the customer.
//
//   auto fastest = tact::widgets::race({primary, replica});
//   tx::send(fastest, tx::self(), lookup{key});
//
// A request with no customer first is refused (its handler throws
// std::invalid_argument and rolls back). std::invalid_argument for an
// empty list or an empty service. Any thread.
TACT_API tx::actor_ref race(std::vector<tx::actor_ref> services);

}  // namespace tact::widgets
