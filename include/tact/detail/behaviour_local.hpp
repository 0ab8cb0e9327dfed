#pragma once

#include <cstdint>

#include <tact/export.hpp>

namespace tact::detail {

// A word of thread-local state that belongs to the behaviour running on
// this thread rather than to the thread. The executor keeps it for each
// behaviour: a behaviour that waits (an ask inside it) is suspended on its
// own execution context, and every context keeps its own copy, exchanged at
// each switch (a new context starts at 0); a behaviour that runs others on
// its own context (a sponsor run from inside it) finds its copy as it left
// it once they return. Between behaviours it means nothing. The classic
// actor model keeps the delivery in progress here (see begin_delivery in
// tact/detail/classic_hooks.hpp). Not for users.
extern TACT_API constinit thread_local std::uintptr_t behaviour_local
    __attribute__((tls_model("initial-exec")));

}  // namespace tact::detail
