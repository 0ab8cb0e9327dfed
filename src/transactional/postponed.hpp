#pragma once

#include <atomic>
#include <mutex>
#include <utility>

#include <tact/detail/envelope.hpp>
#include <tact/tx/message.hpp>

#include "executor/seam.hpp"

namespace tact::detail::tx {

// Transactional messages that found no memory where their sender cannot be
// told: a commit's sends, once its become is installed, whose queue could
// not grow. They wait here, in send order, linked through their own chain
// field (so keeping one needs no memory), until a worker queues them
// again (see postponed_work in seam.hpp).
//
// While any wait, every transactional post joins them instead of being
// queued, so nothing overtakes them: a sender's later sends stay behind
// its earlier ones, and an actor's commits stay in order. Why a post that
// reads `any() == false` may go straight to its queue: the sender's
// earlier kept sends were all queued before the retry that emptied the
// list stored false (under the lock), and a sender reads the flag after
// its own earlier commit (in program order, or after the slot its become
// installed), so it reads true until they are queued.
class postponed_sends {
 public:
  postponed_sends() = default;
  postponed_sends(const postponed_sends&) = delete;
  postponed_sends& operator=(const postponed_sends&) = delete;

  bool any() const noexcept { return any_.load(std::memory_order_seq_cst); }

  // Keeps m (addressed, out of any chain) after the ones kept already.
  // False once refuse_all() has run: m is then still the caller's.
  bool keep(executor& ex, ::tact::tx::message* m) noexcept {
    std::lock_guard guard{lock_};
    if (closed_) return false;
    if (first_ == nullptr) {
      postponed_begins(ex);
      any_.store(true, std::memory_order_seq_cst);
    }
    *last_ = m;
    last_ = &::tact::tx::message_access::next(*m);
    return true;
  }

  // Offers the kept messages, in order, to `post(m)`, which queues m (or
  // disposes of it, refused) and returns what it did, until one finds no
  // memory again. True if any left the list.
  template <class Post>
  bool retry(executor& ex, Post&& post) noexcept {
    std::lock_guard guard{lock_};
    bool moved = false;
    while (first_ != nullptr) {
      ::tact::tx::message* m = first_;
      ::tact::tx::message* const next =
          std::exchange(::tact::tx::message_access::next(*m), nullptr);
      if (post(m) == post_outcome::no_memory) {
        ::tact::tx::message_access::next(*m) = next;
        break;
      }
      first_ = next;
      moved = true;
    }
    if (first_ == nullptr) settle(ex);
    return moved;
  }

  // At stop, once no worker runs: hands each kept message to `refuse(m)`,
  // and keeps nothing more.
  template <class Refuse>
  void refuse_all(executor& ex, Refuse&& refuse) noexcept {
    std::lock_guard guard{lock_};
    closed_ = true;
    while (::tact::tx::message* m = first_) {
      first_ = std::exchange(::tact::tx::message_access::next(*m), nullptr);
      refuse(m);
    }
    settle(ex);
  }

 private:
  // The list is empty.
  void settle(executor& ex) noexcept {
    last_ = &first_;
    if (!any_.load(std::memory_order_relaxed)) return;
    any_.store(false, std::memory_order_seq_cst);
    postponed_ends(ex);
  }

  std::mutex lock_;
  ::tact::tx::message* first_ = nullptr;  // guarded by lock_, as the rest
  ::tact::tx::message** last_ = &first_;
  bool closed_ = false;
  std::atomic<bool> any_{false};
};

}  // namespace tact::detail::tx
