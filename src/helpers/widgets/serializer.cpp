#include <tact/widgets/serializer.hpp>

#include <memory>
#include <optional>
#include <utility>

#include <tact/detail/widgets.hpp>
#include <tact/tx/failure.hpp>
#include <tact/tx/message.hpp>
#include <tact/tx/transaction.hpp>

#include "helpers/widgets/gate.hpp"

namespace tact::widgets {

namespace {

// A request held while the service is busy: a copy, since the serializer's
// own message is gone once its handler returns.
using held = std::shared_ptr<const tx::message>;

held hold(const tx::message& request) {
  detail::customer_of(request, "widgets::serializer");  // refused now, not when its turn comes
  return held{tx::message_access::copy(request), [](const tx::message* m) {
                tx::message_access::destroy(const_cast<tx::message*>(m));  // NOLINT: owned copy
              }};
}

// The waiting requests, oldest first, as an immutable queue: a behaviour
// is immutable, so each become gets the queue with one request more or
// less, and shares the rest with the queue before. Two lists, the front
// oldest-first and the back newest-first; the front is refilled by
// reversing the back when it runs out. The serializer runs one message at
// a time and each queue is used once, so that reversal costs O(1) per
// request, amortized.
class waiting {
 public:
  waiting() noexcept = default;

  bool empty() const noexcept { return front_ == nullptr && back_ == nullptr; }

  waiting push(held request) const {
    return waiting{front_, std::make_shared<node>(std::move(request), back_)};
  }
  // The oldest request, and the queue without it. Precondition: !empty().
  std::pair<held, waiting> pop() const {
    std::shared_ptr<const node> front = front_;
    std::shared_ptr<const node> back = back_;
    if (front == nullptr) {
      for (const node* n = back.get(); n != nullptr; n = n->next.get())
        front = std::make_shared<node>(n->item, std::move(front));
      back = nullptr;
    }
    return {front->item, waiting{front->next, std::move(back)}};
  }

 private:
  struct node {
    node(held i, std::shared_ptr<const node> n) noexcept : item{std::move(i)}, next{std::move(n)} {}
    node(const node&) = delete;
    node& operator=(const node&) = delete;
    ~node() { detail::free_rest(next); }
    held item;
    std::shared_ptr<const node> next;
  };
  waiting(std::shared_ptr<const node> front, std::shared_ptr<const node> back) noexcept
      : front_{std::move(front)}, back_{std::move(back)} {}

  std::shared_ptr<const node> front_;  // oldest first
  std::shared_ptr<const node> back_;   // newest first
};

// Sent by a request's tag to the serializer once the request is answered.
struct answered {};

// The request goes in: to the service, with a tag as its customer that
// passes the answer on and tells the serializer to admit the next. False
// if it could not be sent (copying it threw, or memory ran out): its
// customer is then told with a failure instead, and the serializer must
// not wait for an answer.
bool admit(const tx::actor_ref& service, const tx::message& request) {
  const tx::actor_ref& customer = detail::customer_of(request, "widgets::serializer");
  // The tag tells the serializer from an on_commit action, which runs after
  // the tag's commit has posted the answer: a send from the cleanup itself
  // would be staged, and so posted, before it, and the serializer could
  // admit the next request and that one's answer reach the same customer
  // first. Posted in that order, answers to a customer whose messages all
  // go to one queue (a serialized one) keep the order of its requests.
  try {
    tx::forward(service, request,
                detail::make_gate(
                    customer,
                    [serializer = tx::self()] {
                      tx::on_commit([serializer] { tx::send(serializer, answered{}); });
                    },
                    std::nullopt));
    return true;
  } catch (...) {
    tx::send(customer, tx::failure{std::current_exception()});
    return false;
  }
}

tx::behaviour idle(tx::actor_ref service);

tx::behaviour busy(tx::actor_ref service, waiting queue) {
  return {[service, queue](answered) {
            for (waiting rest = queue; !rest.empty();) {
              auto [next, after] = rest.pop();
              rest = std::move(after);
              if (admit(service, *next)) {
                tx::become(busy(service, std::move(rest)));
                return;
              }
            }
            tx::become(idle(service));
          },
          [service, queue](const tx::message& request) {
            tx::become(busy(service, queue.push(hold(request))));
          }};
}

tx::behaviour idle(tx::actor_ref service) {
  return {[](answered) {},  // from no request of ours: cannot happen
          [service](const tx::message& request) {
            if (admit(service, request)) tx::become(busy(service, {}));
          }};
}

}  // namespace

tx::actor_ref serializer(const tx::actor_ref& service) {
  detail::require(service, "tact: widgets::serializer needs a service");
  // Serialized: it becomes on every message, so in parallel it would only
  // collide.
  return detail::spawn_in(detail::system_of(service), idle(service), false, tx::mode::serialized);
}

}  // namespace tact::widgets
