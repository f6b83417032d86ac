// Which cached getBlock entries leave a full region, by the retention spec:
// "A block is held in the region for at least 15 minutes. More recent
// blocks are held longer. Blocks that are requested often are kept longer.
// When space is needed, the oldest blocks leave first, but a block
// requested several times in the last few hours stays until requests for
// it stop."
//
// The rule that implements it:
// - Every entry carries a request score: +1 per request, halving every
//   half_life_ms (3 h) without requests.
// - An entry is protected (never evicted) while it is younger than
//   min_hold_ms (15 min) or while its decayed score is >= hot_score (2.0:
//   e.g. 3 requests within the last hour; it cools below 2 some time after
//   the requests stop, about 1.4 h for exactly 3 requests in one hour).
// - Nothing is evicted while the stored bytes plus the incoming entry fit
//   under the maximum. Otherwise unprotected entries leave in ascending
//   order of their effective slot, slot + floor(score * slots_per_score)
//   (each score point is worth ~1 h of slots; ties: older write first),
//   until stored plus incoming is at most low_watermark (95%) of the
//   maximum, or no unprotected entry is left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace solgate {

// The tunables of the rule above. A half-life <= 0 disables decay; a
// hot_score <= 0 disables the hot protection; low_watermark is clamped
// to [0, 1].
struct RetentionPolicy {
    int64_t min_hold_ms = 15 * 60 * 1000;     // never evicted younger
    double half_life_ms = 3.0 * 3600 * 1000;  // score halves every 3 h
    double hot_score = 2.0;                   // score >= this: kept
    uint64_t slots_per_score = 9000;          // ~1 h of slots per point
    double low_watermark = 0.95;              // evict down to this share
};

// What the planner needs to know about one cached entry.
struct CachedBlockStat {
    uint64_t slot = 0;
    uint64_t bytes = 0;
    int64_t stored_ms = 0;     // when the entry was written
    double score = 0;          // decayed request score as of score_ms
    int64_t score_ms = 0;
};

// The score decayed from score_ms to now_ms: score * 2^(-dt / half_life).
// Time never runs backwards: now_ms <= score_ms returns it unchanged.
// Negative or NaN scores count as 0.
double DecayedScore(double score, int64_t score_ms, int64_t now_ms,
                    const RetentionPolicy& policy);

// The score after one more request at now_ms: the decayed score plus 1.
// Store it with score_ms = max(score_ms, now_ms).
double ScoreAfterRequest(double score, int64_t score_ms, int64_t now_ms,
                         const RetentionPolicy& policy);

// True when the entry must not be evicted: younger than min_hold_ms
// (written in the future counts as young), or hot (decayed score >=
// hot_score).
bool IsProtected(const CachedBlockStat& entry, int64_t now_ms,
                 const RetentionPolicy& policy);

// The slot an entry competes with for space: its slot plus
// floor(decayed score * slots_per_score), saturating at UINT64_MAX.
uint64_t EffectiveSlot(const CachedBlockStat& entry, int64_t now_ms,
                       const RetentionPolicy& policy);

// The outcome of PlanEvictions.
struct EvictionPlan {
    std::vector<size_t> evict;   // indices into the input, eviction order
    uint64_t bytes_after = 0;    // total once they are gone
    bool fits = false;           // total + incoming <= max afterwards
};

// Which entries to evict so that incoming_bytes can be stored, by the rule
// at the top of this file. total_bytes is the region's current total (not
// recomputed from the entries; evicting subtracts, stopping at 0). An
// incoming entry larger than max_bytes never fits: the caller should not
// store it, and the plan then evicts every unprotected entry.
EvictionPlan PlanEvictions(const std::vector<CachedBlockStat>& entries,
                           uint64_t total_bytes, uint64_t incoming_bytes,
                           uint64_t max_bytes, int64_t now_ms,
                           const RetentionPolicy& policy);

}  // namespace solgate
