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
    bool somewhere_to_go = false;
    for (size_t i = 0; i < network.size(); i++) {
        if (network.upstream(i).pubsub.url.empty()) {
            continue;
        }
        if (network.Cordoned(i)) {
            moves[i] = SubscriberMove::kCordoned;
        } else if (network.Draining(i, now_ms)) {
            moves[i] = SubscriberMove::kDrained;
        } else if (Lagging(network.SlotLagInNetwork(i), max_lag)) {
            moves[i] = SubscriberMove::kLagging;
        } else {
            somewhere_to_go = true;
        }
    }
    if (!somewhere_to_go) {
        moves.assign(network.size(), SubscriberMove::kStay);
    }
    return moves;
}

}  // namespace solgate
