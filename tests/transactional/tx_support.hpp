#pragma once

#include <mutex>
#include <utility>
#include <vector>

#include <tact/transactional.hpp>

namespace tact::test {

// What a probe actor received, from any worker; read on the test thread
// once the system is quiescent (Catch2 assertions are not thread-safe).
template <class T>
class record {
 public:
  void add(T value) {
    std::lock_guard guard{mutex_};
    values_.push_back(std::move(value));
  }
  std::vector<T> values() const {
    std::lock_guard guard{mutex_};
    return values_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<T> values_;
};

// The counter of xTActors' examples: a become per increment; a get is
// answered to the customer that comes first.
struct increment {};
struct get {};

inline tx::behaviour counter(int n) {
  return {[n](increment) { tx::become(counter(n + 1)); },
          [n](const tx::actor_ref& customer, get) { tx::send(customer, n); }};
}

// A transactional actor at the edge of the test: records every T it gets.
// (Its handler has a side effect and no become, which the model allows.)
template <class T>
tx::behaviour recorder(record<T>& into) {
  return {[&into](const T& value) { into.add(value); }};
}

}  // namespace tact::test
