// ResponseHook: which responses get a hook, context.slot harvesting as a
// body streams in, and getSlot corrections by commitment. (slot_hooks_test
// covers the processed-tip raise, the answered memory across upstreams
// and a finalized harvest split in two.)
#include <gtest/gtest.h>

#include <string>

#include "slots/response_hook.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::TestNetwork;

std::string Call(const std::string& method, const std::string& params = "") {
    return R"({"jsonrpc":"2.0","id":1,"method":")" + method + "\"" +
           (params.empty() ? "" : ",\"params\":" + params) + "}";
}

std::string Envelope(uint64_t slot) {
    return R"({"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.1",)"
           R"("slot":)" + std::to_string(slot) +
           R"(},"value":{"lamports":5}},"id":1})";
}

class ResponseHooks : public ::testing::Test {
protected:
    std::optional<ResponseHook> Hook(const std::string& body,
                                     size_t upstream = 0,
                                     const std::string& selector = "") {
        request_ = ParseRpcRequest(body.data(), body.size());
        plan_ = PlanRoute(net_.network, request_, selector);
        // each a harvest turn apart, as a test's hooks stand for responses
        // far apart in time
        now_ms_ += Network::kHarvestGapMs;
        return ResponseHook::For(net_.network, request_, plan_, upstream,
                                 now_ms_);
    }

    void Tips(uint64_t processed, uint64_t finalized, uint64_t shred) {
        for (size_t i = 0; i < net_.network.size(); i++) {
            net_.network.record(i).processed = processed;
            net_.network.record(i).finalized = finalized;
            net_.network.record(i).shred = shred;
        }
    }

    std::optional<ResponseHook::Correction> Rewrite(ResponseHook& hook,
                                                    uint64_t answer) {
        return hook.Rewrite(R"({"jsonrpc":"2.0","result":)" +
                                std::to_string(answer) + R"(,"id":1})",
                            0);
    }

    NetworkShared& shared() { return *net_.shared; }

    TestNetwork net_{3};
    RpcRequest request_;
    RoutePlan plan_;
    int64_t now_ms_ = 0;
};

// --- which responses get a hook -------------------------------------------

TEST_F(ResponseHooks, EnvelopeMethodsAreHarvested) {
    for (const char* method : {"getAccountInfo", "getMultipleAccounts",
                               "getProgramAccounts", "simulateTransaction",
                               "getLatestBlockhash", "getSignatureStatuses",
                               "isBlockhashValid"}) {
        auto hook = Hook(Call(method));
        ASSERT_TRUE(hook) << method;
        EXPECT_EQ(hook->kind(), ResponseHook::Kind::kHarvest) << method;
    }
}

// One response per upstream, view and harvest turn is read for context.slot:
// the others of those 20 ms go through untouched; getSlot is always read.
TEST_F(ResponseHooks, AnUpstreamsEnvelopesAreHarvestedOncePerTurn) {
    std::string balance = Call("getBalance", R"(["x"])");
    std::string slot = Call("getSlot");
    request_ = ParseRpcRequest(balance.data(), balance.size());
    plan_ = PlanRoute(net_.network, request_, "");
    auto at = [&](size_t upstream, int64_t now_ms) {
        return ResponseHook::For(net_.network, request_, plan_, upstream,
                                 now_ms).has_value();
    };
    EXPECT_TRUE(at(0, 1000));
    EXPECT_FALSE(at(0, 1000));
    EXPECT_FALSE(at(0, 1000 + Network::kHarvestGapMs - 1));
    EXPECT_TRUE(at(1, 1005)) << "each upstream has its own turn";
    EXPECT_TRUE(at(0, 1000 + Network::kHarvestGapMs));
    EXPECT_FALSE(at(0, 1000 + Network::kHarvestGapMs));

    // a finalized answer feeds another view: it has a turn of its own, so
    // traffic that alternates commitments cannot starve one view
    std::string finalized = Call("getBalance", R"(["x",{"commitment":"finalized"}])");
    RpcRequest final_request = ParseRpcRequest(finalized.data(), finalized.size());
    RoutePlan final_plan = PlanRoute(net_.network, final_request, "");
    auto final_at = [&](int64_t now_ms) {
        return ResponseHook::For(net_.network, final_request, final_plan, 0,
                                 now_ms).has_value();
    };
    EXPECT_TRUE(final_at(1000 + Network::kHarvestGapMs));
    EXPECT_FALSE(final_at(1000 + Network::kHarvestGapMs + 1));
    EXPECT_FALSE(at(0, 1000 + Network::kHarvestGapMs + 1));

    RpcRequest get_slot = ParseRpcRequest(slot.data(), slot.size());
    RoutePlan slot_plan = PlanRoute(net_.network, get_slot, "");
    for (int i = 0; i < 3; i++) {
        auto hook = ResponseHook::For(net_.network, get_slot, slot_plan, 0,
                                      1000 + Network::kHarvestGapMs);
        ASSERT_TRUE(hook);
        EXPECT_EQ(hook->kind(), ResponseHook::Kind::kRewriteSlot);
    }
}

