#include "helpers/ask/askers.hpp"

namespace tact::detail {

// The list is only touched under the lock, and close() settles slots
// under it too: an entry is unlinked (under the lock) before its asker
// returns and the slot can go, so close() never reaches a slot that is gone.
waiting_askers::entry::entry(waiting_askers& all, reply_base& slot) noexcept
    : all_{all}, slot_{slot} {
  std::lock_guard guard{all.lock_};
  if (all.closed_) {
    slot.fail_unanswered();
    return;
  }
  next_ = all.first_;
  if (next_ != nullptr) next_->prev_ = this;
  all.first_ = this;
}

waiting_askers::entry::~entry() {
  std::lock_guard guard{all_.lock_};
  if (prev_ != nullptr)
    prev_->next_ = next_;
  else if (all_.first_ == this)
    all_.first_ = next_;
  if (next_ != nullptr) next_->prev_ = prev_;
  if (all_.closed_ && all_.first_ == nullptr) all_.left_.notify_all();
}

// An asker whose slot settled returns at once, so the wait is short.
void waiting_askers::close() noexcept {
  std::unique_lock guard{lock_};
  closed_ = true;
  for (entry* e = first_; e != nullptr; e = e->next_) e->slot_.fail_unanswered();
  left_.wait(guard, [this] { return first_ == nullptr; });
}

}  // namespace tact::detail
