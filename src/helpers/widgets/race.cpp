#include <tact/widgets/race.hpp>

#include <cstddef>
#include <stdexcept>
#include <utility>

#include <tact/detail/widgets.hpp>
#include <tact/tx/failure.hpp>
#include <tact/tx/message.hpp>
#include <tact/tx/transaction.hpp>
#include <tact/widgets/once.hpp>

namespace tact::widgets {

namespace {

// The customer shared by the racers: the first answer that is not a
// failure goes on; a failure counts down, and the last racer's failure
// goes on when every one has failed.
tx::behaviour finish_line(tx::actor_ref customer, std::size_t racing) {
  return {[customer, racing](const tx::failure& f) {
            if (racing > 1) {
              tx::become(finish_line(customer, racing - 1));
              return;
            }
            tx::send(customer, f);
            tx::become(sink());
          },
          [customer](const tx::message& answer) {
            tx::forward(customer, answer);
            tx::become(sink());
          }};
}

}  // namespace

tx::actor_ref race(std::vector<tx::actor_ref> services) {
  if (services.empty()) throw std::invalid_argument{"tact: widgets::race needs services"};
  for (const tx::actor_ref& s : services)
    detail::require(s, "tact: widgets::race was given an empty service");
  actor_system& system = detail::system_of(services.front());
  return detail::spawn_in(
      system, {[services = std::move(services)](const tx::message& request) {
        const tx::actor_ref& customer = detail::customer_of(request, "widgets::race");
        const tx::actor_ref line = detail::spawn_in(detail::system_of(customer),
                                                    finish_line(customer, services.size()), true);
        for (const tx::actor_ref& s : services) tx::forward(s, request, line);
      }},
      false);
}

}  // namespace tact::widgets
