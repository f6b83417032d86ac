#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "support/fakes.h"
#include "slots/response_hook.h"
#include "rpc/solana_methods.h"
#include "slots/slot_hooks.h"

namespace solgate {
namespace {

TEST(CorrectGetSlot, ProcessedAndNoneAreFloored) {
    Tips tips{1000, 968, 1002};
    for (auto c : {SG_COMMITMENT_PROCESSED, SG_COMMITMENT_NONE}) {
        EXPECT_EQ(CorrectGetSlot(c, 990, tips), 1000u);
        EXPECT_EQ(CorrectGetSlot(c, 1005, tips), 1005u);
    }
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_PROCESSED, 990, Tips{}), 990u);
    // never below what a client was already told
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_PROCESSED, 990, tips, 1010), 1010u);
    // ... unless that was a slot from another cluster or before a reset
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_PROCESSED, 990, tips, 50000000),
              1000u);
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_FINALIZED, 990, tips, 5000), 968u);
}

TEST(CorrectGetSlot, ProcessedIsHeldAtTheCeiling) {
    Tips tips{1000, 968, 1002};
    const SlotCeiling ceiling{1023, 23};
    for (auto c : {SG_COMMITMENT_PROCESSED, SG_COMMITMENT_NONE}) {
        // a node a little ahead of the last poll is believed
        EXPECT_EQ(CorrectGetSlot(c, 1023, tips, 0, ceiling), 1023u);
        // one far ahead of the nodes in rotation (an inflated slot) is
        // held at the ceiling
        EXPECT_EQ(CorrectGetSlot(c, 2000, tips, 0, ceiling), 1023u);
    }
    // what a client was told is kept up to the ceiling's lead above it
    // (a ceiling that dropped as a node left rotation moves no answer
    // back)...
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_PROCESSED, 990, tips, 1040, ceiling),
              1040u);
    // ... and dropped beyond: one bad answer pins nothing
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_PROCESSED, 990, tips, 1047, ceiling),
              1000u);
    // never below the tip, whatever the ceiling
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_PROCESSED, 990, tips, 0, {900, 23}),
              1000u);
    // no ceiling: the answer, floored by what was told unless that is far
    // above it
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_PROCESSED, 2000, Tips{}, 1990),
              2000u);
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_PROCESSED, 990, Tips{}, 1010),
              1010u);
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_PROCESSED, 990, Tips{}, 5000),
              990u);
    // confirmed and finalized do not read it
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_CONFIRMED, 2000, tips, 0, ceiling),
              2000u);
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_FINALIZED, 2000, tips, 0, ceiling),
              968u);
}

// The ceiling: the served tip of the nodes in rotation + max_slot_lag +
// the guard's margin. A stalled (cordoned), lagging or failing node does
// not vote, so it never holds the current ones' answers down.
TEST(GetSlotCeiling, TheNodesInRotationVote) {
    RoutePlan plan;
    plan.serving = {0, 1, 2};
    testing::TestNetwork t(3);
    EXPECT_EQ(GetSlotCeiling(t.network, plan).at, SlotCeiling{}.at);   // no slots
    SlotStore& views = t.network.slots();
    for (size_t i : {0, 1, 2}) {
        views.Suggest(i, kSlotProcessed, 1000 + i);
    }
    // the median, 1001, + 20 (max_slot_lag) + 2 + 400 ms / 400 ms
    EXPECT_EQ(GetSlotCeiling(t.network, plan).at, 1024u);
    EXPECT_EQ(GetSlotCeiling(t.network, plan).lead, 23u);
    // one node inflated: the others' median still holds it down
    views.Suggest(2, kSlotProcessed, 5000);
    EXPECT_EQ(GetSlotCeiling(t.network, plan).at, 1024u);
    // two nodes, one far behind (lagging): only the current one votes
    testing::TestNetwork pair(2);
    plan.serving = {0, 1};
    for (auto [i, slot] : {std::pair<size_t, uint64_t>{0, 1000}, {1, 900}}) {
        pair.network.slots().Suggest(i, kSlotProcessed, slot);
        pair.network.slots().Observe(i, slot);   // as a poll sees it
    }
    ASSERT_TRUE(pair.network.LaggingInNetwork(1));
    EXPECT_EQ(GetSlotCeiling(pair.network, plan).at, 1023u);
    // max_slot_lag 0: lag not judged, the old bound
    NetworkSettings settings;
    settings.max_slot_lag = 0;
    testing::TestNetwork loose(3, settings);
    plan.serving = {0, 1, 2};
    for (size_t i : {0, 1, 2}) {
        loose.network.slots().Suggest(i, kSlotProcessed, 1000);
    }
    EXPECT_EQ(GetSlotCeiling(loose.network, plan).at, 1000u + kToleratedSlotRollback);
}