TEST_F(ResponseHooks, GetSlotIsRewrittenWhateverItsCommitment) {
    for (const char* params : {"", R"([{"commitment":"processed"}])",
                               R"([{"commitment":"confirmed"}])",
                               R"([{"commitment":"finalized"}])"}) {
        auto hook = Hook(Call("getSlot", params));
        ASSERT_TRUE(hook) << params;
        EXPECT_EQ(hook->kind(), ResponseHook::Kind::kRewriteSlot) << params;
    }
}

TEST_F(ResponseHooks, OtherMethodsAndShapesGetNone) {
    for (const char* method : {"getBlock", "getTransaction", "getHealth",
                               "getBlockHeight", "sendTransaction",
                               "getEpochInfo", "getslot"}) {
        EXPECT_FALSE(Hook(Call(method))) << method;
    }
    EXPECT_FALSE(Hook("[" + Call("getSlot") + "]"));
    EXPECT_FALSE(Hook("[" + Call("getBalance") + "," + Call("getSlot") + "]"));
    EXPECT_FALSE(Hook("not json"));
}

TEST_F(ResponseHooks, AnUpstreamOutsideTheNetworkGetsNone) {
    EXPECT_TRUE(Hook(Call("getSlot"), 2));
    EXPECT_FALSE(Hook(Call("getSlot"), 3));
    EXPECT_FALSE(Hook(Call("getBalance"), 99));
}

TEST_F(ResponseHooks, AnUnboundNetworkGetsNone) {
    Network unbound("mainnet", NetworkSettings{});
    unbound.AddUpstream({"up-0", {"http://10.0.0.1/", "", "", ""}});
    std::string body = Call("getSlot");
    RpcRequest request = ParseRpcRequest(body.data(), body.size());
    RoutePlan plan;
    EXPECT_FALSE(ResponseHook::For(unbound, request, plan, 0, 0));
}

// --- EffectiveCommitment ----------------------------------------------------

TEST(EffectiveCommitment, TheCallsOwnElseTheNetworkDefault) {
    NetworkSettings settings;
    RpcCall call;
    EXPECT_EQ(EffectiveCommitment(call, settings), SG_COMMITMENT_NONE);
    settings.default_commitment = SG_COMMITMENT_CONFIRMED;
    EXPECT_EQ(EffectiveCommitment(call, settings), SG_COMMITMENT_CONFIRMED);
    call.commitment = SG_COMMITMENT_FINALIZED;
    EXPECT_EQ(EffectiveCommitment(call, settings), SG_COMMITMENT_FINALIZED);
    call.commitment = SG_COMMITMENT_PROCESSED;
    EXPECT_EQ(EffectiveCommitment(call, settings), SG_COMMITMENT_PROCESSED);
}

// --- harvesting context.slot --------------------------------------------------

TEST_F(ResponseHooks, AByteAtATimeHarvestFeedsOnlyTheLatestView) {
    auto hook = Hook(Call("getBalance", R"(["x",{"commitment":"confirmed"}])"),
                     2);
    std::string body = Envelope(777);
    size_t fed = 0;
    bool done = false;
    while (!done && fed < body.size()) {
        done = hook->Feed(body.data() + fed, 1, 42);
        fed++;
    }
    EXPECT_TRUE(done);
    // It stops reading once the slot number has ended, long before "value".
    EXPECT_LT(fed, body.find("value"));
    UpstreamRecord& answering = net_.network.record(2);
    EXPECT_EQ(answering.processed.load(), 777u);
    EXPECT_EQ(answering.processed_seen_ms.load(), 42);
    EXPECT_EQ(answering.finalized.load(), 0u);
    EXPECT_EQ(answering.host.harvested.load(), 1u);
    EXPECT_EQ(net_.network.record(0).processed.load(), 0u);
    EXPECT_EQ(net_.network.record(1).processed.load(), 0u);
}

