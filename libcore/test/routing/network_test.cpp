#include <gtest/gtest.h>

#include "support/fakes.h"
#include "routing/network.h"

namespace solgate {
namespace {

using testing::TestNetwork;

TEST(Network, TipsFollowTheMajorityAndIndexedIsMax) {
    TestNetwork t(3);
    auto& n = t.network;
    n.record(0).processed = 100; n.record(1).processed = 110; n.record(2).processed = 90;
    n.record(0).finalized = 60;  n.record(1).finalized = 70;
    n.record(0).shred = 101;     n.record(1).shred = 112;    n.record(2).shred = 95;
    Tips tips = n.CurrentTips();
    EXPECT_EQ(tips.processed, 100u);
    EXPECT_EQ(tips.finalized, 60u);
    EXPECT_EQ(tips.indexed, 112u);
}

TEST(Network, GuardMarginFollowsDebounce) {
    for (auto [debounce, margin] : std::vector<std::pair<uint32_t, uint64_t>>{
             {400, 3}, {800, 4}, {1000, 4}, {2000, 7}, {100, 2}}) {
        NetworkSettings s;
        s.debounce_ms = debounce;
        TestNetwork t(1, s);
        EXPECT_EQ(t.network.GuardMargin(), margin) << debounce;
    }
}

TEST(Network, PickRotatesSkipsCordonedAndTried) {
    TestNetwork t(3);
    auto& n = t.network;
    bool all = false;
    EXPECT_EQ(n.Pick(nullptr, std::nullopt, &all), 0u);
    EXPECT_EQ(n.Pick(nullptr, std::nullopt, &all), 1u);
    EXPECT_EQ(n.Pick(nullptr, std::nullopt, &all), 2u);
    n.record(1).SwapCordon(CordonOwner::kNone,
                         {CordonOwner::kPoller, CordonCause::kUnhealthy, 1});
    for (int i = 0; i < 6; i++) {
        EXPECT_NE(n.Pick(nullptr, std::nullopt, &all), 1u);
        EXPECT_FALSE(all);
    }
    unsigned char tried[3] = {1, 0, 0};
    EXPECT_EQ(n.Pick(tried, std::nullopt, &all), 2u);
    tried[2] = 1;
    // the healthy ones failed: the cordoned one is the last resort
    EXPECT_EQ(n.Pick(tried, std::nullopt, &all), 1u);
    EXPECT_FALSE(all);
    tried[1] = 1;
    EXPECT_FALSE(n.Pick(tried, std::nullopt, &all));
}

TEST(Network, AllCordonedFallsBackToAll) {
    TestNetwork t(2);
    for (size_t i = 0; i < 2; i++) {
        t.network.record(i).SwapCordon(
            CordonOwner::kNone, {CordonOwner::kPoller, CordonCause::kShredLag, 1});
    }
    bool all = false;
    EXPECT_TRUE(t.network.Pick(nullptr, std::nullopt, &all));
    EXPECT_TRUE(all);
}

TEST(Network, MinContextSlotPrefersUpstreamsThatReachedIt) {
    TestNetwork t(3);
    auto& n = t.network;
    n.record(0).processed = 100; n.record(1).processed = 300; n.record(2).processed = 200;
    bool all = false;
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ(n.Pick(nullptr, 250, &all), 1u);
    }
    unsigned char tried[3] = {0, 1, 0};
    auto p = n.Pick(tried, 250, &all);  // nobody else reached it: any
    EXPECT_TRUE(p == 0u || p == 2u);
}

TEST(Network, RebindKeepsStateByIdAndRetiresRemoved) {
    auto shared = std::make_unique<NetworkShared>();
    std::string error;
    Network first("m", {});
    first.AddUpstream({"a", {}});
    first.AddUpstream({"b", {}});
    ASSERT_TRUE(first.Bind(shared.get(), true, 0, &error));
    first.record(1).processed = 777;
    ClaimLease(first.record(0).lease, 42, 0, 2000);  // "a" polled until 2000

    Network second("m", {});
    second.AddUpstream({"c", {}});
    second.AddUpstream({"b", {}});
    ASSERT_TRUE(second.Bind(shared.get(), false, 100, &error));
    EXPECT_EQ(second.record(1).processed.load(), 777u);  // "b" kept its view
    EXPECT_EQ(std::string(second.record(0).id), "c");
    EXPECT_EQ(second.record(0).processed.load(), 0u);
    EXPECT_EQ(shared->records[0].use.load(), UpstreamRecord::kRetired);  // "a"

    Network third("m", {});
    third.AddUpstream({"a", {}});  // came back while retired: same state
    ASSERT_TRUE(third.Bind(shared.get(), false, 200, &error));
    EXPECT_EQ(&third.record(0), &shared->records[0]);
}

TEST(Network, RetiredSlotReusedOnlyAfterLeaseExpires) {
    auto shared = std::make_unique<NetworkShared>();
    std::string error;
    {
        Network n("m", {});
        for (size_t i = 0; i < kMaxUpstreams; i++) {
            n.AddUpstream({"u" + std::to_string(i), {}});
        }
        ASSERT_TRUE(n.Bind(shared.get(), true, 0, &error));
        ClaimLease(n.record(0).lease, 42, 0, 2000);
    }
    Network n("m", {});
    for (size_t i = 1; i < kMaxUpstreams; i++) {
        n.AddUpstream({"u" + std::to_string(i), {}});
    }
    n.AddUpstream({"new", {}});
    EXPECT_FALSE(n.Bind(shared.get(), false, 1000, &error));  // still leased
    EXPECT_NE(error.find("no free upstream slot"), std::string::npos);
    Network later("m", {});
    for (size_t i = 1; i < kMaxUpstreams; i++) {
        later.AddUpstream({"u" + std::to_string(i), {}});
    }
    later.AddUpstream({"new", {}});
    EXPECT_TRUE(later.Bind(shared.get(), false, 2000, &error));
}

}  // namespace
}  // namespace solgate
