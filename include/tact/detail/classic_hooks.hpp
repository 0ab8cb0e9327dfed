#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <typeinfo>

#include <tact/actor.hpp>
#include <tact/detail/envelope.hpp>
#include <tact/export.hpp>
#include <tact/message.hpp>

// The library entry points the classic send and delivery templates call.
// Not for users.
namespace tact::detail {

// An actor's queue index once it has finished: no queue has it.
inline constexpr std::uint32_t finished_queue = std::numeric_limits<std::uint32_t>::max();

struct actor_access {
  static executor& executor_of(actor& a) noexcept { return *a.executor_; }
  // Relaxed: a finished actor is a user error to send to; the load only has
  // to be tear-free so the check can report it.
  static std::uint32_t queue_of(const actor& a) noexcept {
    return a.queue_.load(std::memory_order_relaxed);
  }
  static void mark_finished(actor& a) noexcept {
    a.queue_.store(finished_queue, std::memory_order_relaxed);
  }
};

struct message_access {
  static void mark_sent(message& m) noexcept { m.sent_.store(true, std::memory_order_relaxed); }
};

// Posts `e` to work queue `queue` of `ex`: the only seam between the actor
// models and the executor. Safe from any thread.
TACT_API void post(executor& ex, std::uint32_t queue, const envelope& e);

// Deletes or destroys a delivered message whose allocation says so.
TACT_API void dispose_message(message& m, allocation how) noexcept;

// Takes an actor's allocation action after a behaviour returned something
// other than Nodelete, and counts it finished. On the worker running it.
TACT_API void retire(actor& a, allocation how) noexcept;

// Called inside a catch block of a delivery: hands the exception to the
// system's diagnostic handler, naming both types.
TACT_API void report_exception(actor& a, const std::type_info& actor_type,
                               const std::type_info& message_type) noexcept;

// A send to, or a delivery for, an actor that has finished: counted as a
// dead letter, and reported when checks are on.
TACT_API void report_send_to_finished(actor& a, const std::type_info& actor_type,
                                      const std::type_info& message_type) noexcept;
TACT_API void report_delivery_to_finished(actor& a, const std::type_info& actor_type,
                                          const std::type_info& message_type) noexcept;

}  // namespace tact::detail
