#include "slots/served_tip.h"

#include <algorithm>
#include <functional>

namespace solgate {

static std::vector<size_t> AllIndices(size_t n) {
    std::vector<size_t> all(n);
    for (size_t i = 0; i < n; i++) {
        all[i] = i;
    }
    return all;
}

uint64_t ServedTip(std::vector<uint64_t> heads) {
    return ServedTipIn(&heads);
}

uint64_t ServedTipIn(std::vector<uint64_t>* heads) {
    heads->erase(std::remove(heads->begin(), heads->end(), 0u), heads->end());
    return ServedTipOf(heads->data(), heads->size());
}

uint64_t ServedTipOf(uint64_t* heads, size_t n) {
    if (n == 0) {
        return 0;
    }
    std::nth_element(heads, heads + n / 2, heads + n, std::greater<uint64_t>());
    return heads[n / 2];
}

uint64_t ReferenceFinalizedSlot(const std::vector<uint64_t>& finalized,
                                int64_t max_lag) {
    uint64_t first = 0;
    uint64_t second = 0;
    for (uint64_t slot : finalized) {
        if (slot > first) {
            second = first;
            first = slot;
        } else if (slot > second) {
            second = slot;
        }
    }
    if (max_lag > 0 && second > 0 &&
        first - second > static_cast<uint64_t>(max_lag)) {
        return second;
    }
    return first;
}

std::vector<size_t> FilterByFinalizedSlotLag(
    const std::vector<uint64_t>& finalized, int64_t max_lag) {
    if (max_lag <= 0) {
        return AllIndices(finalized.size());
    }
    // The reference is one of the known views and always passes, so the
    // result is never empty while anything is known: "all stale" cannot
    // happen, and unknown views are kept besides.
    uint64_t reference = ReferenceFinalizedSlot(finalized, max_lag);
    std::vector<size_t> kept;
    for (size_t i = 0; i < finalized.size(); i++) {
        uint64_t slot = finalized[i];
        if (slot == 0 || slot >= reference ||
            reference - slot <= static_cast<uint64_t>(max_lag)) {
            kept.push_back(i);
        }
    }
    return kept;
}

std::vector<size_t> FilterByMinContextSlot(
    const std::vector<uint64_t>& processed, uint64_t min_context_slot) {
    std::vector<size_t> reached;
    for (size_t i = 0; i < processed.size(); i++) {
        if (processed[i] >= min_context_slot) {
            reached.push_back(i);
        }
    }
    return reached.empty() ? AllIndices(processed.size()) : reached;
}

}  // namespace solgate
