#pragma once

#include <exception>
#include <string>

#include <tact/export.hpp>

namespace tact {

// Everything the engine reports about a program's mistakes and failures.
enum class diagnostic_kind {
  behaviour_exception,                   // a receive threw; the message was dropped
  send_to_finished,                      // a send to an actor that has finished (checks)
  delivery_to_finished,                  // a message queued before its actor finished (checks)
  message_never_sent,                    // a message destroyed without being sent (checks)
  messages_unreceived,                   // messages still queued when the system stopped
  actor_destroyed_unfinished,            // an actor destroyed before it finished
  actor_destroyed_with_queued_messages,  // ... while messages for it were queued (checks)
  idle_with_live_actors,                 // stop() waits for actors, but nothing runs
  topology_unavailable,                  // hwloc failed: no pinning, random stealing
  unmatched_message,                     // a transactional message no handler took (checks)
  sponsor_left_actors,                   // a sponsor destroyed before its actors finished
  out_of_memory,                         // no memory where the engine cannot fail: retried
  mailbox_full,                          // messages dropped by a full mailbox (overflow::drop)
};

struct diagnostic {
  diagnostic_kind kind;
  std::string text;              // one line, names the types involved
  std::exception_ptr exception;  // set for behaviour_exception
};

// The default handler: writes "tact: <text>" on one line of standard error.
TACT_API void print_diagnostic(const diagnostic& d);

}  // namespace tact
