#include "blocks/block_retention.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace solgate {

static uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

double DecayedScore(double score, int64_t score_ms, int64_t now_ms,
                    const RetentionPolicy& policy) {
    if (!(score > 0)) {
        return 0;   // negative and NaN alike
    }
    if (now_ms <= score_ms || !(policy.half_life_ms > 0)) {
        return score;
    }
    // The true difference fits in uint64_t whenever now_ms > score_ms.
    double dt = static_cast<double>(static_cast<uint64_t>(now_ms) -
                                    static_cast<uint64_t>(score_ms));
    return score * std::exp2(-dt / policy.half_life_ms);
}

double ScoreAfterRequest(double score, int64_t score_ms, int64_t now_ms,
                         const RetentionPolicy& policy) {
    return DecayedScore(score, score_ms, now_ms, policy) + 1.0;
}

bool IsProtected(const CachedBlockStat& entry, int64_t now_ms,
                 const RetentionPolicy& policy) {
    if (now_ms < entry.stored_ms) {
        return true;
    }
    uint64_t age = static_cast<uint64_t>(now_ms) -
                   static_cast<uint64_t>(entry.stored_ms);
    if (policy.min_hold_ms > 0 &&
        age < static_cast<uint64_t>(policy.min_hold_ms)) {
        return true;
    }
    return policy.hot_score > 0 &&
           DecayedScore(entry.score, entry.score_ms, now_ms, policy) >=
               policy.hot_score;
}

uint64_t EffectiveSlot(const CachedBlockStat& entry, int64_t now_ms,
                       const RetentionPolicy& policy) {
    double bonus = std::floor(
        DecayedScore(entry.score, entry.score_ms, now_ms, policy) *
        static_cast<double>(policy.slots_per_score));
    if (!(bonus > 0)) {
        return entry.slot;
    }
    // 2^64 as a double; anything at or above it saturates.
    if (bonus >= 18446744073709551616.0) {
        return UINT64_MAX;
    }
    return SaturatingAdd(entry.slot, static_cast<uint64_t>(bonus));
}

EvictionPlan PlanEvictions(const std::vector<CachedBlockStat>& entries,
                           uint64_t total_bytes, uint64_t incoming_bytes,
                           uint64_t max_bytes, int64_t now_ms,
                           const RetentionPolicy& policy) {
    EvictionPlan plan;
    plan.bytes_after = total_bytes;
    if (SaturatingAdd(total_bytes, incoming_bytes) <= max_bytes) {
        plan.fits = true;
        return plan;
    }
    double share = policy.low_watermark;
    if (!(share >= 0)) {
        share = share < 0 ? 0 : 1;   // NaN: no slack, evict to max
    } else if (share > 1) {
        share = 1;
    }
    double scaled = std::floor(share * static_cast<double>(max_bytes));
    uint64_t target = scaled >= static_cast<double>(max_bytes)
                          ? max_bytes
                          : static_cast<uint64_t>(scaled);

    struct Candidate {
        uint64_t effective_slot;
        int64_t stored_ms;
        size_t index;
    };
    std::vector<Candidate> candidates;
    for (size_t i = 0; i < entries.size(); i++) {
        if (!IsProtected(entries[i], now_ms, policy)) {
            candidates.push_back({EffectiveSlot(entries[i], now_ms, policy),
                                  entries[i].stored_ms, i});
        }
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const Candidate& a, const Candidate& b) {
                  return std::tie(a.effective_slot, a.stored_ms, a.index) <
                         std::tie(b.effective_slot, b.stored_ms, b.index);
              });
    for (const Candidate& c : candidates) {
        if (SaturatingAdd(plan.bytes_after, incoming_bytes) <= target) {
            break;
        }
        uint64_t bytes = entries[c.index].bytes;
        plan.bytes_after = bytes > plan.bytes_after ? 0
                                                    : plan.bytes_after - bytes;
        plan.evict.push_back(c.index);
    }
    plan.fits = SaturatingAdd(plan.bytes_after, incoming_bytes) <= max_bytes;
    return plan;
}

}  // namespace solgate
