#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

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

// A request's plan reads a selector's group where the network caches it
// (no copy); past the cache's size, a new text is resolved into the
// caller's scratch group, as correct, only not kept.
TEST(Network, ASelectorsGroupIsReadFromTheCacheOrMadeInScratch) {
    TestNetwork t(4);
    const Network& n = t.network;
    SelectorGroup scratch;
    const SelectorGroup& first = n.ResolveSelectorInto("up-*", &scratch);
    EXPECT_NE(&first, &scratch);   // cached as it was made
    EXPECT_EQ(first.matched, (std::vector<size_t>{0, 1, 2, 3}));
    SelectorGroup other_scratch;
    EXPECT_EQ(&n.ResolveSelectorInto("up-*", &other_scratch), &first);
    const SelectorGroup& bad = n.ResolveSelectorInto("up-1 |", &scratch);
    EXPECT_FALSE(bad.error.empty());
    EXPECT_TRUE(bad.matched.empty());
    for (size_t i = 0; n.ResolveSelectorInto("up-" + std::to_string(i % 4) +
                                                  "|x" + std::to_string(i),
                                              &scratch)
                           .matched.size() == 1 &&
                       i < 2 * Network::kCachedSelectors;
         i++) {
    }
    // the cache is full: resolved in scratch, the same group as a copy
    const SelectorGroup& late = n.ResolveSelectorInto("up-2|up-3", &scratch);
    EXPECT_EQ(&late, &scratch);
    EXPECT_EQ(late.matched, (std::vector<size_t>{2, 3}));
    EXPECT_TRUE(late.error.empty());
    SelectorGroup copy = n.ResolveSelector("up-2|up-3");
    EXPECT_EQ(copy.matched, late.matched);
    EXPECT_EQ(copy.lane, late.lane);
    EXPECT_EQ(copy.lane_name, late.lane_name);
    EXPECT_EQ(n.ResolveSelector("up-*").matched, first.matched);
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

// One pick over every upstream; *all tells "every upstream is cordoned".
std::optional<size_t> PickOne(const Network& n, const unsigned char* tried,
                              std::optional<uint64_t> min_context_slot,
                              bool* all, uint64_t lag_reference = 0,
                              int64_t now_ms = 0) {
    Network::PickRequest request;
    request.tried = tried;
    request.min_context_slot = min_context_slot;
    request.lag_reference = lag_reference;
    request.now_ms = now_ms;
    auto picked = n.Pick(request);
    *all = picked && picked->all_cordoned;
    return picked ? std::optional<size_t>(picked->upstream) : std::nullopt;
}

void CordonByPoller(Network& n, size_t i) {
    n.record(i).SwapCordon(CordonOwner::kNone,
                           {CordonOwner::kPoller, CordonCause::kUnhealthy, 1});
}

TEST(Network, PickRotatesSkipsCordonedAndTried) {
    TestNetwork t(3);
    auto& n = t.network;
    bool all = false;
    EXPECT_EQ(PickOne(n, nullptr, std::nullopt, &all), 0u);
    EXPECT_EQ(PickOne(n, nullptr, std::nullopt, &all), 1u);
    EXPECT_EQ(PickOne(n, nullptr, std::nullopt, &all), 2u);
    CordonByPoller(n, 1);
    for (int i = 0; i < 6; i++) {
        EXPECT_NE(PickOne(n, nullptr, std::nullopt, &all), 1u);
        EXPECT_FALSE(all);
    }
    unsigned char tried[3] = {1, 0, 0};
    EXPECT_EQ(PickOne(n, tried, std::nullopt, &all), 2u);
    tried[2] = 1;
    // the healthy ones failed: the cordoned one is the last resort
    EXPECT_EQ(PickOne(n, tried, std::nullopt, &all), 1u);
    EXPECT_FALSE(all);
    tried[1] = 1;
    EXPECT_FALSE(PickOne(n, tried, std::nullopt, &all));
}

TEST(Network, AllCordonedFallsBackToAll) {
    TestNetwork t(2);
    for (size_t i = 0; i < 2; i++) {
        CordonByPoller(t.network, i);
    }
    bool all = false;
    EXPECT_TRUE(PickOne(t.network, nullptr, std::nullopt, &all));
    EXPECT_TRUE(all);
}

TEST(Network, MinContextSlotPrefersUpstreamsThatReachedIt) {
    TestNetwork t(3);
    auto& n = t.network;
    n.record(0).processed = 100; n.record(1).processed = 300; n.record(2).processed = 200;
    bool all = false;
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ(PickOne(n, nullptr, 250, &all), 1u);
    }
    unsigned char tried[3] = {0, 1, 0};
    auto p = PickOne(n, tried, 250, &all);  // nobody else reached it: any
    EXPECT_TRUE(p == 0u || p == 2u);
}

// max_slot_lag: the slot last observed from a node, against its group's
// upper median; a node that went back is behind although its view (which
// tolerates rollbacks) still shows the old maximum.
TEST(Network, LaggingUpstreamsGetNothingWhileOthersAreCurrent) {
    TestNetwork t(3);  // max_slot_lag 20
    auto& n = t.network;
    for (size_t i = 0; i < 3; i++) {
        n.slots().Suggest(i, kSlotProcessed, 1000);
        n.slots().Observe(i, 1000);
    }
    n.slots().Observe(2, 920);   // 80 behind
    uint64_t ref = n.LagReferenceOf({0, 1, 2});
    EXPECT_EQ(ref, 1000u);
    EXPECT_EQ(n.SlotLagOf(2, ref), 80u);
    bool all = false;
    for (int i = 0; i < 30; i++) {
        EXPECT_NE(PickOne(n, nullptr, std::nullopt, &all, ref), 2u);
    }
    // within the limit again: its turn comes back
    n.slots().Observe(2, 985);
    std::set<size_t> seen;
    for (int i = 0; i < 6; i++) {
        seen.insert(*PickOne(n, nullptr, std::nullopt, &all, ref));
    }
    EXPECT_EQ(seen.size(), 3u);
    // everyone else failed: a lagging node beats no answer
    n.slots().Observe(2, 700);
    unsigned char tried[3] = {1, 1, 0};
    EXPECT_EQ(PickOne(n, tried, std::nullopt, &all, ref), 2u);
    // lag reference 0 (max_slot_lag 0 or nothing known): nobody lags
    unsigned char only2[3] = {1, 1, 0};
    EXPECT_EQ(PickOne(n, only2, std::nullopt, &all, 0), 2u);
}

TEST(Network, LagReferenceIsTheUpperMedian) {
    TestNetwork t(4);
    auto& n = t.network;
    n.slots().Suggest(0, kSlotProcessed, 500);
    EXPECT_EQ(n.LagReferenceOf({0, 1}), 500u);  // an unknown view is left out
    n.slots().Suggest(1, kSlotProcessed, 400);
    EXPECT_EQ(n.LagReferenceOf({0, 1}), 500u);  // two: the higher
    n.slots().Suggest(2, kSlotProcessed, 100000);
    EXPECT_EQ(n.LagReferenceOf({0, 1, 2}), 500u);  // one far ahead moves nothing
    n.slots().Suggest(3, kSlotProcessed, 450);
    EXPECT_EQ(n.LagReferenceOf({0, 1, 2, 3}), 500u);
    EXPECT_EQ(n.LagReferenceOf({}), 0u);
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
