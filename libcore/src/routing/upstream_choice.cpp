#include "routing/upstream_choice.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace solgate {

uint32_t WeightAboveCheapest(uint32_t weight, double cost_ratio) {
    double ratio = std::max(cost_ratio, 1.0);
    double w = double(std::max<uint32_t>(weight, 1)) * 1000.0 / (ratio * ratio);
    return static_cast<uint32_t>(std::max(1.0, std::round(w)));
}

std::optional<size_t> ChooseCandidateAt(const Candidate* candidates, size_t n,
                                        uint64_t turn) {
    if (n == 0) {
        return std::nullopt;
    }
    // the best tier, and whether any of it reached minContextSlot
    CandidateTier best = candidates[0].tier;
    bool any_reached = candidates[0].reached;
    for (size_t i = 1; i < n; i++) {
        if (candidates[i].tier < best) {
            best = candidates[i].tier;
            any_reached = candidates[i].reached;
        } else if (candidates[i].tier == best) {
            any_reached |= candidates[i].reached;
        }
    }
    auto in_pool = [&](const Candidate& c) {
        return c.tier == best && (c.reached || !any_reached);
    };
    uint64_t total = 0;
    uint64_t count = 0;
    bool equal = true;
    uint32_t first_weight = 0;
    for (size_t i = 0; i < n; i++) {
        if (in_pool(candidates[i])) {
            uint32_t w = std::max<uint32_t>(candidates[i].weight, 1);
            first_weight = count == 0 ? w : first_weight;
            equal = equal && w == first_weight;
            total += w;
            count++;
        }
    }
    // Equal weights take strict turns. Unequal ones walk a Weyl sequence
    // over the weights (a golden-ratio step, coprime with the total, so
    // every unit is visited once per cycle): each gets its share, evenly
    // spread over any run of turns.
    uint64_t at = 0;
    uint64_t unit = 1;
    if (equal) {
        at = turn % count;
    } else {
        uint64_t step = std::max<uint64_t>(
            static_cast<uint64_t>(double(total) * 0.6180339887), 1);
        while (std::gcd(step, total) != 1) {
            step++;
        }
        at = (turn % total) * step % total;
    }
    for (size_t i = 0; i < n; i++) {
        if (!in_pool(candidates[i])) {
            continue;
        }
        uint64_t w = equal ? unit : std::max<uint32_t>(candidates[i].weight, 1);
        if (at < w) {
            return i;
        }
        at -= w;
    }
    return std::nullopt;  // not reached: at < total
}

}  // namespace solgate
