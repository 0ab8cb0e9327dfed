// matrix multiply, CAF: the same workload as tact.cpp. One actor per row,
// spawned knowing the product; its message names its row. It computes the
// row, tells the main thread, and quits.
//
// Parameters: as tact.cpp (size).
#include <cstdint>
#include <vector>

#include <caf/all.hpp>

#include "matrix.hpp"
#include "suite.hpp"

namespace {

using row_atom = caf::atom_constant<caf::atom("row")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

caf::behavior row_actor(caf::event_based_actor* self, suite::matrix::product* product,
                        caf::actor done_to) {
  return {
      [=](row_atom, std::uint32_t row) {
        product->multiply_row(row);
        self->send(done_to, done_atom::value, row);
        self->quit();
      },
  };
}

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  suite::matrix::product product{static_cast<std::uint32_t>(o.param("size", 1'536, 256))};
  const std::uint32_t n = product.size();

  caf::actor_system_config cfg;
  cfg.set("scheduler.max-threads", static_cast<int>(o.threads()));
  caf::actor_system system{cfg};
  std::vector<bool> done(n, false);
  double secs = 0;
  {
    caf::scoped_actor main_actor{system};
    secs = suite::seconds([&] {
      for (std::uint32_t i = 0; i < n; ++i)
        main_actor->send(system.spawn(row_actor, &product, caf::actor{main_actor}),
                         row_atom::value, i);
      for (std::uint32_t i = 0; i < n; ++i)
        main_actor->receive([&](done_atom, std::uint32_t row) { done[row] = true; });
    });
  }
  system.await_all_actors_done();

  for (std::uint32_t i = 0; i < n; ++i) suite::check(done[i], "a row actor did not report");
  product.check();
  suite::report(o, "matrix", "caf", secs, n);
}
