// The choice among a request's candidate upstreams, in one place: tiers
// first (eligible primaries, then backups, then lagging, ejected and last
// cordoned upstreams), then those that reached the request's
// minContextSlot, then a weighted turn. Pure: the Network fills the
// candidates from its stores.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace solgate {

// The routing order, best first. A tier is used only when every better one
// is empty.
enum class CandidateTier : uint8_t {
    kEligible = 0,     // a primary: not cordoned, lagging or ejected
    kBackup,           // a backup of the group, as healthy
    kFallbackBackup,   // a network backup outside use_upstream_default's group
    kLagging,          // more than max_slot_lag behind its group
    kEjected,          // failed max_fails times, or asked to wait (429)
    kCordoned,         // by the poller or the operator: the last resort
};

// Trivial (no member initializers), so an array of kMaxUpstreams of them
// on the stack costs nothing to make: set every member.
struct Candidate {
    size_t index;              // the upstream
    CandidateTier tier;
    bool reached;              // its processed view reached minContextSlot
    uint32_t weight;           // its share in its tier (>= 1)
};

// EffectiveWeight past the cheapest of its tier (cost_ratio > 1).
uint32_t WeightAboveCheapest(uint32_t weight, double cost_ratio);

// weight=N scaled by how much costlier than the cheapest candidate of its
// tier an upstream is (cost_ratio >= 1): N x 1000 / ratio^2, at least 1.
// Inline for the cheapest (a ratio of 1 or below: N x 1000, the division
// and the rounding change nothing), which most candidates are.
inline uint32_t EffectiveWeight(uint32_t weight, double cost_ratio) {
    if (cost_ratio <= 1.0) {
        return static_cast<uint32_t>(double(weight > 0 ? weight : 1) * 1000.0);
    }
    return WeightAboveCheapest(weight, cost_ratio);
}

// The candidate for this turn: the best tier present; within it those that
// reached minContextSlot when any did; within those a weighted turn (equal
// weights take strict turns). nullopt when n is 0. Reorders nothing.
// ChooseCandidateAt gives its place in `candidates`, ChooseCandidate its
// upstream.
std::optional<size_t> ChooseCandidateAt(const Candidate* candidates, size_t n,
                                        uint64_t turn);
inline std::optional<size_t> ChooseCandidate(const Candidate* candidates,
                                             size_t n, uint64_t turn) {
    std::optional<size_t> at = ChooseCandidateAt(candidates, n, turn);
    if (!at) {
        return std::nullopt;
    }
    return candidates[*at].index;
}

}  // namespace solgate