TEST_F(ResponseHooks, OnceDoneFeedAndFinishChangeNothing) {
    auto hook = Hook(Call("getBalance"));
    std::string body = Envelope(500);
    EXPECT_TRUE(hook->Feed(body.data(), body.size(), 1));
    std::string later = Envelope(900);
    EXPECT_TRUE(hook->Feed(later.data(), later.size(), 2));
    hook->Finish(3);
    EXPECT_EQ(net_.network.record(0).processed.load(), 500u);
    EXPECT_EQ(net_.network.record(0).processed_seen_ms.load(), 1);
    EXPECT_EQ(net_.network.record(0).host.harvested.load(), 1u);
}

TEST_F(ResponseHooks, ABodyWithoutTheSlotHarvestsNothing) {
    for (const std::string& body :
         {std::string(R"({"jsonrpc":"2.0","error":{"code":-32602,)"
                      R"("message":"bad"},"id":1})"),
          std::string(R"({"jsonrpc":"2.0","result":5,"id":1})"),
          std::string(R"({"jsonrpc":"2.0","result":{"value":1},"id":1})"),
          std::string(R"({"jsonrpc":"2.0","result":{"context":)"
                      R"({"slot":"12"}},"id":1})"),
          std::string("[1,2,3]"), std::string("<html>")}) {
        auto hook = Hook(Call("getBalance"));
        EXPECT_TRUE(hook->Feed(body.data(), body.size(), 1)) << body;
        hook->Finish(1);
        EXPECT_EQ(net_.network.record(0).host.harvested.load(), 0u) << body;
        EXPECT_EQ(net_.network.record(0).processed.load(), 0u) << body;
    }
}

TEST_F(ResponseHooks, ACutBodyIsFinishedWithoutAHarvest) {
    auto hook = Hook(Call("getBalance"));
    // Cut inside the slot number: it might have gone on.
    std::string cut = R"({"jsonrpc":"2.0","result":{"context":{"slot":4242)";
    EXPECT_FALSE(hook->Feed(cut.data(), cut.size(), 1));
    hook->Finish(1);
    EXPECT_TRUE(hook->Feed("}", 1, 1));   // finished: nothing more read
    EXPECT_EQ(net_.network.record(0).processed.load(), 0u);
    EXPECT_EQ(net_.network.record(0).host.harvested.load(), 0u);
}

TEST_F(ResponseHooks, FinishWithoutAnyBodyHarvestsNothing) {
    auto hook = Hook(Call("getBalance"));
    hook->Finish(1);
    EXPECT_EQ(net_.network.record(0).host.harvested.load(), 0u);
}

TEST_F(ResponseHooks, AnEmptyChunkIsNotTheEnd) {
    auto hook = Hook(Call("getBalance"));
    EXPECT_FALSE(hook->Feed("", 0, 1));
    std::string body = Envelope(31);
    EXPECT_TRUE(hook->Feed(body.data(), body.size(), 1));
    EXPECT_EQ(net_.network.record(0).processed.load(), 31u);
}

// --- getSlot corrections -------------------------------------------------------

TEST_F(ResponseHooks, ConfirmedAnswersAreNeverCorrected) {
    Tips(1000, 968, 1002);
    auto hook = Hook(Call("getSlot", R"([{"commitment":"confirmed"}])"));
    EXPECT_FALSE(Rewrite(*hook, 900));
    EXPECT_FALSE(Rewrite(*hook, 1100));
    EXPECT_EQ(shared().counters.getslot_corrections.load(), 0u);
    EXPECT_EQ(shared().processed_answered.load(), 0u);
}

