#pragma once

#include <tact/export.hpp>
#include <tact/tx/actor_ref.hpp>
#include <tact/tx/behaviour.hpp>

// Widgets: small transactional actors that compose others (xTActors'
// library). Each lives in the system of the actor it wraps, and can be
// made inside a handler or outside one alike.
namespace tact::widgets {

// A behaviour that takes every message and does nothing: what a one-shot
// actor becomes once it has done its part. Copies share one closure.
TACT_API tx::behaviour sink();

// A gate that passes the first message it gets to `target` (a copy, see
// tx::forward) and drops every later one, however many workers deliver
// them at once (it is a serialized actor). A first message that cannot be
// copied reaches `target` as a tx::failure.
//
//   auto first = tact::widgets::once(winner_log);
//   for (auto& runner : runners) tx::send(runner, first, start{});
//
// Also a customer that hears of failures: a request naming it that rolls
// back or matches no handler sends it a tx::failure, which it passes on
// like any message.
// std::invalid_argument for an empty target. Any thread.
TACT_API tx::actor_ref once(const tx::actor_ref& target);

}  // namespace tact::widgets
