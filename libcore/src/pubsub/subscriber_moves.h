// Which upstreams' WebSocket subscribers should move to another node now:
// those of an upstream that is cordoned (by the poller or the operator) or
// lagging, while another upstream with a pubsub endpoint is fit to take
// them. Closing them when none is would only make every client reconnect
// to a node as bad. A worker that is shutting down (nginx reload or
// graceful stop) moves every one: the new workers serve the new
// configuration, and an old worker would otherwise live as long as its
// longest subscription.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "routing/network.h"

namespace solgate {

enum class SubscriberMove : unsigned char {
    kStay = 0,
    kCordoned,   // cordoned by the poller or the operator
    kLagging,    // its processed slot trails the network's by > max_slot_lag
    kDrained,    // the operator drains it (admin .../drain)
    kShutdown,   // this worker is shutting down (reload, graceful stop)
};

enum class WorkerPhase { kServing, kShuttingDown };

// The label of solgate_ws_closed_total's cause for a move.
std::string_view SubscriberMoveCause(SubscriberMove move);

// One verdict per upstream of the network, in configuration order, at
// now_ms (monotonic), for a worker in `phase`.
std::vector<SubscriberMove> SubscriberMoves(
    const Network& network, int64_t now_ms,
    WorkerPhase phase = WorkerPhase::kServing);

}  // namespace solgate