TEST(CorrectGetSlot, ConfirmedIsUntouched) {
    Tips tips{1000, 968, 1002};
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_CONFIRMED, 900, tips), 900u);
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_CONFIRMED, 1100, tips), 1100u);
}

TEST(CorrectGetSlot, FinalizedClampsBothWaysToTheIndexedFinalizedTip) {
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_FINALIZED, 900, {1000, 968, 1002}),
              968u);
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_FINALIZED, 990, {1000, 968, 1002}),
              968u);
    // a slow indexer caps it lower than the finalized tip
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_FINALIZED, 968, {1000, 968, 950}),
              950u);
}

TEST(CorrectGetSlot, FinalizedFallsBackToA32SlotLag) {
    // indexed tip unknown: finalized tip - 32
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_FINALIZED, 968, {1000, 968, 0}),
              936u);
    // nothing known: the answer - 32
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_FINALIZED, 968, Tips{}), 936u);
    EXPECT_EQ(CorrectGetSlot(SG_COMMITMENT_FINALIZED, 10, Tips{}), 10u);
}

TEST(BlockUnavailable, MarginAndFailOpen) {
    Tips tips{0, 0, 1000};
    EXPECT_FALSE(BlockUnavailable(1003, tips, 3));
    EXPECT_TRUE(BlockUnavailable(1004, tips, 3));
    EXPECT_FALSE(BlockUnavailable(5, tips, 3));
    EXPECT_FALSE(BlockUnavailable(UINT64_MAX, Tips{}, 3));
}

TEST(Harvest, FinalizedFeedsBothViewsWeakerOnlyLatest) {
    testing::TestNetwork net(1);
    UpstreamRecord& s = net.network.record(0);
    HarvestContextSlot(net.network, 0, SG_COMMITMENT_CONFIRMED, 500, 77);
    EXPECT_EQ(s.processed.load(), 500u);
    EXPECT_EQ(s.finalized.load(), 0u);
    EXPECT_EQ(s.processed_seen_ms.load(), 77);
    EXPECT_EQ(s.finalized_seen_ms.load(), 0);

    HarvestContextSlot(net.network, 0, SG_COMMITMENT_FINALIZED, 600, 88);
    EXPECT_EQ(s.processed.load(), 600u);
    EXPECT_EQ(s.finalized.load(), 600u);
    EXPECT_EQ(s.finalized_seen_ms.load(), 88);

    // a value the view refuses does not make it fresh
    HarvestContextSlot(net.network, 0, SG_COMMITMENT_PROCESSED, 590, 99);
    EXPECT_EQ(s.processed.load(), 600u);
    EXPECT_EQ(s.processed_seen_ms.load(), 88);
    EXPECT_EQ(s.host.harvested.load(), 3u);
}

