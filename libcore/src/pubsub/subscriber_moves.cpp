#include "pubsub/subscriber_moves.h"

#include "routing/upstream_health.h"

namespace solgate {

std::string_view SubscriberMoveCause(SubscriberMove move) {
    switch (move) {
    case SubscriberMove::kCordoned:
        return "cordoned";
    case SubscriberMove::kLagging:
        return "lagging";
    case SubscriberMove::kDrained:
        return "drained";
    case SubscriberMove::kShutdown:
        return "shutdown";
    case SubscriberMove::kStay:
        break;
    }
    return "";
}

std::vector<SubscriberMove> SubscriberMoves(const Network& network,
                                            int64_t now_ms,
                                            WorkerPhase phase) {
    std::vector<SubscriberMove> moves(network.size(), SubscriberMove::kStay);
    if (phase == WorkerPhase::kShuttingDown) {
        for (size_t i = 0; i < network.size(); i++) {
            if (!network.upstream(i).pubsub.url.empty()) {
                moves[i] = SubscriberMove::kShutdown;
            }
        }
        return moves;
    }
    const uint64_t max_lag = network.settings().max_slot_lag;
    bool fit_elsewhere = false;   // a node neither cordoned, drained nor lagging
    bool drained_but_fit = false;
    for (size_t i = 0; i < network.size(); i++) {
        if (network.upstream(i).pubsub.url.empty()) {
            continue;
        }
        bool lagging = Lagging(network.SlotLagInNetwork(i), max_lag);
        if (network.Cordoned(i)) {
            moves[i] = SubscriberMove::kCordoned;
        } else if (network.Draining(i, now_ms)) {
            moves[i] = SubscriberMove::kDrained;
            drained_but_fit |= !lagging;
        } else if (lagging) {
            moves[i] = SubscriberMove::kLagging;
        } else {
            fit_elsewhere = true;
        }
    }
    if (fit_elsewhere) {
        return moves;
    }
    // A drained node is where new subscribers go when nothing better is
    // left: a cordoned or lagging node's go there too, its own stay.
    for (SubscriberMove& move : moves) {
        if (!drained_but_fit || move == SubscriberMove::kDrained) {
            move = SubscriberMove::kStay;
        }
    }
    return moves;
}

}  // namespace solgate
