#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include <tact/metrics.hpp>

#include "integration/metrics/families.hpp"

// prometheus-cpp's pull exposer (an HTTP server, civetweb) with one
// collectable that reads the system's statistics at each scrape.
namespace tact {
namespace {

class system_collectable final : public prometheus::Collectable {
 public:
  explicit system_collectable(const actor_system& system) : system_{system} {}
  // On the exposer's threads, one scrape each: stats() is safe from any thread.
  std::vector<prometheus::MetricFamily> Collect() const override {
    return detail::metrics::families(system_.stats());
  }

 private:
  const actor_system& system_;
};

}  // namespace

// The collectable outlives the server, whose destruction ends the scrapes.
struct metrics_exposer::server {
  server(const actor_system& system, const metrics_config& config)
      : collectable{std::make_shared<system_collectable>(system)}, http{listen(config.address)} {
    http->RegisterCollectable(collectable, config.path);
    const std::vector<int> ports = http->GetListeningPorts();
    port = ports.empty() ? 0 : static_cast<std::uint16_t>(ports.front());
  }

  static std::unique_ptr<prometheus::Exposer> listen(const std::string& address) {
    try {
      return std::make_unique<prometheus::Exposer>(address);
    } catch (const std::exception& e) {
      throw std::runtime_error{"tact: metrics_exposer cannot listen on " + address + ": " +
                               e.what()};
    }
  }

  std::shared_ptr<system_collectable> collectable;
  std::unique_ptr<prometheus::Exposer> http;
  std::uint16_t port = 0;
};

metrics_exposer::metrics_exposer(const actor_system& system, const metrics_config& config)
    : server_{std::make_unique<server>(system, config)} {}

metrics_exposer::~metrics_exposer() = default;

std::uint16_t metrics_exposer::port() const noexcept { return server_->port; }

}  // namespace tact
