#pragma once

#include <condition_variable>
#include <mutex>

#include <tact/detail/reply_slot.hpp>

namespace tact::detail {

// The asks that threads outside the pool are waiting on, for one system.
// Once the system has stopped nothing can answer them, so stop() ends
// them all at once (no_reply) instead of leaving each to its deadline.
class waiting_askers {
 public:
  // An ask being waited on, from add() until its destructor. Lives on the
  // asker's stack.
  class entry {
   public:
    entry(waiting_askers& all, reply_base& slot) noexcept;
    ~entry();
    entry(const entry&) = delete;
    entry& operator=(const entry&) = delete;

   private:
    friend class waiting_askers;
    waiting_askers& all_;
    reply_base& slot_;
    entry* prev_ = nullptr;
    entry* next_ = nullptr;
  };

  // Ends every ask waited on now or from now on: each that is still open
  // settles as no_reply, which wakes its asker. Returns once every asker
  // has left the list, which it does when it no longer touches the system
  // (so the system may be destroyed next). After the workers are
  // joined, so that no answer can come any more.
  void close() noexcept;

 private:
  std::mutex lock_;
  std::condition_variable left_;  // the last entry went after close()
  entry* first_ = nullptr;  // guarded by lock_
  bool closed_ = false;     // guarded by lock_
};

}  // namespace tact::detail
