#pragma once

#include <utility>

#include <tact/sponsor.hpp>
#include <tact/tx/actor_ref.hpp>
#include <tact/tx/behaviour.hpp>
#include <tact/tx/transaction.hpp>

namespace tact::tx {

// A new transactional actor bound to sponsor `s` (see tact::sponsor): its
// messages run one at a time (mode::serialized) on the sponsor's thread.
// Any thread. The reference follows actor_ref's rules: it may outlive the
// sponsor and the system, to be dropped.
inline actor_ref spawn(sponsor& s, behaviour initial) {
  detail::ambient_scope scope{s.system(), s.home()};
  return spawn(s.system(), std::move(initial), mode::serialized);
}

}  // namespace tact::tx
