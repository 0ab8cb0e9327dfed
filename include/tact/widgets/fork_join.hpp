#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <tact/detail/widgets.hpp>
#include <tact/tx/actor_ref.hpp>
#include <tact/tx/behaviour.hpp>
#include <tact/tx/failure.hpp>
#include <tact/tx/message.hpp>
#include <tact/tx/transaction.hpp>
#include <tact/widgets/once.hpp>

namespace tact::widgets::detail {

template <class R>
struct joined {
  std::size_t index;
  R value;
};

// The replies received so far: an immutable list, newest first, shared
// between the joiner's successive behaviours (each become adds one node).
template <class R>
struct reply_node {
  joined<R> reply;
  std::shared_ptr<const reply_node> next;  // older
  ~reply_node() { free_rest(next); }
};

template <class R>
tx::behaviour joiner(tx::actor_ref customer, std::size_t expected,
                     std::shared_ptr<const reply_node<R>> got, std::size_t count) {
  return {[=](const joined<R>& j) {
            std::shared_ptr<const reply_node<R>> now =
                std::make_shared<reply_node<R>>(reply_node<R>{j, got});
            if (count + 1 < expected) {
              tx::become(joiner<R>(customer, expected, std::move(now), count + 1));
              return;
            }
            std::vector<const R*> slots(expected, nullptr);
            for (const reply_node<R>* n = now.get(); n != nullptr; n = n->next.get())
              slots[n->reply.index] = &n->reply.value;
            std::vector<R> in_order;
            in_order.reserve(expected);
            for (const R* r : slots) in_order.push_back(*r);
            tx::send(customer, std::move(in_order));
            tx::become(sink());
          },
          [customer](const tx::failure& f) {
            tx::send(customer, f);
            tx::become(sink());
          }};
}

// The customer handed to the index-th service: passes its first answer on
// to the joiner, labelled if it is a reply, as a failure if it is anything
// else.
template <class R>
tx::behaviour join_tag(tx::actor_ref joiner, std::size_t index) {
  return {[joiner, index](const R& value) {
            tx::send(joiner, joined<R>{index, value});
            tx::become(sink());
          },
          [joiner](const tx::failure& f) {
            tx::send(joiner, f);
            tx::become(sink());
          },
          [joiner](const tx::message& other) {  // timed_out, a reply of another type
            try {
              throw std::logic_error{"tact: widgets::join expected one reply element, got " +
                                     other.describe()};
            } catch (...) {
              tx::send(joiner, tx::failure{std::current_exception()});
            }
            tx::become(sink());
          }};
}

}  // namespace tact::widgets::detail

namespace tact::widgets {

// Join: `n` customers to hand out with `n` requests; once each has had
// its reply (one element of type R), `customer` gets one std::vector<R>
// of them, in the order of the customers, whatever order they came in.
// If a request fails (its handler threw or matched nothing), `customer`
// gets that tx::failure instead, once, and the other replies are dropped.
// A later reply to the same customer is dropped.
//
//   auto parts = tact::widgets::join<long>(tx::self(), shards.size());
//   for (std::size_t i = 0; i < shards.size(); ++i) tx::send(shards[i], parts[i], count{});
//   // the actor then gets a std::vector<long>, shard by shard
//
// Costs an actor per customer plus one; each reply allocates one list
// node. std::invalid_argument for an empty customer or n == 0. Any thread.
template <class R>
std::vector<tx::actor_ref> join(const tx::actor_ref& customer, std::size_t n) {
  detail::require(customer, "tact: widgets::join needs a customer");
  if (n == 0) throw std::invalid_argument{"tact: widgets::join needs at least one reply"};
  actor_system& system = detail::system_of(customer);
  const tx::actor_ref collector = detail::spawn_in(
      system, detail::joiner<R>(customer, n, nullptr, 0), false, tx::mode::serialized);
  std::vector<tx::actor_ref> tags;
  tags.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    tags.push_back(
        detail::spawn_in(system, detail::join_tag<R>(collector, i), true, tx::mode::serialized));
  return tags;
}

// Fork/join: an actor that sends each request (customer first) to every
// one of `services` and answers the customer with a std::vector<R> of
// their replies in the order of `services` (see join for failures).
//
//   auto totals = tact::widgets::fork_join<long>({east, west, north});
//   tx::send(totals, tx::self(), count{});
//
// A request with no customer first is refused (its handler throws
// std::invalid_argument and rolls back). std::invalid_argument for an
// empty list or an empty service. Any thread.
template <class R>
tx::actor_ref fork_join(std::vector<tx::actor_ref> services) {
  if (services.empty()) throw std::invalid_argument{"tact: widgets::fork_join needs services"};
  for (const tx::actor_ref& s : services)
    detail::require(s, "tact: widgets::fork_join was given an empty service");
  actor_system& system = detail::system_of(services.front());
  return detail::spawn_in(
      system, {[services = std::move(services)](const tx::message& request) {
        const tx::actor_ref& customer = detail::customer_of(request, "widgets::fork_join");
        const std::vector<tx::actor_ref> tags = join<R>(customer, services.size());
        for (std::size_t i = 0; i < services.size(); ++i)
          tx::forward(services[i], request, tags[i]);
      }},
      false);
}

}  // namespace tact::widgets
