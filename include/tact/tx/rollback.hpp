#pragma once

#include <exception>

#include <tact/export.hpp>
#include <tact/tx/actor_ref.hpp>
#include <tact/tx/message.hpp>

namespace tact {
class actor_system;
}

namespace tact::tx {

// A transactional handler threw: nothing it staged happened, as if the
// message had never been delivered. Passed to system_config::on_rollback on
// the worker that ran the handler; the references are valid during the call
// only (copy the actor_ref to keep it).
struct rollback {
  actor_system& system;
  const actor_ref& actor;
  const message& msg;
  std::exception_ptr error;
};

// The default on_rollback: hands the system's on_diagnostic a
// behaviour_exception naming the message's element types and the error.
TACT_API void report_rollback(const rollback& r);

}  // namespace tact::tx
