#pragma once

#include <exception>

namespace tact::tx {

// What an actor that asked to hear of failures (the reply actor of
// tx::ask, for one) is sent when a message naming it as customer (first
// element) rolls back because its handler threw.
struct failure {
  std::exception_ptr error;
};

}  // namespace tact::tx
