// Whose WebSocket subscribers move: a cordoned or lagging upstream's,
// while another with ws= can take them.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "pubsub/subscriber_moves.h"
#include "support/fakes.h"

namespace solgate {
namespace {

// up-0, up-1 and up-2 with ws=, up-3 without; every one at slot 1000.
struct FourUpstreams : testing::PubsubTestNetwork {
    FourUpstreams() : PubsubTestNetwork(4, {0, 1, 2}) {
        for (size_t i = 0; i < 4; i++) {
            network.slots().Suggest(i, kSlotProcessed, 1000);
            network.slots().Observe(i, 1000);
        }
    }
    void Cordon(size_t i) {
        network.cordons().SwapCordon(
            i, CordonOwner::kNone, {CordonOwner::kPoller, CordonCause::kUnhealthy, 1});
    }
};

using Moves = std::vector<SubscriberMove>;
constexpr SubscriberMove kStay = SubscriberMove::kStay;

TEST(SubscriberMoves, HealthyCurrentNodesKeepTheirSubscribers) {
    FourUpstreams t;
    EXPECT_EQ(SubscriberMoves(t.network, 0), Moves(4, kStay));
}

TEST(SubscriberMoves, ACordonedOrLaggingNodesSubscribersMove) {
    FourUpstreams t;   // max_slot_lag 20
    t.Cordon(0);
    t.network.slots().Observe(1, 900);   // 100 behind
    EXPECT_EQ(SubscriberMoves(t.network, 0),
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
    EXPECT_EQ(SubscriberMoves(t.network, 0), Moves(4, kStay));
}

// An operator's drain moves its subscribers for Network::kWsDrainMs, and
// makes it a last resort for new ones.
TEST(SubscriberMoves, ADrainedNodesSubscribersMoveForTheDrainWindow) {
    FourUpstreams t;
    t.network.DrainSubscribers(2, 1000);
    EXPECT_EQ(SubscriberMoves(t.network, 1000),
              (Moves{kStay, kStay, SubscriberMove::kDrained, kStay}));
    EXPECT_EQ(SubscriberMoveCause(SubscriberMove::kDrained), "drained");
    EXPECT_EQ(SubscriberMoves(t.network, 1000 + Network::kWsDrainMs),
              Moves(4, kStay));

    std::vector<unsigned char> only_drained = {0, 0, 1, 0};
    Network::PickRequest pick;
    pick.allowed = &only_drained;
    pick.now_ms = 2000;
    pick.subscription = true;
    auto last_resort = t.network.Pick(pick);
    ASSERT_TRUE(last_resort);   // drained, but the only one
    EXPECT_EQ(last_resort->upstream, 2u);
    std::vector<unsigned char> with_ws = {1, 1, 1, 0};
    pick.allowed = &with_ws;
    for (int i = 0; i < 20; i++) {
        EXPECT_NE(t.network.Pick(pick)->upstream, 2u);
    }
    pick.subscription = false;   // calls still go to it
    bool seen = false;
    for (int i = 0; i < 30 && !seen; i++) {
        seen = t.network.Pick(pick)->upstream == 2u;
    }
    EXPECT_TRUE(seen);
}

// With the only other node drained, new subscribers go to it (a last
// resort): so do a cordoned or lagging node's, while the drained node's
// own stay.
TEST(SubscriberMoves, ACordonedNodesSubscribersGoToADrainedOneWhenNoneIsBetter) {
    FourUpstreams t;
    t.Cordon(0);
    t.network.slots().Observe(1, 900);   // lagging
    t.network.DrainSubscribers(2, 1000);
    EXPECT_EQ(SubscriberMoves(t.network, 1000),
              (Moves{SubscriberMove::kCordoned, SubscriberMove::kLagging, kStay,
                     kStay}));
    t.network.slots().Observe(2, 900);   // the drained node lags too
    EXPECT_EQ(SubscriberMoves(t.network, 1000), Moves(4, kStay));
}

// A reload's old worker hands every subscriber to the new workers, even
// those of a node with nowhere better to go (the new workers choose).
TEST(SubscriberMoves, AShuttingDownWorkerMovesEverySubscriber) {
    FourUpstreams t;
    t.Cordon(0);
    t.Cordon(1);
    t.network.slots().Observe(2, 900);
    constexpr SubscriberMove kShutdown = SubscriberMove::kShutdown;
    EXPECT_EQ(SubscriberMoves(t.network, 0, WorkerPhase::kShuttingDown),
              (Moves{kShutdown, kShutdown, kShutdown, kStay}));   // up-3: no ws=
    EXPECT_EQ(SubscriberMoveCause(kShutdown), "shutdown");
}

}  // namespace
}  // namespace solgate
