#include "slots/lanes.h"

#include <algorithm>
#include <functional>

namespace solgate {
namespace {

// Heads that are known, highest first.
std::vector<uint64_t> LiveHeads(const std::vector<uint64_t>& heads) {
    std::vector<uint64_t> live;
    for (uint64_t h : heads) {
        if (h > 0) {
            live.push_back(h);
        }
    }
    std::sort(live.begin(), live.end(), std::greater<uint64_t>());
    return live;
}

// The regression guard: a pick more than kLaneRegressionSlots below
// max(second-highest live head, last good) is a node set swapped to another
// fork or a stale majority; serve last good (never above the highest live
// head) until the pick recovers or a minute passes.
uint64_t GuardPick(LaneAxisMemory& memory, uint64_t pick, uint64_t max_head,
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

}  // namespace

uint64_t PickLaneAxis(LaneAxisMemory& memory,
                      const std::vector<uint64_t>& heads, bool finalized,
                      int64_t now_ms) {
    std::vector<uint64_t> live = LiveHeads(heads);
    uint64_t served = 0;
    if (!live.empty()) {
        uint64_t pick = live[live.size() / 2];  // the majority rule
        uint64_t second = live.size() > 1 ? live[1] : 0;
        served = GuardPick(memory, pick, live[0], second, now_ms);
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
