// The families of /metrics about a network's Cube Runner, in the order
// they are exposed: labels network, source, plan and peer. A network
// without a bound Cube Runner has no samples of them.
#pragma once

#include <vector>

#include "status/metric_family.h"

namespace solgate {

const std::vector<MetricFamily>& BlocksFamilies();

}  // namespace solgate
