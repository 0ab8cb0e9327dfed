// fibonacci for CAF 0.17: the same recursion, actor counts and message
// counts as tact.cpp (which documents the workload), written as CAF
// event-based actors.
#include <cstdint>
#include <string>

#include <caf/all.hpp>

#include "params.hpp"
#include "suite.hpp"

namespace {

using request_atom = caf::atom_constant<caf::atom("request")>;
using response_atom = caf::atom_constant<caf::atom("response")>;

struct fibonacci_state {
  std::int64_t result = 0;
  int answered = 0;
};

// A child answers its parent; the root (no parent) leaves its result in
// *root_result for main.
caf::behavior fibonacci_actor(caf::stateful_actor<fibonacci_state>* self, caf::actor parent,
                              std::int64_t* root_result) {
  auto answer = [=](std::int64_t value) {
    if (parent)
      self->send(parent, response_atom::value, value);
    else
      *root_result = value;
    self->quit();
  };
  return {
      [=](request_atom, std::int64_t n) {
        if (n <= 2) {
          answer(1);
          return;
        }
        const auto me = caf::actor_cast<caf::actor>(self);
        std::int64_t* const no_result = nullptr;  // children answer their parent
        self->send(self->spawn(fibonacci_actor, me, no_result), request_atom::value, n - 1);
        self->send(self->spawn(fibonacci_actor, me, no_result), request_atom::value, n - 2);
      },
      [=](response_atom, std::int64_t value) {
        self->state.result += value;
        if (++self->state.answered == 2) answer(self->state.result);
      },
  };
}

using suite::fibonacci::fibonacci;

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  const std::int64_t n = suite::fibonacci::index(o);

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<std::size_t>(o.threads()));
  caf::actor_system system{cfg};
  std::int64_t result = 0;
  auto root = system.spawn(fibonacci_actor, caf::actor{}, &result);
  const double secs = suite::seconds([&] {
    caf::anon_send(root, request_atom::value, std::int64_t{n});
    system.await_all_actors_done();
  });

  suite::check(result == fibonacci(n), "fib(" + std::to_string(n) + ") came out as " +
                                           std::to_string(result) + ", not " +
                                           std::to_string(fibonacci(n)));
  suite::report(o, suite::bench_name("fibonacci"), "caf", secs, suite::fibonacci::messages(n));
}
