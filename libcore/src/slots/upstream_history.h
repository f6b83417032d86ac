// An upstream's last 15 minutes in the network's zone (UpstreamHistory,
// shared_state.h), for the status page: its slot lag and ingestion lag per
// kHistoryStepMs step, and the request and error counts at the start of
// the last few steps (for rates). The poller thread of the process holding
// the upstream's poll lease writes it every tick; any worker reads it.
//
// Lock-free, one word per sample: each word carries the step it belongs
// to, so a reader never mixes two steps, and a step no tick reached (nginx
// was stopped, the record was free) reads as a gap instead of the value
// one lap of the ring earlier.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "slots/shared_state.h"

namespace solgate {

// Lags are kept to 20 bits: a lag of more (about five days of slots)
// reads as this.
constexpr uint64_t kHistoryLagMax = (uint64_t{1} << 20) - 1;
// A rate over less than this would be noise.
constexpr int64_t kMinRateWindowMs = 5000;

// The step a monotonic time falls in.
inline int64_t HistoryStep(int64_t mono_ms) {
    return mono_ms < 0 ? 0 : mono_ms / kHistoryStepMs;
}

struct LagSample {
    int64_t step = 0;
    uint64_t slot_lag = 0;       // the highest seen in the step
    uint64_t ingestion_lag = 0;  // the highest seen in the step
};

// Raises the sample of now's step to these lags, or starts it with them
// (the highest of each in a step is kept: a spike between two page loads
// still shows).
void RecordLags(UpstreamHistory& history, int64_t now_ms, uint64_t slot_lag,
                uint64_t ingestion_lag);

// The kHistorySteps steps up to now's (which is still filling), oldest
// first: nullopt where there is no sample.
std::vector<std::optional<LagSample>> ReadLags(const UpstreamHistory& history,
                                               int64_t now_ms);

// Whether now's step has no count mark yet (the poller then sums the
// counts, which costs a walk of the request table).
bool NeedsCountMark(const UpstreamHistory& history, int64_t now_ms);
// Marks the cumulative counts at now, once per step (the first wins).
void MarkCounts(UpstreamHistory& history, int64_t now_ms, uint64_t requests,
                uint64_t errors);

struct TrafficRates {
    double requests_per_s = 0;
    double errors_per_s = 0;
    int64_t window_ms = 0;  // what they were averaged over
};

// The rates from the oldest mark of the last kRateMarks steps to now's
// counts (a minute or a little more); nullopt while no mark is at least
// kMinRateWindowMs old.
std::optional<TrafficRates> RatesSince(const UpstreamHistory& history,
                                       int64_t now_ms, uint64_t requests_now,
                                       uint64_t errors_now);

}  // namespace solgate
