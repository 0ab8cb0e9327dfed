#pragma once

#include <chrono>
#include <functional>
#include <optional>

#include <tact/tx/actor_ref.hpp>

namespace tact::widgets::detail {

// The once-gate the widgets interpose between a request and its customer
// (xTActors: a timeout feeding a ONCE gate). Its first message, whatever it
// is (a reply, a tx::failure, timed_out), runs `cleanup` (if any) and goes
// on to `customer`, in one commit; a cleanup that throws leaves nothing
// staged, and its exception goes on instead. The gate then drops
// everything. With a `timeout`, the gate sends itself timed_out{} when it
// expires, and a reply that wins cancels that timer. Made in customer's
// system; hears of failures.
tx::actor_ref make_gate(const tx::actor_ref& customer, std::function<void()> cleanup,
                        std::optional<std::chrono::nanoseconds> timeout);

}  // namespace tact::widgets::detail