// A poll (or another host) that got to the slot first leaves traffic at
// the view's own slot: that still keeps the view fresh, or the gate would
// poll on as long as the polls keep winning the race.
TEST(Harvest, AnAnswerAtTheViewsSlotKeepsItFresh) {
    testing::TestNetwork net(1);
    UpstreamRecord& s = net.network.record(0);
    s.processed = 700;
    s.finalized = 668;
    HarvestContextSlot(net.network, 0, SG_COMMITMENT_PROCESSED, 700, 50);
    EXPECT_EQ(s.processed_seen_ms.load(), 50);
    EXPECT_EQ(s.finalized_seen_ms.load(), 0);
    HarvestContextSlot(net.network, 0, SG_COMMITMENT_FINALIZED, 668, 60);
    EXPECT_EQ(s.finalized_seen_ms.load(), 60);
    EXPECT_EQ(s.processed_seen_ms.load(), 50);   // 668 trails processed
    EXPECT_EQ(s.processed.load(), 700u);
    EXPECT_EQ(s.finalized.load(), 668u);

    // no slot (0) confirms no view, not even one never filled
    testing::TestNetwork empty(1);
    HarvestContextSlot(empty.network, 0, SG_COMMITMENT_FINALIZED, 0, 70);
    EXPECT_EQ(empty.network.record(0).processed_seen_ms.load(), 0);
    EXPECT_EQ(empty.network.record(0).finalized_seen_ms.load(), 0);
}

TEST(IsEnvelopeMethod, OnlyEnvelopes) {
    EXPECT_TRUE(IsEnvelopeMethod("getBalance"));
    EXPECT_TRUE(IsEnvelopeMethod("simulateTransaction"));
    EXPECT_FALSE(IsEnvelopeMethod("getSlot"));
    EXPECT_FALSE(IsEnvelopeMethod("getBlock"));
    EXPECT_FALSE(IsEnvelopeMethod("getTransaction"));
}

// The switch by length says what the list it replaced said, for every
// method Solgate knows by name and for near misses.
TEST(IsEnvelopeMethod, TheListOfEighteen) {
    const std::vector<std::string_view> envelopes{
        "getAccountInfo", "getBalance", "getBlockProduction",
        "getFeeForMessage", "getLargestAccounts", "getLatestBlockhash",
        "getMultipleAccounts", "getProgramAccounts", "getSignatureStatuses",
        "getStakeMinimumDelegation", "getSupply", "getTokenAccountBalance",
        "getTokenAccountsByDelegate", "getTokenAccountsByOwner",
        "getTokenLargestAccounts", "getTokenSupply", "isBlockhashValid",
        "simulateTransaction"};
    auto listed = [&](std::string_view method) {
        return std::find(envelopes.begin(), envelopes.end(), method) !=
               envelopes.end();
    };
    size_t known_envelopes = 0;
    for (size_t i = 0; i < SolanaMethodCount(); i++) {
        std::string_view name = SolanaMethodName(i);
        EXPECT_EQ(IsEnvelopeMethod(name), listed(name)) << name;
        known_envelopes += listed(name) ? 1 : 0;
    }
    EXPECT_EQ(known_envelopes, envelopes.size());   // all of them known
    for (std::string_view name : envelopes) {
        std::string near(name);
        near.back() ^= 0x20;   // the last letter's case
        EXPECT_FALSE(IsEnvelopeMethod(near)) << near;
        near = "x" + std::string(name.substr(1));   // the first byte
        EXPECT_FALSE(IsEnvelopeMethod(near)) << near;
        EXPECT_FALSE(IsEnvelopeMethod(name.substr(0, name.size() - 1)));
        EXPECT_FALSE(IsEnvelopeMethod(std::string(name) + "s"));
    }
    EXPECT_FALSE(IsEnvelopeMethod(""));
}

class ResponseHookTest : public ::testing::Test {
protected:
    std::optional<ResponseHook> Hook(const std::string& body) {
        request = ParseRpcRequest(body.data(), body.size());
        plan = PlanRoute(net.network, request, "");
        now_ms += Network::kHarvestGapMs;   // a harvest turn apart
        return ResponseHook::For(net.network, request, plan, 0, now_ms);
    }

    testing::TestNetwork net{3};
    RpcRequest request;
    RoutePlan plan;
    int64_t now_ms = 0;
};

TEST_F(ResponseHookTest, OnlyGetSlotAndEnvelopesOfSingleCalls) {
    EXPECT_EQ(Hook(R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})")->kind(),
              ResponseHook::Kind::kRewriteSlot);
    EXPECT_EQ(Hook(R"({"jsonrpc":"2.0","id":1,"method":"getBalance"})")->kind(),
              ResponseHook::Kind::kHarvest);
    EXPECT_FALSE(Hook(R"({"jsonrpc":"2.0","id":1,"method":"getBlockHeight"})"));
    EXPECT_FALSE(Hook(R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"}])"));
}

