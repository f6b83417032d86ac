// The families of /metrics about networks and their upstreams, in the
// order they are exposed: labels network, upstream, method, reason, lane
// and axis.
#pragma once

#include <vector>

#include "status/metric_family.h"

namespace solgate {

const std::vector<MetricFamily>& NetworkFamilies();

}  // namespace solgate
