#pragma once

#include <functional>

// Savepoints in the transaction of the handler running on this thread
// (defined in dispatch.cpp, beside the transaction).
namespace tact::detail::tx {

// Only inside a handler: runs `body` as one piece of the handler's
// transaction. If `body` returns, what it staged (sends, on_commit
// actions, a become, which replaces one staged before it) joins the rest
// and commits or rolls back with the handler. If it throws, what it staged
// is discarded, what the handler staged before it is kept, and the
// exception goes on; actors it created are reclaimed as on a rollback,
// once nothing refers to them. std::logic_error outside a handler.
void run_in_savepoint(const std::function<void()>& body);

}  // namespace tact::detail::tx
