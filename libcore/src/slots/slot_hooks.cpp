#include "slots/slot_hooks.h"

#include <algorithm>
#include <array>

#include "routing/upstream_health.h"
#include "slots/served_tip.h"

namespace solgate {

uint64_t CorrectGetSlot(sg_commitment_t commitment, uint64_t response,
                        const Tips& tips, uint64_t answered,
                        SlotCeiling ceiling) {
    switch (commitment) {
    case SG_COMMITMENT_CONFIRMED:
        return response;
    case SG_COMMITMENT_FINALIZED:
        if (tips.finalized > 0 && tips.indexed > 0) {
            return std::min(tips.finalized, tips.indexed);
        }
        if (tips.finalized > kFinalizedIndexFallbackLag) {
            return tips.finalized - kFinalizedIndexFallbackLag;
        }
        return response > kFinalizedIndexFallbackLag
                   ? response - kFinalizedIndexFallbackLag
                   : response;
    case SG_COMMITMENT_PROCESSED:
    case SG_COMMITMENT_NONE:
        break;
    }
    uint64_t base = std::max(response, tips.processed);
    if (ceiling.at == SlotCeiling{}.at) {
        // An answered slot far above what every source says now came from
        // a node on another cluster or before a reset: it must not pin the
        // floor.
        return answered > base + kToleratedSlotRollback
                   ? base
                   : std::max(base, answered);
    }
    // A slot above what the nodes in rotation hold, and may lead it by, is
    // one node's (an inflated one, or its finalized slot for a request
    // that named no commitment), not the network's.
    uint64_t at = std::max(ceiling.at, tips.processed);
    base = std::min(base, at);
    return answered > at + ceiling.lead ? base : std::max(base, answered);
}

SlotCeiling GetSlotCeiling(const Network& network, const RoutePlan& plan) {
    uint64_t max_slot_lag = network.settings().max_slot_lag;
    // the lag reference once, not once per upstream (LaggingInNetwork);
    // a lone upstream is the one that answers, lagging or not
    bool judge_lag = max_slot_lag > 0 && plan.serving.size() > 1;
    uint64_t reference =
        judge_lag ? network.LagReferenceOf(network.all_upstreams()) : 0;
    std::array<uint64_t, kMaxUpstreams> heads;
    size_t n = 0;
    for (size_t i : plan.serving) {
        uint64_t head = network.slots().View(i, kSlotProcessed);
        if (head != 0 && n < heads.size() && network.SlotsCurrent(i) &&
            !network.Cordoned(i) &&
            !(judge_lag &&
              Lagging(network.SlotLagOf(i, reference), max_slot_lag))) {
            heads[n++] = head;
        }
    }
    uint64_t tip = ServedTipOf(heads.data(), n);   // the majority's
    if (tip == 0) {
        return {};
    }
    SlotCeiling ceiling;
    ceiling.lead = max_slot_lag == 0
                       ? kToleratedSlotRollback
                       : max_slot_lag + network.GuardMarginOf(plan.serving);
    ceiling.at = tip + ceiling.lead;
    return ceiling;
}

Tips GetSlotTips(sg_commitment_t commitment, const Network& network,
                 const RoutePlan& plan, int64_t now_ms) {
    Tips tips;
    switch (commitment) {
    case SG_COMMITMENT_CONFIRMED:
        break;
    case SG_COMMITMENT_FINALIZED:
        tips.finalized = PlanTip(network, plan, kAxisFinalized, now_ms);
        tips.indexed = PlanIndexed(network, plan);
        break;
    case SG_COMMITMENT_PROCESSED:
    case SG_COMMITMENT_NONE:
        tips.processed = PlanTip(network, plan, kAxisProcessed, now_ms);
        break;
    }
    return tips;
}

bool BlockUnavailable(uint64_t slot, const Tips& tips, uint64_t margin) {
    return tips.indexed > 0 && slot > tips.indexed &&
           slot - tips.indexed > margin;
}

void HarvestContextSlot(const Network& network, size_t upstream,
                        sg_commitment_t commitment, uint64_t context_slot,
                        int64_t now_ms) {
    SlotStore& views = network.slots();
    network.host(upstream).harvested.fetch_add(1, std::memory_order_relaxed);
    // An answer at the slot the view already holds confirms it as much as
    // one that raises it: a poll or another worker often gets to a new
    // slot first, and the gate must not then go on polling because
    // traffic only ever matched the view. (0 is no slot: Suggest ignores
    // it, and a view never filled must not count as confirmed.)
    auto feed = [&](SlotAxis axis) {
        if (views.Suggest(upstream, axis, context_slot) ||
            (context_slot > 0 && views.View(upstream, axis) == context_slot)) {
            views.MarkTrafficSeen(upstream, axis, now_ms);
        }
    };
    if (commitment == SG_COMMITMENT_FINALIZED) {
        feed(kSlotFinalized);
    }
    feed(kSlotProcessed);
    // Only a processed or confirmed answer tells where the node is now (a
    // finalized one, or one at the node's default, trails by ~32 slots).
    if (commitment == SG_COMMITMENT_PROCESSED ||
        commitment == SG_COMMITMENT_CONFIRMED) {
        views.Observe(upstream, context_slot);
    }
}

// Every forwarded call asks (ResponseHook::ForCall). By length first:
// each case compares a name or a few of a size known here, which the
// compiler does inline in a word or two, where a search of the list paid
// a call to memcmp.
bool IsEnvelopeMethod(std::string_view method) {
    switch (method.size()) {
    case 9:
        return method == "getSupply";
    case 10:
        return method == "getBalance";
    case 14:
        return method == "getAccountInfo" || method == "getTokenSupply";
    case 16:
        return method == "getFeeForMessage" || method == "isBlockhashValid";
    case 18:
        return method == "getBlockProduction" ||
               method == "getLargestAccounts" ||
               method == "getLatestBlockhash" ||
               method == "getProgramAccounts";
    case 19:
        return method == "getMultipleAccounts" ||
               method == "simulateTransaction";
    case 20:
        return method == "getSignatureStatuses";
    case 22:
        return method == "getTokenAccountBalance";
    case 23:
        return method == "getTokenAccountsByOwner" ||
               method == "getTokenLargestAccounts";
    case 25:
        return method == "getStakeMinimumDelegation";
    case 26:
        return method == "getTokenAccountsByDelegate";
    default:
        return false;
    }
}

}  // namespace solgate
