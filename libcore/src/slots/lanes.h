// Served tips per lane: the majority pick over a lane's voters, kept from
// jumping backwards by a regression guard, held up by a floor on the
// finalized axis, and timed by an advance-age anchor. What a lane
// remembers between picks is in its LaneAxisMemory (tip_store.h).
#pragma once

#include <cstdint>
#include <vector>

#include "slots/tip_store.h"

namespace solgate {

// A pick that falls this far below what the lane had is held back ...
constexpr uint64_t kLaneRegressionSlots = 1024;
// ... for at most this long before the lane accepts it.
constexpr int64_t kLaneGuardDisarmMs = 60000;

// One axis of a lane: the tip to serve given the voters' heads. Updates the
// lane's memory (guard, floor, anchor, gauges).
uint64_t PickLaneAxis(LaneAxisMemory& memory,
                      const std::vector<uint64_t>& heads, bool finalized,
                      int64_t now_ms);

}  // namespace solgate
