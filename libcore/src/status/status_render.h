// The operator's views of the gateway: the JSON document of
// `GET /solgate/state` and the Prometheus metrics. Both read the shared
// tables of the networks as they are at the moment of the call; networks
// not bound to their zone yet are left out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/network.h"

namespace solgate {

// JSON with a stable key order, for operators and scripts. Times: lease
// expiry and traffic ages against `now_mono_ms` (the clock the shared
// table uses), cordon timestamps as UTC ISO-8601 ("generated_at" is
// `now_wall_ms`).
std::string RenderState(const std::vector<const Network*>& networks,
                        int64_t now_mono_ms, int64_t now_wall_ms);

// Prometheus text exposition format 0.0.4, metrics prefixed solgate_.
std::string RenderMetrics(const std::vector<const Network*>& networks,
                          int64_t now_mono_ms);

}  // namespace solgate
