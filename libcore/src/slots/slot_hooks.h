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

// The slot a getSlot answer is corrected to, for the request's effective
// commitment:
//  - processed or none: raised to the processed tip and to the highest
//    processed slot already answered (`answered`). With a processed tip
//    known, it is held at most `max_lead` slots above it, and an
//    `answered` above that is dropped: one node that misreports (or
//    answers at a default commitment Solgate did not assume) neither
//    reaches the client nor pins the answers after it. With none known,
//    an `answered` more than kToleratedSlotRollback above the answer is
//    dropped;
//  - confirmed: untouched (no confirmed tip is tracked);
//  - finalized: min(finalized tip, indexed tip), both ways, so callers are
//    never sent into the window getBlock cannot serve yet.
uint64_t CorrectGetSlot(sg_commitment_t commitment, uint64_t response,
                        const Tips& tips, uint64_t answered = 0,
                        uint64_t max_lead = kToleratedSlotRollback);

// How far a processed getSlot answer may lead the plan's processed tip:
// what max_slot_lag lets a node trail it by, plus the slots a poll may be
// behind the node (the guard's margin, 2 + debounce / 400 ms);
// kToleratedSlotRollback when max_slot_lag is 0 (lag not judged).
uint64_t GetSlotMaxLead(const Network& network, const RoutePlan& plan);

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
// counts as traffic-fresh only when it accepted the value.
void HarvestContextSlot(const Network& network, size_t upstream,
                        sg_commitment_t commitment, uint64_t context_slot,
                        int64_t now_ms);

// Methods whose result is the RpcResponse envelope with context.slot.
bool IsEnvelopeMethod(std::string_view method);

}  // namespace solgate
