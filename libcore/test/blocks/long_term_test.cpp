// Cube Runner, part 2: queueing for long-term storage in the request path,
// and the retriever on the poller thread, with a fake transport and clock.
#include <gtest/gtest.h>

#include "support/blocks_zone.h"
#include "support/fakes.h"
#include "blocks/block_capture.h"
#include "blocks/long_term_retriever.h"

namespace solgate {
namespace {

using testing::Accept;
using testing::FakeClock;
using testing::FakeTransport;
using testing::TestNetwork;

constexpr const char* kVariant = "getBlock/json/full/r1/v0";

using testing::BlockReply;
using testing::GetBlockRequest;

HttpResult Ok(const std::string& body) { return HttpResult{0, "", 200, body}; }
HttpResult Unavailable() {
    return HttpResult{0, "", 503,
                      R"({"jsonrpc":"2.0","error":{"code":-32019,)"
                      R"("message":"Failed to query long-term storage"},)"
                      R"("id":1})"};
}

BlockConfBuilder TwoStoragesAndASmallArchivePlan() {
    BlockConfBuilder conf;
    Accept(conf.Region("us"));
    Accept(conf.LongTermStorage("http://lts-a/"));
    Accept(conf.LongTermStorage("http://lts-b/"));
    testing::DefineSmallArchivePlan(conf);
    return conf;
}

class LongTermTest : public ::testing::Test {
protected:
    LongTermTest()
        : net(1),
          rig(net.network, "solgate-lts", TwoStoragesAndASmallArchivePlan()),
          service(rig.service()) {
        EXPECT_EQ(rig.error(), "");
        net.network.record(0).first_available_plus1.store(4001);
        net.network.record(0).SuggestFinalized(5000);
        retriever = std::make_unique<LongTermRetriever>(
            service->long_term(), service->cache(), transport, clock,
            [](int, const std::string&) {}, 7);
    }

    BlockDecision Ask(uint64_t slot, const std::string& key,
                      const std::string& plan = "arch") {
        std::string body = GetBlockRequest(slot);
        RpcRequest request = ParseRpcRequest(body.data(), body.size());
        BlockCall call;
        BlockDecision d = service->Decide(request, key, plan, "",
                                          clock.MonotonicMs(),
                                          clock.WallMs(), &call);
        if (d.kind == BlockDecision::kCache) {
            call.source = kSourceCache;
            service->CountServed(call, kSourceCache, clock.WallMs());
        }
        return d;
    }

    // One retriever tick 200 ms later (the plan's rate allows one).
    void Tick() {
        clock.Advance(200);
        retriever->Tick();
    }

    uint64_t Allowance(const std::string& key) {
        return service->allowances().AllowanceUsed(key, clock.WallMs());
    }

    TestNetwork net;
    FakeClock clock;
    FakeTransport transport;
    testing::BlockServiceRig rig;
    BlockService* service;
    std::unique_ptr<LongTermRetriever> retriever;
};

TEST_F(LongTermTest, QueuedThenRetrievedThenServedFromTheCache) {
    BlockDecision d = Ask(250, "k1");
    ASSERT_EQ(d.kind, BlockDecision::kAnswer);
    EXPECT_EQ(d.http_status, 429u);
    EXPECT_EQ(d.retry_after_s, 1u);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","error":{"code":-32019,"message":"Block 250 )"
              R"(is being retrieved from long-term storage; retry in 1 )"
              R"(seconds","data":{"slot":250,"retryAfterSecs":1,)"
              R"("queuePosition":1}},"id":9})");

    Tick();
    ASSERT_EQ(transport.pending.size(), 1u);
    EXPECT_EQ(transport.pending[0].url, "http://lts-a/");
    EXPECT_NE(transport.pending[0].body.find("[250,"), std::string::npos);
    transport.AnswerEach([](const auto&) { return Ok(BlockReply(250)); });

    d = Ask(250, "k1");
    EXPECT_EQ(d.kind, BlockDecision::kCache);
    EXPECT_EQ(Allowance("k1"), 1u);
    EXPECT_EQ(service->zone().counters().served[kSourceLongTerm].load(), 1u);
    // Held for any key on any plan, free ones included.
    EXPECT_EQ(Ask(250, "someone", "free").kind, BlockDecision::kCache);
}

TEST_F(LongTermTest, OneRetrievalForThreeKeysCountedForEach) {
    for (const char* key : {"k1", "k2", "k3"}) {
        EXPECT_EQ(Ask(260, key).http_status, 429u);
    }
    Tick();
    Tick();
    ASSERT_EQ(transport.pending.size(), 1u);   // retrieved once
    transport.AnswerEach([](const auto&) { return Ok(BlockReply(260)); });
    EXPECT_EQ(Allowance("k1"), 1u);
    EXPECT_EQ(Allowance("k2"), 1u);
    EXPECT_EQ(Allowance("k3"), 1u);
}

