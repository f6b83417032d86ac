#include <gtest/gtest.h>

#include "support/fakes.h"
#include "slots/lane_name.h"
#include "slots/lanes.h"
#include "slots/shm_network_state.h"
#include "routing/route_plan.h"
#include "routing/router.h"

namespace solgate {
namespace {

TEST(PickLaneAxis, MajorityOnOddAndEvenPoolsIgnoringZeros) {
    LaneAxisState s{};
    ShmLaneAxis s_memory(s);
    EXPECT_EQ(PickLaneAxis(s_memory, {100, 90, 95}, false, 1), 95u);
    LaneAxisState e{};
    ShmLaneAxis e_memory(e);
    EXPECT_EQ(PickLaneAxis(e_memory, {100, 90, 95, 80}, false, 1), 90u);
    LaneAxisState z{};
    ShmLaneAxis z_memory(z);
    EXPECT_EQ(PickLaneAxis(z_memory, {0, 100, 0}, false, 1), 100u);
    LaneAxisState none{};
    ShmLaneAxis none_memory(none);
    EXPECT_EQ(PickLaneAxis(none_memory, {0, 0}, false, 1), 0u);
}

TEST(PickLaneAxis, RegressionGuardHoldsLastGoodThenDisarms) {
    LaneAxisState s{};
    ShmLaneAxis s_memory(s);
    EXPECT_EQ(PickLaneAxis(s_memory, {5000, 5000, 5000}, false, 1000), 5000u);
    // Two of three swapped to a fork 2000 slots back: the pick falls more
    // than 1024 below max(second-highest head, last good).
    EXPECT_EQ(PickLaneAxis(s_memory, {5001, 3000, 3000}, false, 2000), 5000u);
    // capped at the highest live head
    EXPECT_EQ(PickLaneAxis(s_memory, {4900, 3000, 3000}, false, 3000), 4900u);
    // a minute later the lane accepts the new pick
    EXPECT_EQ(PickLaneAxis(s_memory, {4900, 3000, 3000}, false, 2000 + 60000), 3000u);
    EXPECT_EQ(PickLaneAxis(s_memory, {4900, 3001, 3001}, false, 2000 + 60001), 3001u);
}

TEST(PickLaneAxis, SmallDropsAreServedAsTheyAre) {
    LaneAxisState s{};
    ShmLaneAxis s_memory(s);
    PickLaneAxis(s_memory, {5000, 5000, 5000}, false, 1);
    EXPECT_EQ(PickLaneAxis(s_memory, {5000, 4000, 4000}, false, 2), 4000u);  // 1000
}

TEST(PickLaneAxis, FinalizedFloorNeverLowers) {
    LaneAxisState s{};
    ShmLaneAxis s_memory(s);
    EXPECT_EQ(PickLaneAxis(s_memory, {900, 900, 900}, true, 1), 900u);
    EXPECT_EQ(PickLaneAxis(s_memory, {880, 880, 880}, true, 2), 900u);
    EXPECT_EQ(PickLaneAxis(s_memory, {0, 0, 0}, true, 3), 900u);
    EXPECT_EQ(PickLaneAxis(s_memory, {950, 950, 950}, true, 4), 950u);
}

TEST(PickLaneAxis, AdvanceAgeAnchorMovesOnlyForward) {
    LaneAxisState s{};
    ShmLaneAxis s_memory(s);
    PickLaneAxis(s_memory, {100, 100}, false, 1000);
    EXPECT_EQ(s.anchor_ms.load(), 1000);
    PickLaneAxis(s_memory, {100, 100}, false, 5000);
    EXPECT_EQ(s.anchor_ms.load(), 1000);
    PickLaneAxis(s_memory, {101, 101}, false, 6000);
    EXPECT_EQ(s.anchor_ms.load(), 6000);
    EXPECT_EQ(s.max_head.load(), 101u);
}

// Four upstreams in two families, as an operator would tag them.
class LanePlanTest : public ::testing::Test {
protected:
    LanePlanTest() {
        const char* ids[] = {"archive-1", "archive-2", "edge-1", "edge-2"};
        const char* tags[] = {"family:archive", "family:archive",
                              "family:edge", "family:edge"};
        for (int i = 0; i < 4; i++) {
            UpstreamConf u(ids[i]);
            u.tags = {tags[i]};
            if (i < 2) {
                u.methods = {"getBlock", "getSlot", "getTransaction"};
            } else {
                u.ignore_methods = {"getBlock"};
            }
            network.AddUpstream(u);
        }
        std::string error;
        network.Bind(shared.get(), true, 0, &error);
        for (size_t i = 0; i < 4; i++) {
            network.record(i).processed = i < 2 ? 1000 + i : 2000 + i;
            network.record(i).finalized = i < 2 ? 960 + i : 1960 + i;
            network.record(i).shred = i < 2 ? 1003 : 2005;
        }
    }

