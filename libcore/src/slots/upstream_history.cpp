#include "slots/upstream_history.h"

#include <algorithm>

namespace solgate {
namespace {

// A word's top 24 bits are its step + 1 (0: never written), which wraps
// after eight years of uptime.
constexpr int kTagShift = 40;
constexpr uint64_t kTagMask = (uint64_t{1} << 24) - 1;

uint64_t TagOf(int64_t step) {
    return (static_cast<uint64_t>(step) + 1) & kTagMask;
}
uint64_t WordTag(uint64_t word) { return word >> kTagShift; }

size_t RingIndex(int64_t step, size_t size) {
    return static_cast<size_t>(step % static_cast<int64_t>(size));
}

// lag sample: tag | slot lag (20 bits) | ingestion lag (20 bits)
uint64_t PackLags(uint64_t tag, uint64_t slot_lag, uint64_t ingestion_lag) {
    return tag << kTagShift |
           std::min(slot_lag, kHistoryLagMax) << 20 |
           std::min(ingestion_lag, kHistoryLagMax);
}
uint64_t SlotLagOf(uint64_t word) { return (word >> 20) & kHistoryLagMax; }
uint64_t IngestionLagOf(uint64_t word) { return word & kHistoryLagMax; }

// count mark: tag | ms into the step (14 bits) | count mod 2^26; a
// minute's difference of a counter fits 26 bits up to a million a second.
constexpr int kOffsetShift = 26;
constexpr uint64_t kOffsetMask = (uint64_t{1} << 14) - 1;
constexpr uint64_t kCountMask = (uint64_t{1} << 26) - 1;
static_assert(kHistoryStepMs <= static_cast<int64_t>(kOffsetMask));

uint64_t PackMark(uint64_t tag, int64_t offset_ms, uint64_t count) {
    return tag << kTagShift |
           (static_cast<uint64_t>(offset_ms) & kOffsetMask) << kOffsetShift |
           (count & kCountMask);
}

int64_t MarkTime(int64_t step, uint64_t word) {
    return step * kHistoryStepMs +
           static_cast<int64_t>((word >> kOffsetShift) & kOffsetMask);
}

// How far a counter moved since its mark (modulo the mark's 26 bits).
uint64_t CountSince(uint64_t mark, uint64_t count_now) {
    return (count_now - (mark & kCountMask)) & kCountMask;
}

}  // namespace

void RecordLags(UpstreamHistory& history, int64_t now_ms, uint64_t slot_lag,
                uint64_t ingestion_lag) {
    int64_t step = HistoryStep(now_ms);
    uint64_t tag = TagOf(step);
    std::atomic<uint64_t>& word = history.lags[RingIndex(step, kHistorySteps)];
    uint64_t current = word.load(std::memory_order_relaxed);
    for (;;) {
        uint64_t next =
            WordTag(current) == tag
                ? PackLags(tag, std::max(SlotLagOf(current), slot_lag),
                           std::max(IngestionLagOf(current), ingestion_lag))
                : PackLags(tag, slot_lag, ingestion_lag);
        if (next == current ||
            word.compare_exchange_weak(current, next,
                                       std::memory_order_relaxed)) {
            return;
        }
    }
}

std::vector<std::optional<LagSample>> ReadLags(const UpstreamHistory& history,
                                               int64_t now_ms) {
    std::vector<std::optional<LagSample>> samples(kHistorySteps);
    int64_t last = HistoryStep(now_ms);
    for (size_t k = 0; k < kHistorySteps; k++) {
        int64_t step = last - static_cast<int64_t>(kHistorySteps - 1 - k);
        if (step < 0) {
            continue;
        }
        uint64_t word = history.lags[RingIndex(step, kHistorySteps)].load(
            std::memory_order_relaxed);
        if (WordTag(word) == TagOf(step)) {
            samples[k] = LagSample{step, SlotLagOf(word), IngestionLagOf(word)};
        }
    }
    return samples;
}

bool NeedsCountMark(const UpstreamHistory& history, int64_t now_ms) {
    int64_t step = HistoryStep(now_ms);
    uint64_t word = history.requests[RingIndex(step, kRateMarks)].load(
        std::memory_order_relaxed);
    return WordTag(word) != TagOf(step);
}

void MarkCounts(UpstreamHistory& history, int64_t now_ms, uint64_t requests,
                uint64_t errors) {
    int64_t step = HistoryStep(now_ms);
    uint64_t tag = TagOf(step);
    int64_t offset = now_ms - step * kHistoryStepMs;
    size_t at = RingIndex(step, kRateMarks);
    for (auto* ring : {&history.requests, &history.errors}) {
        std::atomic<uint64_t>& word = (*ring)[at];
        uint64_t current = word.load(std::memory_order_relaxed);
        uint64_t count = ring == &history.requests ? requests : errors;
        while (WordTag(current) != tag &&
               !word.compare_exchange_weak(current, PackMark(tag, offset, count),
                                           std::memory_order_relaxed)) {
        }
    }
}

std::optional<TrafficRates> RatesSince(const UpstreamHistory& history,
                                       int64_t now_ms, uint64_t requests_now,
                                       uint64_t errors_now) {
    int64_t last = HistoryStep(now_ms);
    for (int64_t step = std::max<int64_t>(0, last - (kRateMarks - 1));
         step <= last; step++) {
        size_t at = RingIndex(step, kRateMarks);
        uint64_t requests = history.requests[at].load(std::memory_order_relaxed);
        uint64_t errors = history.errors[at].load(std::memory_order_relaxed);
        if (WordTag(requests) != TagOf(step) || WordTag(errors) != TagOf(step)) {
            continue;
        }
        int64_t window = now_ms - MarkTime(step, requests);
        if (window < kMinRateWindowMs) {
            return std::nullopt;  // the later marks are younger still
        }
        double seconds = static_cast<double>(window) / 1000.0;
        TrafficRates rates;
        rates.requests_per_s = static_cast<double>(CountSince(requests,
                                                              requests_now)) /
                               seconds;
        rates.errors_per_s =
            static_cast<double>(CountSince(errors, errors_now)) / seconds;
        rates.window_ms = window;
        return rates;
    }
    return std::nullopt;
}

}  // namespace solgate
