#include "slots/lanes.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "slots/served_tip.h"

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
uint64_t GuardPick(LaneAxisState& state, uint64_t pick, uint64_t max_head,
                   uint64_t second_head, int64_t now_ms) {
    uint64_t last_good = state.last_good.load(std::memory_order_relaxed);
    uint64_t reference = std::max(second_head, last_good);
    if (last_good == 0 || reference <= pick + kLaneRegressionSlots) {
        state.last_good.store(pick, std::memory_order_relaxed);
        state.guard_since_ms.store(0, std::memory_order_relaxed);
        return pick;
    }
    int64_t since = state.guard_since_ms.load(std::memory_order_relaxed);
    if (since == 0) {
        int64_t expected = 0;
        state.guard_since_ms.compare_exchange_strong(expected, now_ms);
        since = expected == 0 ? now_ms : expected;
    }
    if (now_ms - since >= kLaneGuardDisarmMs) {
        state.last_good.store(pick, std::memory_order_relaxed);
        state.guard_since_ms.store(0, std::memory_order_relaxed);
        return pick;
    }
    return std::min(last_good, max_head);
}

uint64_t RaiseToFloor(std::atomic<uint64_t>& floor, uint64_t served) {
    uint64_t current = floor.load(std::memory_order_relaxed);
    while (served > current &&
           !floor.compare_exchange_weak(current, served,
                                        std::memory_order_relaxed)) {
    }
    return std::max(served, current);
}

void MoveAnchor(LaneAxisState& state, uint64_t served, int64_t now_ms) {
    uint64_t anchor = state.anchor_slot.load(std::memory_order_relaxed);
    if (served > anchor &&
        state.anchor_slot.compare_exchange_strong(anchor, served)) {
        state.anchor_ms.store(now_ms, std::memory_order_relaxed);
    }
}

}  // namespace

uint64_t PickLaneAxis(LaneAxisState& state, const std::vector<uint64_t>& heads,
                      bool finalized, int64_t now_ms) {
    std::vector<uint64_t> live = LiveHeads(heads);
    uint64_t served = 0;
    if (!live.empty()) {
        uint64_t pick = live[live.size() / 2];  // the majority rule
        uint64_t second = live.size() > 1 ? live[1] : 0;
        served = GuardPick(state, pick, live[0], second, now_ms);
        state.max_head.store(live[0], std::memory_order_relaxed);
    }
    if (finalized) {
        served = RaiseToFloor(state.floor, served);
    }
    if (served > 0) {
        MoveAnchor(state, served, now_ms);
        state.served.store(served, std::memory_order_relaxed);
    }
    return served;
}

LaneShared* FindOrCreateLane(NetworkShared& shared, std::string_view key,
                             std::string_view name,
                             const std::vector<size_t>& member_slots) {
    auto same_key = [&](const LaneShared& lane) {
        return lane.state.load(std::memory_order_acquire) == LaneShared::kReady &&
               std::string_view(lane.key) == key;
    };
    for (LaneShared& lane : shared.lanes) {
        if (same_key(lane)) {
            return &lane;
        }
    }
    for (LaneShared& lane : shared.lanes) {
        uint32_t expected = LaneShared::kFree;
        if (!lane.state.compare_exchange_strong(expected, LaneShared::kClaimed)) {
            continue;
        }
        size_t k = std::min(key.size(), kLaneKeyCapacity - 1);
        std::memcpy(lane.key, key.data(), k);
        lane.key[k] = '\0';
        size_t n = std::min(name.size(), kLaneNameCapacity - 1);
        std::memcpy(lane.name, name.data(), n);
        lane.name[n] = '\0';
        std::memset(lane.members, 0, sizeof(lane.members));
        for (size_t slot : member_slots) {
            lane.members[slot / 64] |= 1ULL << (slot % 64);
        }
        lane.state.store(LaneShared::kReady, std::memory_order_release);
        // Two workers may have created the same lane at once: keep the
        // first one and give this one back.
        for (LaneShared& other : shared.lanes) {
            if (&other == &lane) {
                break;
            }
            if (same_key(other)) {
                lane.state.store(LaneShared::kFree, std::memory_order_release);
                return &other;
            }
        }
        return &lane;
    }
    shared.lane_cap_misses.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
}

}  // namespace solgate
