// Whose WebSocket subscribers move: a cordoned or lagging upstream's,
// while another with ws= can take them.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "pubsub/subscriber_moves.h"

namespace solgate {
namespace {

// up-0, up-1 and up-2 with ws=, up-3 without; every one at slot 1000.
struct FourUpstreams {
    FourUpstreams() : shared(std::make_unique<NetworkShared>()), network("mainnet", {}) {
        for (size_t i = 0; i < 4; i++) {
            UpstreamConf u(std::string("up-") + std::to_string(i));
            if (i < 3) {
                u.pubsub.url = "http://10.0.0." + std::to_string(i) + ":8900/";
            }
            network.AddUpstream(u);
        }
        std::string error;
        network.Bind(shared.get(), true, 0, &error);
        for (size_t i = 0; i < 4; i++) {
            network.slots().Suggest(i, kSlotProcessed, 1000);
            network.slots().Observe(i, 1000);
        }
    }
    void Cordon(size_t i) {
        network.cordons().SwapCordon(
            i, CordonOwner::kNone, {CordonOwner::kPoller, CordonCause::kUnhealthy, 1});
    }
    std::unique_ptr<NetworkShared> shared;
    Network network;
};

using Moves = std::vector<SubscriberMove>;
constexpr SubscriberMove kStay = SubscriberMove::kStay;

TEST(SubscriberMoves, HealthyCurrentNodesKeepTheirSubscribers) {
    FourUpstreams t;
    EXPECT_EQ(SubscriberMoves(t.network), Moves(4, kStay));
}

TEST(SubscriberMoves, ACordonedOrLaggingNodesSubscribersMove) {
    FourUpstreams t;   // max_slot_lag 20
    t.Cordon(0);
    t.network.slots().Observe(1, 900);   // 100 behind
    EXPECT_EQ(SubscriberMoves(t.network),
              (Moves{SubscriberMove::kCordoned, SubscriberMove::kLagging, kStay,
                     kStay}));
    EXPECT_EQ(SubscriberMoveCause(SubscriberMove::kCordoned), "cordoned");
    EXPECT_EQ(SubscriberMoveCause(SubscriberMove::kLagging), "lagging");
    EXPECT_EQ(SubscriberMoveCause(kStay), "");
}

// up-3 is current but has no ws=: it cannot take anyone's subscribers.
TEST(SubscriberMoves, NobodyMovesWhenNoOtherNodeWithWsIsFit) {
    FourUpstreams t;
    t.Cordon(0);
    t.Cordon(1);
    t.network.slots().Observe(2, 900);
    EXPECT_EQ(SubscriberMoves(t.network), Moves(4, kStay));
}

}  // namespace
}  // namespace solgate
