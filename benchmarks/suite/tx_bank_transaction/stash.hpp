#pragma once

// A first-in, first-out queue that is a value, for the state a
// transactional behaviour captures: push and pop leave the queue they are
// called on as it was and return a new one, sharing what is unchanged.
// Two immutable lists (Okasaki's batched queue): push conses onto `back_`,
// pop takes from `front_`, and an empty `front_` is refilled by reversing
// `back_`. Each element is reversed at most once while every version is
// used once (a become replaces the state it was built from), so both cost
// O(1) amortised and one allocation per element, where copying a
// std::deque into each new behaviour would cost O(length) per message.
#include <memory>
#include <utility>

namespace suite::bank {

template <class T>
class stash {
 public:
  stash() = default;

  bool empty() const noexcept { return front_ == nullptr && back_ == nullptr; }

  stash push(T value) const {
    return stash{front_, std::make_shared<const node>(node{std::move(value), back_})};
  }

  // The oldest element and the queue without it. Precondition: !empty().
  std::pair<T, stash> pop() const {
    list front = front_;
    list back = back_;
    if (front == nullptr) {
      for (const node* n = back.get(); n != nullptr; n = n->next.get())
        front = std::make_shared<const node>(node{n->value, std::move(front)});
      back = nullptr;
    }
    return {front->value, stash{front->next, std::move(back)}};
  }

 private:
  struct node;
  using list = std::shared_ptr<const node>;
  struct node {
    T value;
    list next;
  };

  stash(list front, list back) : front_{std::move(front)}, back_{std::move(back)} {}

  list front_;  // oldest first
  list back_;   // newest first
};

}  // namespace suite::bank
