// The Prometheus metrics of the gateway (`/metrics`): every family of
// network_metrics.h then blocks_metrics.h, each with its HELP and TYPE
// once and then the samples of every bound network, as the shared tables
// are at the moment of the call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/network.h"

namespace solgate {

// Prometheus text exposition format 0.0.4, metrics prefixed solgate_.
// Networks not bound to their zone yet are left out (their families'
// HELP and TYPE lines stay). Ages are against `now_mono_ms`.
std::string RenderMetrics(const std::vector<const Network*>& networks,
                          int64_t now_mono_ms);

}  // namespace solgate
