#pragma once

#include <vector>

#include <prometheus/metric_family.h>

#include <tact/stats.hpp>

namespace tact::detail::metrics {

// A snapshot as the metric families a scrape shows: their names, help,
// types and labels (see include/tact/metrics.hpp).
std::vector<prometheus::MetricFamily> families(const system_stats& s);

}  // namespace tact::detail::metrics