TEST_F(LongTermTest, NextEndpointAfterAFailureThenStorageFailed) {
    Ask(270, "k1");
    Tick();
    transport.AnswerEach([](const auto&) { return Unavailable(); });
    ASSERT_EQ(transport.pending.size(), 1u);   // the same retrieval, again
    EXPECT_EQ(transport.pending[0].url, "http://lts-b/");
    transport.AnswerEach([](const auto&) { return Unavailable(); });
    EXPECT_EQ(retriever->failed(), 1u);
    EXPECT_EQ(Allowance("k1"), 0u);   // nothing retrieved, nothing counted

    BlockDecision d = Ask(270, "k1");
    EXPECT_EQ(d.http_status, 429u);
    EXPECT_NE(d.body.find(R"("reason":"storage_failed")"), std::string::npos)
        << d.body;
    EXPECT_EQ(Ask(270, "k1").body.find("storage_failed"), std::string::npos)
        << "queued again";
}

TEST_F(LongTermTest, QueueLimit) {
    Ask(280, "k1");
    Ask(281, "k1");
    BlockDecision d = Ask(282, "k1");
    EXPECT_EQ(d.http_status, 429u);
    EXPECT_NE(d.body.find(R"("reason":"queue_full")"), std::string::npos);
    EXPECT_EQ(Ask(281, "k2").body.find("queue_full"), std::string::npos)
        << "a queued block is still accepted";
}

TEST_F(LongTermTest, AllowanceStopsRetrievals) {
    for (uint64_t slot : {290, 291, 292}) {
        Ask(slot, "k1");
        Tick();
        transport.AnswerEach(
            [slot](const auto&) { return Ok(BlockReply(slot)); });
    }
    EXPECT_EQ(Allowance("k1"), 3u);
    BlockDecision d = Ask(293, "k1");
    EXPECT_EQ(d.http_status, 429u);
    EXPECT_NE(d.body.find(R"("reason":"allowance")"), std::string::npos);
    EXPECT_EQ(d.retry_after_s, 60u);
    // What is cached is still served, and other keys are not affected.
    EXPECT_EQ(Ask(290, "k1").kind, BlockDecision::kCache);
    EXPECT_EQ(Ask(293, "k2").http_status, 429u);
    EXPECT_EQ(service->zone().counters().allowance_refusals[
                  testing::PlanIndex(service->conf(), "arch")].load(),
              1u);
}

TEST_F(LongTermTest, RetrievingAgainWhatAKeyReceivedIsARepeat) {
    Ask(300, "k1");
    Tick();
    transport.AnswerEach([](const auto&) { return Ok(BlockReply(300)); });
    Ask(300, "k1");   // received from the cache: a receipt
    std::string error;
    service->cache().StoreForTesting()->Remove({{300, kVariant}}, &error);
    EXPECT_EQ(Ask(300, "k1").http_status, 429u);   // gone: queued again
    Tick();
    transport.AnswerEach([](const auto&) { return Ok(BlockReply(300)); });
    EXPECT_EQ(service->allowances().RepeatCount("k1", clock.WallMs()), 1u);
    EXPECT_EQ(Allowance("k1"), 2u);
}

TEST_F(LongTermTest, OtherTiersAndNoStorageGetTheTierAnswer) {
    BlockDecision d = Ask(310, "k1", "free");
    EXPECT_EQ(d.http_status, 200u);
    EXPECT_NE(d.body.find(R"("reason":"tier")"), std::string::npos);
    Tick();
    EXPECT_TRUE(transport.pending.empty());
}

TEST_F(LongTermTest, OnlyTheLeaseHolderRetrieves) {
    Ask(320, "k1");
    LongTermRetriever other(service->long_term(), service->cache(), transport,
                            clock, [](int, const std::string&) {}, 8);
    clock.Advance(200);
    other.Tick();   // pid 7 does not hold it yet: the first to claim wins
    retriever->Tick();
    EXPECT_EQ(transport.pending.size(), 1u);
    EXPECT_EQ(other.started() + retriever->started(), 1u);
}

TEST_F(LongTermTest, ReceiptsOnlyForBlocksReceived) {
    BlockCall call;
    call.slot = 4990;
    call.variant = kVariant;
    call.api_key = "k1";
    call.source = kSourceLedger;
    // A ledger answer is counted at its headers; it may be an error.
    service->CountServed(call, kSourceLedger, clock.WallMs());
    EXPECT_FALSE(service->allowances().Received("k1", 4990, clock.WallMs()));
    std::string error;
    ASSERT_TRUE(StoreAnswer(service->cache(), call, BlockReply(4990),
                            clock.WallMs(), &error))
        << error;
    EXPECT_TRUE(service->allowances().Received("k1", 4990, clock.WallMs()));
}

}  // namespace
}  // namespace solgate
