// One family of /metrics: its name, type and help text, and the writer of
// one network's samples of it (network_metrics.h, blocks_metrics.h).
//
// Label values come from configuration (network, upstream, plan, peer)
// or from fixed sets (method, axis, source), never from what RPC clients
// send, so a family has a bounded number of samples per network. Two are
// bounded otherwise: which lanes exist is up to the selectors requests
// send (at most kMaxLanes per network, named from configured upstream
// ids), and `reason` is the text of a cordon (the operator's, or the
// poller's with a lag or genesis hash in it), one sample per upstream.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "routing/network.h"

namespace solgate {

// Appends the samples of family `name` for `network` (possibly none);
// `now_ms` is the shared tables' monotonic clock.
using SampleWriter =
    std::function<void(std::string& out, std::string_view name,
                       const Network& network, int64_t now_ms)>;

struct MetricFamily {
    std::string_view name;
    std::string_view type;   // "gauge" or "counter"
    std::string_view help;
    SampleWriter samples;
};

}  // namespace solgate
