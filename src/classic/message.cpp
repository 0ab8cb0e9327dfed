#include <tact/message.hpp>

#include <tact/build_config.hpp>
#include <tact/detail/behaviour_local.hpp>
#include <tact/detail/classic_hooks.hpp>
#include <tact/diagnostic.hpp>

#include "executor/seam.hpp"
#include "support/type_name.hpp"

namespace tact {

// From the receive of this message: changes what its delivery does after
// it (see detail::begin_delivery).
void message::set_allocation(allocation a) noexcept {
  allocation_ = a;
  const auto me = reinterpret_cast<std::uintptr_t>(this);
  auto* d = reinterpret_cast<detail::delivery_record*>(detail::behaviour_local);
  if (d != nullptr && (d->message & ~detail::allocation_bits) == me)
    d->message = me | static_cast<std::uintptr_t>(a);
}

message::~message() {
  if constexpr (build::checks) {
    if (sent_.load(std::memory_order_relaxed)) return;
    // The derived part is gone, so only the base type is known here.
    if (detail::executor* ex = detail::ambient_executor())
      detail::note_unsent_message(*ex);
    else
      print_diagnostic({diagnostic_kind::message_never_sent,
                        "a message was destroyed without ever being sent, with no actor_system "
                        "running",
                        {}});
  }
}

}  // namespace tact
