// The operator's views of the gateway, for the C ABI (capi/): the JSON
// document of `GET /solgate/state` (state_json.h) and the Prometheus
// metrics. Both read the shared tables of the networks as they are at the
// moment of the call; networks not bound to their zone yet are left out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/network.h"
#include "status/state_json.h"

namespace solgate {

// Prometheus text exposition format 0.0.4, metrics prefixed solgate_.
std::string RenderMetrics(const std::vector<const Network*>& networks,
                          int64_t now_mono_ms);

}  // namespace solgate
