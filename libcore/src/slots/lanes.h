// Served tips per lane: the majority pick over a lane's voters, kept from
// jumping backwards by a regression guard, held up by a floor on the
// finalized axis, and timed by an advance-age anchor.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "slots/shared_state.h"

namespace solgate {

// A pick that falls this far below what the lane had is held back ...
constexpr uint64_t kLaneRegressionSlots = 1024;
// ... for at most this long before the lane accepts it.
constexpr int64_t kLaneGuardDisarmMs = 60000;

// One axis of a lane: the tip to serve given the voters' heads. Updates the
// lane's memory (guard, floor, anchor, gauges).
uint64_t PickLaneAxis(LaneAxisState& state, const std::vector<uint64_t>& heads,
                      bool finalized, int64_t now_ms);

// The lane keyed `key`, created with `name` and `member_slots` when it does
// not exist; nullptr when the network already has kMaxLanes lanes.
LaneShared* FindOrCreateLane(NetworkShared& shared, std::string_view key,
                             std::string_view name,
                             const std::vector<size_t>& member_slots);

}  // namespace solgate
