// The request/response hooks of slot tracking: getSlot correction, the
// getBlock availability guard, and context.slot harvesting.
#pragma once

#include <cstdint>

#include "routing/network.h"
#include "routing/route_plan.h"
#include "rpc/cluster.h"

namespace solgate {

// Without a known indexed tip, a finalized answer is held this far below
// the finalized tip (or below the answer itself when that is unknown too).
constexpr uint64_t kFinalizedIndexFallbackLag = 32;

// How high a processed getSlot answer may be (GetSlotCeiling): `at` most,
// and what was already answered is still told up to `at + lead` (so a
// ceiling that drops, as a node leaves rotation, moves no answer back).
struct SlotCeiling {
    uint64_t at = UINT64_MAX;   // none known
    uint64_t lead = 0;
};

// The slot a getSlot answer is corrected to, for the request's effective
// commitment:
//  - processed or none: raised to the processed tip and to the highest
//    processed slot already answered (`answered`); the answer is held at
//    most at the ceiling (never below the tip), and an `answered` more
//    than its lead above it is dropped: one node that misreports (or
//    answers at a default commitment Solgate did not assume) neither
//    reaches the client nor, remembered, pins the answers after it.
//    Without a ceiling, an `answered` more than kToleratedSlotRollback
//    above the answer is dropped;
//  - confirmed: untouched (no confirmed tip is tracked);
//  - finalized: min(finalized tip, indexed tip), both ways, so callers are
//    never sent into the window getBlock cannot serve yet.
uint64_t CorrectGetSlot(sg_commitment_t commitment, uint64_t response,
                        const Tips& tips, uint64_t answered = 0,
                        SlotCeiling ceiling = {});

// The highest processed slot an honest getSlot answer can hold now: the
// served tip (the majority rule) of the processed slots of the plan's
// serving upstreams that are in rotation (slots current, not cordoned,
// not lagging), plus what max_slot_lag lets a node lead it by and the
// slots a poll may trail the node (the guard's margin, 2 + debounce /
// 400 ms), which is its lead; with max_slot_lag 0, kToleratedSlotRollback.
// None when no such upstream has a slot. Stalled or lagging nodes do not
// vote, so they never hold the answers of the current ones down.
SlotCeiling GetSlotCeiling(const Network& network, const RoutePlan& plan);

// The tips CorrectGetSlot reads for `commitment` (PlanTips' values; the
// others are left 0): a getSlot answer picks only the tips it is corrected
// with (a confirmed one, none).
Tips GetSlotTips(sg_commitment_t commitment, const Network& network,
                 const RoutePlan& plan, int64_t now_ms);

// True when getBlock(slot) is beyond the indexed frontier plus the margin.
// Fails open: an unknown frontier (0) never rejects.
bool BlockUnavailable(uint64_t slot, const Tips& tips, uint64_t margin);

// Feeds a context.slot seen in live traffic to the upstream's views:
// finalized feeds both views, weaker commitments the latest one. A view
// counts as traffic-fresh when it accepted the value or already held it
// (not when it refused an older one).
void HarvestContextSlot(const Network& network, size_t upstream,
                        sg_commitment_t commitment, uint64_t context_slot,
                        int64_t now_ms);

// Methods whose result is the RpcResponse envelope with context.slot.
bool IsEnvelopeMethod(std::string_view method);

}  // namespace solgate