    RoutePlan Plan(const std::string& method, std::string_view selector) {
        std::string body = R"({"jsonrpc":"2.0","id":1,"method":")" + method +
                           R"(","params":[1]})";
        request = ParseRpcRequest(body.data(), body.size());
        return PlanRoute(network, request, selector);
    }

    std::unique_ptr<NetworkShared> shared = std::make_unique<NetworkShared>();
    Network network{"mainnet", {}};
    RpcRequest request;
};

TEST_F(LanePlanTest, NoSelectorIsTheNetworkWideLane) {
    RoutePlan p = Plan("getSlot", "");
    EXPECT_EQ(p.lane, kAllLane);
    EXPECT_EQ(p.lane_name, "all");
    EXPECT_EQ(p.matched.size(), 4u);
}

TEST_F(LanePlanTest, SimpleSelectorOnAProperSubsetFormsANamedLane) {
    RoutePlan p = Plan("getSlot", "family:edge");
    ASSERT_TRUE(p.lane);
    EXPECT_EQ(p.lane_name, "edge");
    EXPECT_EQ(std::string(shared->lanes[*p.lane - 1].key),
              LaneKey({"edge-1", "edge-2"}));
    // the same upstreams through another selector share the lane
    RoutePlan q = Plan("getSlot", "edge-*");
    EXPECT_EQ(q.lane, p.lane);
    Tips tips = PlanTips(network, p, 1);
    EXPECT_EQ(tips.processed, 2002u);  // the group's tip, not the network's
    EXPECT_EQ(tips.indexed, 2005u);
    std::vector<unsigned char> allowed{0, 0, 1, 1};
    EXPECT_EQ(p.allowed, allowed);
}

TEST_F(LanePlanTest, NoLaneForOneMatchAllMatchedOrComplexSelectors) {
    RoutePlan one = Plan("getSlot", "edge-1");
    EXPECT_FALSE(one.lane);
    EXPECT_EQ(one.lane_name, "");
    EXPECT_EQ(PlanTips(network, one, 1).processed, 2002u);

    RoutePlan all = Plan("getSlot", "*");
    EXPECT_FALSE(all.lane);

    RoutePlan complex = Plan("getSlot", "edge-1 | edge-2");
    EXPECT_FALSE(complex.lane);
    EXPECT_EQ(complex.matched.size(), 2u);
    // the subset pick still applies, statelessly
    EXPECT_EQ(PlanTips(network, complex, 1).processed, 2002u);
}

TEST_F(LanePlanTest, TheCapLeavesGroupsWithoutALane) {
    for (size_t i = 0; i < kMaxLanes; i++) {
        network.tips().FindOrCreateLane("grp:" + std::to_string(i), "x", {0, 1});
    }
    RoutePlan p = Plan("getSlot", "family:edge");
    EXPECT_FALSE(p.lane);
    EXPECT_EQ(p.matched.size(), 2u);
    EXPECT_EQ(shared->counters.lane_cap_misses.load(), 1u);
    // once a lane is free again (a reload dropped a stale one), it gets one
    shared->lanes[3].state.store(LaneShared::kFree);
    EXPECT_TRUE(Plan("getSlot", "family:edge").lane);
}

