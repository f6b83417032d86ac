// The memories behind the tips Solgate serves: the highest processed slot
// any getSlot was answered with (so no client sees it move backwards), and
// per lane and axis what the served-tip rule remembers between picks (the
// regression guard, the finalized floor, the advance-age anchor). Lanes
// are numbered: kAllLane is the network-wide one, the others belong to
// use-upstream groups and are made on first use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slots/slot_types.h"

namespace solgate {

using LaneId = size_t;
constexpr LaneId kAllLane = 0;

// What one axis of one lane remembers; the served-tip rule (lanes.h)
// drives it.
class LaneAxisMemory {
public:
    virtual ~LaneAxisMemory() = default;

    // The regression guard: the last pick it accepted (0: none yet).
    virtual uint64_t LastGood() const = 0;
    // Accepts `pick` and disarms the guard.
    virtual void AcceptPick(uint64_t pick) = 0;
    // Since when the guard holds the last good pick; starts now if it does
    // not hold yet.
    virtual int64_t HoldingSince(int64_t now_ms) = 0;
    // Never lowers (finalized axis): max(served, floor).
    virtual uint64_t RaiseFloor(uint64_t served) = 0;
    // Moves the advance-age anchor when `served` is above it.
    virtual void MoveAnchor(uint64_t served, int64_t now_ms) = 0;
    // The last served tip and the highest voter head, for the gauges.
    virtual void Publish(uint64_t served) = 0;
    virtual void PublishMaxHead(uint64_t head) = 0;

    struct Gauges {
        uint64_t served = 0;
        uint64_t max_head = 0;
        uint64_t anchor_slot = 0;
        int64_t anchor_ms = 0;
    };
    virtual Gauges Read() const = 0;
};

struct LaneInfo {
    LaneId id = kAllLane;
    std::string name;   // not unique: two groups may share it
    std::string key;    // unique: LaneKey, "all" for kAllLane
    std::vector<size_t> members;   // upstream indices; all for kAllLane
};

class TipStore {
public:
    virtual ~TipStore() = default;

    // The highest processed slot answered to getSlot without a selector.
    virtual uint64_t Answered() const = 0;
    // Raises it (a drop beyond kToleratedSlotRollback is accepted and
    // counted, as for slot views).
    virtual void SuggestAnswered(uint64_t slot) = 0;

    virtual LaneAxisMemory& Axis(LaneId lane, LaneAxis axis) = 0;
    // The served-tip rule (lanes.h) over the lane's memory for this axis:
    // the tip to serve given the voters' heads.
    virtual uint64_t PickServedTip(LaneId lane, LaneAxis axis,
                                   const std::vector<uint64_t>& heads,
                                   int64_t now_ms) = 0;
    // The lane of the group `key` (made with `name` and `members`, upstream
    // indices, when new); nullopt when every lane is taken.
    virtual std::optional<LaneId> FindOrCreateLane(
        std::string_view key, std::string_view name,
        const std::vector<size_t>& members) = 0;
    // kAllLane first, then every lane in use.
    virtual std::vector<LaneInfo> Lanes() const = 0;
};

}  // namespace solgate
