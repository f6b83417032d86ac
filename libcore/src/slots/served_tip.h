// Tips and filters over a set of upstream slot views, by the spec's rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace solgate {

// The highest slot a strict majority of the voters has reached: heads <= 0
// are dropped, the rest sorted descending, element [len/2] taken. One voter
// gives its head; two give the lower. 0 when nobody has a head.
uint64_t ServedTip(std::vector<uint64_t> heads);
// The same over *heads, which it reorders (and may shorten) in place: for
// a caller that keeps the list's storage from one request to the next.
uint64_t ServedTipIn(std::vector<uint64_t>* heads);
// The same over heads[0, n), all of them > 0, which it reorders: for a
// caller that gathers the heads on its stack.
uint64_t ServedTipOf(uint64_t* heads, size_t n);

// The consensus reference: the highest positive finalized slot, unless it
// outruns the runner-up by more than max_lag (> 0), then the runner-up, so
// one upstream reporting an inflated slot cannot raise the bar.
uint64_t ReferenceFinalizedSlot(const std::vector<uint64_t>& finalized,
                                int64_t max_lag);

// Indices of upstreams whose finalized slot is within max_lag of the
// reference. Unknown (0) views are kept; max_lag <= 0 keeps all.
std::vector<size_t> FilterByFinalizedSlotLag(
    const std::vector<uint64_t>& finalized, int64_t max_lag);

// Indices of upstreams whose processed view has reached min_context_slot;
// all of them when none has.
std::vector<size_t> FilterByMinContextSlot(
    const std::vector<uint64_t>& processed, uint64_t min_context_slot);

}  // namespace solgate
