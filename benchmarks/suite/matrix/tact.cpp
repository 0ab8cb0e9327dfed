// matrix multiply, tact (Cforall thesis, "Matrix Multiply"): Z = X * Y for n x n
// matrices with one actor per row of X, each sent a message with what it
// needs to compute its row of Z (matrix.hpp has the arithmetic, shared with
// caf.cpp). Nearly all the time is computation, so this measures how well
// the engine keeps its workers busy with a few large messages rather than
// its send path. The thesis multiplies 3072 x 3072; the default is smaller.
//
// Parameters (--NAME=VALUE; full default, --quick default):
//   size   n, the matrices' side, 1 to 20,000       1,536      256
// Messages: n (ns_per_msg is the time per row).
//
// Timed: creating the row actors, sending every row, until the system is
// quiescent. Checked: every row of Z (Freivalds, see matrix.hpp), and the
// system's actor and delivery counts.
#include <cstdint>
#include <string>
#include <vector>

#include <tact/tact.hpp>

#include "matrix.hpp"
#include "suite.hpp"

namespace {

// What a row actor needs: the product and its row. Owned by main.
struct row_work : tact::message {
  suite::matrix::product* product = nullptr;
  std::uint32_t row = 0;
};

// Computes the one row it is sent, then deletes itself.
struct row_actor : tact::actor {
  tact::allocation receive(row_work& w) {
    w.product->multiply_row(w.row);
    return Delete;
  }
};

}  // namespace

int main(int argc, char** argv) {
  suite::options o{argc, argv};
  suite::matrix::product product{static_cast<std::uint32_t>(o.param("size", 1'536, 256))};
  const std::uint32_t n = product.size();
  std::vector<row_work> work(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    work[i].product = &product;
    work[i].row = i;
  }

  tact::actor_system system{{.workers = o.threads()}};
  const double secs = suite::seconds([&] {
    for (row_work& w : work) system.spawn<row_actor>() | w;
    system.await_quiescence();
  });

  const tact::worker_stats totals = system.stats().total;
  suite::check(totals.actors_created == n && totals.actors_finished == n &&
                   totals.messages_processed == n,
               "the system created " + std::to_string(totals.actors_created) + ", finished " +
                   std::to_string(totals.actors_finished) + " and delivered " +
                   std::to_string(totals.messages_processed) + ", expected " +
                   std::to_string(n) + " of each");
  product.check();
  system.stop();
  suite::report(o, "matrix", "tact", secs, n);
}