TEST_F(ResponseHookTest, GetSlotAnswerRaisedToTheProcessedTip) {
    for (size_t i = 0; i < 3; i++) net.network.record(i).processed = 1000 + i;
    auto hook = Hook(R"({"jsonrpc":"2.0","id":"a","method":"getSlot"})");
    auto c = hook->Rewrite(R"({"jsonrpc":"2.0","result":995,"id":"a"})", 0);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->body, R"({"jsonrpc":"2.0","result":1001,"id":"a"})");
    EXPECT_EQ(c->from, 995u);
    EXPECT_EQ(c->to, 1001u);
    EXPECT_EQ(net.network.counters().getslot_corrections.load(), 1u);
    EXPECT_FALSE(hook->Rewrite(R"({"jsonrpc":"2.0","result":1002,"id":"a"})", 0));
    EXPECT_FALSE(hook->Rewrite(R"({"jsonrpc":"2.0","error":{"code":-32005,)"
                               R"("message":"x"},"id":"a"})", 0));
}

TEST_F(ResponseHookTest, ProcessedAnswersNeverGoBackwardsAcrossUpstreams) {
    net.network.record(0).processed = 1000;  // the majority tip is 990
    net.network.record(1).processed = 990;
    net.network.record(2).processed = 950;
    auto hook = Hook(R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})");
    EXPECT_FALSE(hook->Rewrite(R"({"jsonrpc":"2.0","result":1000,"id":1})", 0));
    auto c = hook->Rewrite(R"({"jsonrpc":"2.0","result":950,"id":1})", 0);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->to, 1000u);  // not just the tip (990)
}

TEST_F(ResponseHookTest, AFarAheadAnswerDoesNotPinTheFloor) {
    for (size_t i = 0; i < 3; i++) net.network.record(i).processed = 1000;
    net.shared->processed_answered = 90000000;  // a devnet answer
    auto hook = Hook(R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})");
    EXPECT_FALSE(hook->Rewrite(R"({"jsonrpc":"2.0","result":1001,"id":1})", 0));
    EXPECT_EQ(net.shared->processed_answered.load(), 1001u);
    EXPECT_EQ(net.network.counters().answered_rollbacks.load(), 1u);
}

TEST_F(ResponseHookTest, HarvestFeedsTheAnsweringUpstream) {
    auto hook = Hook(R"({"jsonrpc":"2.0","id":1,"method":"getBalance",)"
                     R"("params":["x",{"commitment":"finalized"}]})");
    std::string body = R"({"jsonrpc":"2.0","result":{"context":{"slot":4242},)"
                       R"("value":1},"id":1})";
    EXPECT_FALSE(hook->Feed(body.data(), 20, 5));
    EXPECT_TRUE(hook->Feed(body.data() + 20, body.size() - 20, 5));
    EXPECT_EQ(net.network.record(0).finalized.load(), 4242u);
    EXPECT_EQ(net.network.record(0).processed.load(), 4242u);
    EXPECT_EQ(net.network.record(1).processed.load(), 0u);
}

TEST_F(ResponseHookTest, DefaultCommitmentRoutesTheHarvest) {
    NetworkSettings s;
    s.default_commitment = SG_COMMITMENT_FINALIZED;
    testing::TestNetwork fin(1, s);
    std::string body = R"({"jsonrpc":"2.0","id":1,"method":"getBalance"})";
    request = ParseRpcRequest(body.data(), body.size());
    plan = PlanRoute(fin.network, request, "");
    auto hook = ResponseHook::For(fin.network, request, plan, 0, 0);
    std::string reply = R"({"jsonrpc":"2.0","result":{"context":{"slot":7},)"
                        R"("value":1},"id":1})";
    hook->Feed(reply.data(), reply.size(), 1);
    EXPECT_EQ(fin.network.record(0).finalized.load(), 7u);
}

}  // namespace
}  // namespace solgate