TEST_F(ResponseHooks, FinalizedAnswersMeetTheIndexedFinalizedTip) {
    Tips(1000, 968, 950);   // the indexer is behind the finalized tip
    auto hook = Hook(Call("getSlot", R"([{"commitment":"finalized"}])"));
    auto down = Rewrite(*hook, 968);
    ASSERT_TRUE(down);
    EXPECT_EQ(down->from, 968u);
    EXPECT_EQ(down->to, 950u);
    EXPECT_EQ(down->body, R"({"jsonrpc":"2.0","result":950,"id":1})");
    auto up = Rewrite(*hook, 900);
    ASSERT_TRUE(up);
    EXPECT_EQ(up->to, 950u);
    EXPECT_FALSE(Rewrite(*hook, 950));
    EXPECT_EQ(shared().counters.getslot_corrections.load(), 2u);
    // Finalized answers leave the processed memory alone.
    EXPECT_EQ(shared().processed_answered.load(), 0u);
}

TEST_F(ResponseHooks, TheNetworkDefaultCommitmentChoosesTheCorrection) {
    NetworkSettings settings;
    settings.default_commitment = SG_COMMITMENT_FINALIZED;
    TestNetwork finalized(1, settings);
    finalized.network.record(0).processed = 1000;
    finalized.network.record(0).finalized = 968;
    finalized.network.record(0).shred = 1002;
    std::string body = Call("getSlot");
    RpcRequest request = ParseRpcRequest(body.data(), body.size());
    RoutePlan plan = PlanRoute(finalized.network, request, "");
    auto hook = ResponseHook::For(finalized.network, request, plan, 0, 0);
    ASSERT_TRUE(hook);
    auto c = hook->Rewrite(R"({"jsonrpc":"2.0","result":1000,"id":1})", 0);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->to, 968u);
}

TEST_F(ResponseHooks, ProcessedAnswersRememberTheHighestOneAnswered) {
    Tips(1000, 968, 1002);
    auto hook = Hook(Call("getSlot", R"([{"commitment":"processed"}])"));
    EXPECT_FALSE(Rewrite(*hook, 1005));   // ahead of the tip: kept
    EXPECT_EQ(shared().processed_answered.load(), 1005u);
    auto c = Rewrite(*hook, 1001);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->to, 1005u);   // never behind what a client was told
    EXPECT_EQ(shared().processed_answered.load(), 1005u);
}

TEST_F(ResponseHooks, WithASelectorOnlyItsUpstreamsTipCounts) {
    Tips(1000, 968, 1002);
    net_.network.record(1).processed = 1100;
    net_.network.record(2).processed = 1100;
    shared().processed_answered = 1050;   // answered from other upstreams
    auto hook = Hook(Call("getSlot"), 0, "up-0");
    ASSERT_TRUE(hook);
    ASSERT_TRUE(plan_.has_selector);
    // Raised to up-0's tip, not to the network-wide memory.
    auto c = Rewrite(*hook, 990);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->to, 1000u);
    EXPECT_FALSE(Rewrite(*hook, 1000));
    // ... which it does not update either: a group may be behind.
    EXPECT_EQ(shared().processed_answered.load(), 1050u);
}

TEST_F(ResponseHooks, OnlyTheSlotDigitsChange) {
    Tips(1000, 968, 1002);
    auto hook = Hook(Call("getSlot"));
    auto c = hook->Rewrite(
        "{ \"id\" : \"req-7\" ,\n \"result\" :  995 , \"jsonrpc\":\"2.0\" }",
        0);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->body,
              "{ \"id\" : \"req-7\" ,\n \"result\" :  1000 , "
              "\"jsonrpc\":\"2.0\" }");
}

TEST_F(ResponseHooks, AnswersThatAreNotASlotAreLeftAlone) {
    Tips(1000, 968, 1002);
    auto hook = Hook(Call("getSlot"));
    for (const char* body :
         {R"({"jsonrpc":"2.0","result":"995","id":1})",
          R"({"jsonrpc":"2.0","result":-5,"id":1})",
          R"({"jsonrpc":"2.0","result":9.5,"id":1})",
          R"([{"jsonrpc":"2.0","result":995,"id":1}])",
          R"({"jsonrpc":"2.0","result":995,"id":1} trailing)", "", "null"}) {
        EXPECT_FALSE(hook->Rewrite(body, 0)) << body;
    }
    EXPECT_EQ(shared().counters.getslot_corrections.load(), 0u);
    EXPECT_EQ(shared().processed_answered.load(), 0u);
}

}  // namespace
}  // namespace solgate