TEST_F(LanePlanTest, OnlyServingUpstreamsReceiveAndCapTheTip) {
    RoutePlan p = Plan("getBlock", "");
    std::vector<unsigned char> archive_only{1, 1, 0, 0};
    EXPECT_EQ(p.allowed, archive_only);
    EXPECT_EQ(p.lane, kAllLane);  // the selector's lane ...
    Tips tips = PlanTips(network, p, 1);
    EXPECT_EQ(tips.processed, 1000u);  // ... capped at the archive majority
    EXPECT_EQ(tips.indexed, 1003u);    // and the archives' frontier
}

TEST_F(LanePlanTest, ServingSetsPerMethod) {
    using V = std::vector<unsigned char>;
    EXPECT_EQ(network.ServingSet("getBlock"), (V{1, 1, 0, 0}));
    EXPECT_EQ(network.ServingSet("getBlock"), (V{1, 1, 0, 0}));  // cached
    EXPECT_EQ(network.ServingSet("getSlot"), (V{1, 1, 1, 1}));
    EXPECT_EQ(network.ServingSet("getBalance"), (V{0, 0, 1, 1}));
    EXPECT_EQ(network.ServingSet("GETBLOCK"), (V{0, 0, 1, 1}));  // exact names
    Network plain("m", {});
    plain.AddUpstream(UpstreamConf("a"));
    EXPECT_EQ(plain.ServingSet("anything"), (V{1}));
}

TEST_F(LanePlanTest, AMethodNoMatchedUpstreamServesIsMethodNotFound) {
    RoutePlan p = Plan("getBlock", "family:edge");
    ASSERT_TRUE(p.error);
    EXPECT_EQ(p.error->code, kMethodNotFound);
    EXPECT_EQ(p.error->message,
              "Method not found: no upstream matching use-upstream selector "
              "\"family:edge\" serves getBlock");
}

TEST_F(LanePlanTest, SelectorErrorsAreInvalidParams) {
    RoutePlan bad = Plan("getSlot", "edge-1 |");
    ASSERT_TRUE(bad.error);
    EXPECT_EQ(bad.error->code, kInvalidParams);
    EXPECT_NE(bad.error->message.find("use-upstream selector \"edge-1 |\""),
              std::string::npos);
    RoutePlan none = Plan("getSlot", "nothing-*");
    ASSERT_TRUE(none.error);
    EXPECT_EQ(none.error->message,
              "Invalid params: use-upstream selector \"nothing-*\" matches no "
              "upstream of network \"mainnet\"");
}

TEST_F(LanePlanTest, ASelectorWhoseUpstreamsAreAllCordonedIsUnhealthy) {
    for (size_t i = 2; i < 4; i++) {
        network.record(i).SwapCordon(CordonOwner::kNone,
                                   {CordonOwner::kPoller, CordonCause::kShredLag, 1});
    }
    RoutePlan p = Plan("getSlot", "family:edge");
    ASSERT_TRUE(p.error);
    EXPECT_EQ(p.error->code, kNodeUnhealthy);
}

TEST_F(LanePlanTest, TheGuardUsesTheSubsetFrontier) {
    auto get_block = [&](uint64_t slot, std::string_view selector) {
        std::string body = R"({"jsonrpc":"2.0","id":1,"method":"getBlock",)"
                           R"("params":[)" + std::to_string(slot) + "]}";
        request = ParseRpcRequest(body.data(), body.size());
        RoutePlan plan = PlanRoute(network, request, selector);
        return RouteRequest(request, network, plan, 1);
    };
    // the archives hold up to 1003: 1007 is beyond their frontier + 3
    EXPECT_FALSE(get_block(1007, "family:archive").forward);
    EXPECT_TRUE(get_block(1006, "family:archive").forward);
}

}  // namespace
}  // namespace solgate
