// The status page's chart of one upstream (status_page.h): its slot lag
// behind the network and its ingestion lag over the last 15 minutes, from
// the history the poller keeps (slots/upstream_history.h), as inline SVG
// (no script, font or stylesheet of its own beyond the page's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slots/upstream_history.h"

namespace solgate {

struct LagChartLines {
    uint64_t max_slot_lag = 0;         // dashed when in range; 0: none
    uint64_t ingestion_threshold = 0;  // dashed when in range; 0: none
};

// An <svg class="chart"> of `samples` (kHistorySteps of them, oldest
// first, as ReadLags returns them): one path per series, broken where a
// step has no sample (a lone sample is a dot), the y axis from 0 to a
// round number above the highest lag. Without any sample it says so
// instead. `label` (escaped here) names the upstream for screen readers.
void AppendLagChart(std::string& out, std::string_view label,
                    const std::vector<std::optional<LagSample>>& samples,
                    const LagChartLines& lines);

// The axis top for a highest value: 10, 20, 50, 100, 200, 500, ...
uint64_t ChartCeiling(uint64_t highest);

}  // namespace solgate
