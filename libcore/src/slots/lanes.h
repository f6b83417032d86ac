// Served tips per lane: the majority pick over a lane's voters, kept from
// jumping backwards by a regression guard, held up by a floor on the
// finalized axis, and timed by an advance-age anchor. What a lane
// remembers between picks is a LaneAxisMemory (tip_store.h); the rule is a
// template so a store runs it over its own memory type without a virtual
// call per step (the shared memory store's ShmLaneAxis is final).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "slots/tip_store.h"

namespace solgate {

// A pick that falls this far below what the lane had is held back ...
constexpr uint64_t kLaneRegressionSlots = 1024;
// ... for at most this long before the lane accepts it.
constexpr int64_t kLaneGuardDisarmMs = 60000;

namespace lanes_detail {

// Heads that are known, highest first, into live (room for heads.size());
// how many.
inline size_t LiveHeadsInto(const std::vector<uint64_t>& heads,
                            uint64_t* live) {
    size_t n = 0;
    for (uint64_t h : heads) {
        if (h > 0) {
            live[n++] = h;
        }
    }
    std::sort(live, live + n, std::greater<uint64_t>());
    return n;
}

// The regression guard: a pick more than kLaneRegressionSlots below
// max(second-highest live head, last good) is a node set swapped to another
// fork or a stale majority; serve last good (never above the highest live
// head) until the pick recovers or a minute passes.
template <typename Memory>
uint64_t GuardPick(Memory& memory, uint64_t pick, uint64_t max_head,
                   uint64_t second_head, int64_t now_ms) {
    uint64_t last_good = memory.LastGood();
    uint64_t reference = std::max(second_head, last_good);
    if (last_good == 0 || reference <= pick + kLaneRegressionSlots) {
        memory.AcceptPick(pick);
        return pick;
    }
    if (now_ms - memory.HoldingSince(now_ms) >= kLaneGuardDisarmMs) {
        memory.AcceptPick(pick);
        return pick;
    }
    return std::min(last_good, max_head);
}

}  // namespace lanes_detail

// One axis of a lane: the tip to serve given the voters' heads. Updates the
// lane's memory (guard, floor, anchor, gauges). Memory is a LaneAxisMemory
// or a final type derived from it.
template <typename Memory>
uint64_t PickLaneAxis(Memory& memory, const std::vector<uint64_t>& heads,
                      bool finalized, int64_t now_ms) {
    // picked on every request that needs a lane's tip: up to 64 voters on
    // the stack, a larger lane (a network may have 256) on the heap
    constexpr size_t kOnStack = 64;
    uint64_t on_stack[kOnStack];
    std::vector<uint64_t> spill;
    uint64_t* live = on_stack;
    if (heads.size() > kOnStack) {
        spill.resize(heads.size());
        live = spill.data();
    }
    size_t n = lanes_detail::LiveHeadsInto(heads, live);
    uint64_t served = 0;
    if (n > 0) {
        uint64_t pick = live[n / 2];  // the majority rule
        uint64_t second = n > 1 ? live[1] : 0;
        served = lanes_detail::GuardPick(memory, pick, live[0], second, now_ms);
        memory.PublishMaxHead(live[0]);
    }
    if (finalized) {
        served = memory.RaiseFloor(served);
    }
    if (served > 0) {
        memory.MoveAnchor(served, now_ms);
        memory.Publish(served);
    }
    return served;
}

}  // namespace solgate
