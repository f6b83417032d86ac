// The lookup planner of Cube Runner: which source answers a getBlock.
#include <gtest/gtest.h>

#include <cstdio>

#include <set>

#include "blocks/block_capture.h"
#include "blocks/block_service.h"
#include "support/blocks_zone.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::Accept;
using testing::TestNetwork;

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kWall = 1'800'000'000'000;
constexpr const char* kToken = "region-token-0123456789";

std::string GetBlock(uint64_t slot, const std::string& id = "1") {
    return R"({"jsonrpc":"2.0","id":)" + id +
           R"(,"method":"getBlock","params":[)" + std::to_string(slot) +
           R"(,{"maxSupportedTransactionVersion":0}]})";
}

std::string BlockAnswer(uint64_t slot, const std::string& id) {
    return R"({"jsonrpc":"2.0","result":{"blockHeight":)" +
           std::to_string(slot - 10) + R"(,"transactions":[]},"id":)" + id +
           "}\n";
}

BlockConfBuilder TwoPeersAndATinyPlan(uint64_t max_size = 0) {
    BlockConfBuilder conf;
    Accept(conf.Region("us"));
    Accept(conf.Peer("eu", "http://eu/", true));
    Accept(conf.Peer("ap", "http://ap/", true));
    Accept(conf.PeerToken(kToken));
    Accept(conf.PlanDefine("tiny", {"tier=free", "getblock_rate=2r/s"}));
    Accept(conf.MaxSize(max_size));
    return conf;
}

class BlockServiceTest : public ::testing::Test {
protected:
    BlockServiceTest()
        : net(2),
          rig(net.network, "solgate-blocks", TwoPeersAndATinyPlan()),
          shared(rig.shared()),
          service(rig.service()) {
        EXPECT_EQ(rig.error(), "");
        for (size_t i = 0; i < 2; i++) {
            net.network.record(i).SuggestProcessed(5000);
            net.network.record(i).SuggestFinalized(4968);
        }
    }

    BlockDecision Decide(const std::string& body, std::string_view key,
                         std::string_view plan, BlockCall* call,
                         std::string_view token = "") {
        RpcRequest request = ParseRpcRequest(body.data(), body.size());
        return service->Decide(request, key, plan, token, kNow, kWall, call);
    }

    void LedgerWindow(uint64_t first) {
        for (size_t i = 0; i < 2; i++) {
            net.network.record(i).first_available_plus1.store(first + 1);
        }
    }

    // What a ledger answer leaves in the cache.
    void Cache(uint64_t slot) {
        BlockCall call;
        Decide(GetBlock(slot), "k", "operator", &call);
        call.source = kSourceLedger;
        auto capture = BlockCapture::Start(service->cache(), call);
        ASSERT_TRUE(capture);
        std::string body = BlockAnswer(slot, "77");
        ASSERT_TRUE(capture->Write(body.data(), body.size()));
        std::string error;
        ASSERT_TRUE(capture->Finish(kWall, &error)) << error;
    }

    TestNetwork net;
    testing::BlockServiceRig rig;
    BlocksShared* shared;
    BlockService* service;
};

TEST_F(BlockServiceTest, OtherMethodsPassBatchesWithBlockCallsAreRefused) {
    BlockCall call;
    EXPECT_EQ(Decide(R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})", "",
                     "", &call).kind,
              BlockDecision::kPass);
    EXPECT_EQ(Decide(R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"}])", "",
                     "", &call).kind,
              BlockDecision::kPass);
    // a batch is the router's: its Cube Runner calls are answered there
    EXPECT_EQ(Decide("[" + GetBlock(10, "4") + "]", "k", "free", &call).kind,
              BlockDecision::kPass);
}

TEST_F(BlockServiceTest, KeyAndPlanAreRequired) {
    BlockCall call;
    BlockDecision d = Decide(GetBlock(10, "\"a\""), "", "free", &call);
    EXPECT_EQ(d.kind, BlockDecision::kAnswer);
    EXPECT_EQ(d.http_status, 401u);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","error":{"code":-32003,"message":)"
              R"("Unauthorized: getBlock needs an API key"},"id":"a"})");
    BlockCall other;
    d = Decide(GetBlock(10), "k", "gold", &other);
    EXPECT_EQ(d.http_status, 401u);
    EXPECT_EQ(shared->counters.unauthorized.load(), 2u);
}

// A call's own error comes first, whoever asks: no key is asked for, no
// rate spent, and a malformed call is never served a block.
TEST_F(BlockServiceTest, AnInvalidCallIsTheRoutersWithOrWithoutAKey) {
    for (const char* key : {"", "k"}) {
        for (const std::string& body :
             {std::string(R"({"jsonrpc":"2.0","id":1,"method":"getBlock","params":["abc"]})"),
              std::string(R"({"jsonrpc":"2.0","id":1,"method":"getBlock"})"),
              std::string(R"({"jsonrpc":"2.0","id":1,"id":2,"method":"getBlock","params":[10]})")}) {
            BlockCall call;
            EXPECT_EQ(Decide(body, key, "free", &call).kind, BlockDecision::kPass)
                << body << " key " << key;
        }
    }
    EXPECT_EQ(shared->counters.unauthorized.load(), 0u);
}

TEST_F(BlockServiceTest, LedgerWhileItsWindowIsUnknownOrHoldsTheSlot) {
    BlockCall call;
    EXPECT_EQ(Decide(GetBlock(100), "k", "free", &call).kind,
              BlockDecision::kLedger);  // window not polled yet: fail open
    LedgerWindow(100);
    BlockCall again;
    EXPECT_EQ(Decide(GetBlock(100), "k", "free", &again).kind,
              BlockDecision::kLedger);
    EXPECT_EQ(again.source, kSourceLedger);
}

TEST_F(BlockServiceTest, TheLedgerAndPeersGetTheCallAsSolgateParsedIt) {
    // spaces, escapes, a key order of its own: written anew, the
    // client's commitment kept
    std::string body =
        R"({ "params" : [ 100 , {"commitment":"confirmed", "rewards":false,)"
        R"( "encoding":"json"} ], "method":"getBlock", "id":"x",)"
        R"( "jsonrpc":"2.0" })";
    BlockCall call;
    BlockDecision d = Decide(body, "k", "free", &call);
    ASSERT_EQ(d.kind, BlockDecision::kLedger);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","id":"x","method":"getBlock","params":[100,)"
              R"({"encoding":"json","transactionDetails":"full",)"
              R"("rewards":false,"commitment":"confirmed"}]})");
    BlockCall plain;
    d = Decide(GetBlock(100), "k", "free", &plain);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","id":1,"method":"getBlock","params":[100,)"
              R"({"encoding":"json","transactionDetails":"full",)"
              R"("rewards":true,"maxSupportedTransactionVersion":0}]})")
        << "no commitment given, none sent (the node's default)";
    // an option Solgate does not know: no variant, sent as it came (and
    // never cached)
    BlockCall unknown;
    d = Decide(R"({"jsonrpc":"2.0","id":1,"method":"getBlock",)"
               R"("params":[100,{"foo":1}]})",
               "k", "free", &unknown);
    EXPECT_EQ(d.kind, BlockDecision::kLedger);
    EXPECT_EQ(d.body, "");
    // a peer gets the same canonical call
    LedgerWindow(4000);
    SlotRanges eu;
    eu.AddRange(200, 300);
    service->peer_summaries().Store(0, kNow, {{"getBlock/json/full/r1/v0", eu}});
    BlockCall to_peer;
    d = Decide(GetBlock(250, "\"p\""), "k", "free", &to_peer);
    ASSERT_EQ(d.kind, BlockDecision::kPeer);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","id":"p","method":"getBlock","params":[250,)"
              R"({"encoding":"json","transactionDetails":"full",)"
              R"("rewards":true,"maxSupportedTransactionVersion":0}]})");
}

TEST_F(BlockServiceTest, TierAnswerWhenNoSourceHoldsTheBlock) {
    LedgerWindow(4000);
    BlockCall call;
    BlockDecision d = Decide(GetBlock(250, "7"), "k", "operator", &call);
    EXPECT_EQ(d.kind, BlockDecision::kAnswer);
    EXPECT_EQ(d.http_status, 200u);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","error":{"code":-32001,"message":"Block )"
              R"(250 not available on this tier. First available block: )"
              R"(4000","data":{"slot":250,"firstAvailableBlock":4000,)"
              R"("reason":"tier"}},"id":7})");
    BlockCall archive;
    d = Decide(GetBlock(250), "k2", "nexus", &archive);
    EXPECT_NE(d.body.find(R"("reason":"no_long_term_storage")"),
              std::string::npos);
}

TEST_F(BlockServiceTest, RegionsThatHoldTheBlockInOrderThenTheTier) {
    LedgerWindow(4000);
    SlotRanges eu;
    eu.AddRange(200, 300);
    service->peer_summaries().Store(0, kNow, {{"getBlock/json/full/r1/v0", eu}});
    service->peer_summaries().Store(1, kNow, {{"getBlock/json/full/r1/v0", eu}});
    BlockCall call;
    BlockDecision d = Decide(GetBlock(250), "k", "free", &call);
    ASSERT_EQ(d.kind, BlockDecision::kPeer);
    EXPECT_EQ(d.peer, 0u);
    d = service->AfterSourceFailure(&call, kNow);
    ASSERT_EQ(d.kind, BlockDecision::kPeer);
    EXPECT_EQ(d.peer, 1u);
    d = service->AfterSourceFailure(&call, kNow);
    EXPECT_EQ(d.kind, BlockDecision::kAnswer);   // the tier answer
    EXPECT_EQ(shared->counters.peer_fetches[0].load(), 1u);
    EXPECT_EQ(shared->counters.peer_failures[1].load(), 1u);

    // Not in the summary, or a summary too old: never asked.
    BlockCall other;
    EXPECT_EQ(Decide(GetBlock(350), "k", "free", &other).kind,
              BlockDecision::kAnswer);
    BlockCall stale;
    std::string body = GetBlock(250);
    RpcRequest request = ParseRpcRequest(body.data(), body.size());
    EXPECT_EQ(service->Decide(request, "k", "free", "",
                              kNow + kPeerSummaryTtlMs + 1, kWall, &stale)
                  .kind,
              BlockDecision::kAnswer);
}

TEST_F(BlockServiceTest, CacheHitAfterAFinalizedAnswerWasCaptured) {
    Cache(4900);
    BlockCall call;
    BlockDecision d = Decide(GetBlock(4900, "\"x\""), "k", "free", &call);
    ASSERT_EQ(d.kind, BlockDecision::kCache);
    std::string body = BlockAnswer(4900, "77");
    EXPECT_EQ(d.record.bytes, body.size());
    EXPECT_EQ(body.substr(d.record.id_offset, d.record.id_length), "77");
    EXPECT_EQ(d.path, service->cache().PathFor(4900, "getBlock/json/full/r1/v0"));
    EXPECT_EQ(shared->counters.stored.load(), 1u);
}

// A cache entry whose file cannot be served (truncated, deleted, replaced
// behind the index's back): the call goes on to the next source, never
// to the cache again, and the entry is dropped for every later request.
TEST_F(BlockServiceTest, ACacheEntryThatCannotBeServedIsDroppedNotAskedAgain) {
    Cache(4900);
    const std::string variant = "getBlock/json/full/r1/v0";
    BlockCall call;
    ASSERT_EQ(Decide(GetBlock(4900), "k", "free", &call).kind,
              BlockDecision::kCache);
    std::remove(service->cache().PathFor(4900, variant).c_str());
    BlockDecision d = service->AfterSourceFailure(&call, kNow);
    EXPECT_EQ(d.kind, BlockDecision::kLedger) << "the next source";
    BlockRecord record;
    EXPECT_FALSE(service->cache().Lookup(4900, variant, &record));
    // a second failure of the ledger attempt does not bring the cache back
    EXPECT_NE(service->AfterSourceFailure(&call, kNow).kind,
              BlockDecision::kCache);
    BlockCall later;
    EXPECT_NE(Decide(GetBlock(4900), "k", "free", &later).kind,
              BlockDecision::kCache);
}

// A notification (no "id") gets no answer: Cube Runner leaves it to the
// node, serving nothing and spending none of the key's budget.
TEST_F(BlockServiceTest, ANotificationIsNotCubeRunners) {
    Cache(4900);
    BlockCall call;
    EXPECT_EQ(Decide(R"({"jsonrpc":"2.0","method":"getBlock","params":)"
                     R"([4900,{"maxSupportedTransactionVersion":0}]})",
                     "k", "free", &call)
                  .kind,
              BlockDecision::kPass);
    BlockCall null_id;   // "id": null is a request, not a notification
    EXPECT_EQ(Decide(GetBlock(4900, "null"), "k", "free", &null_id).kind,
              BlockDecision::kCache);
}

TEST_F(BlockServiceTest, OnlyFinalizedLedgerAnswersAreCaptured) {
    EXPECT_TRUE(service->decider().Finalized(4968, kNow));
    EXPECT_FALSE(service->decider().Finalized(4969, kNow));
}

TEST_F(BlockServiceTest, ErrorsOtherThanSkippedSlotsAreNotCached) {
    BlockCall call;
    Decide(GetBlock(4800), "k", "operator", &call);
    auto capture = BlockCapture::Start(service->cache(), call);
    std::string body =
        R"({"jsonrpc":"2.0","error":{"code":-32015,"message":"v"},"id":1})";
    capture->Write(body.data(), body.size());
    std::string error;
    EXPECT_FALSE(capture->Finish(kWall, &error));
    BlockRecord rec;
    EXPECT_FALSE(service->cache().Lookup(4800, "getBlock/json/full/r1/v0",
                                         &rec));

    BlockCall skipped;
    Decide(GetBlock(4801), "k", "operator", &skipped);
    capture = BlockCapture::Start(service->cache(), skipped);
    body = R"({"jsonrpc":"2.0","error":{"code":-32007,"message":"Slot 4801 )"
           R"(was skipped"},"id":1})";
    capture->Write(body.data(), body.size());
    EXPECT_TRUE(capture->Finish(kWall, &error)) << error;
}

TEST_F(BlockServiceTest, RateLimitPerKey) {
    std::vector<unsigned> status;
    for (int i = 0; i < 3; i++) {
        BlockCall call;
        BlockDecision d = Decide(GetBlock(100), "slow", "tiny", &call);
        status.push_back(d.kind == BlockDecision::kAnswer ? d.http_status
                                                          : 200);
        if (i == 2) {
            EXPECT_EQ(d.retry_after_s, 1u);
            EXPECT_NE(d.body.find(R"("data":{"slot":100,"retryAfterSecs":1,)"
                                  R"("reason":"rate_limit"})"),
                      std::string::npos)
                << d.body;
        }
    }
    EXPECT_EQ(status, (std::vector<unsigned>{200, 200, 429}));
    BlockCall other;
    EXPECT_EQ(Decide(GetBlock(100), "fast", "tiny", &other).kind,
              BlockDecision::kLedger);   // another key has its own budget
    size_t tiny = static_cast<size_t>(
        FindPlan(service->conf().plans(), "tiny") -
        &service->conf().plans()[0]);
    EXPECT_EQ(shared->counters.rate_limited[tiny].load(), 1u);
}

TEST_F(BlockServiceTest, FirstAvailableBlockExtendsTheLedgerWindowByTheCache) {
    BlockCall call;
    std::string first =
        R"({"jsonrpc":"2.0","id":3,"method":"getFirstAvailableBlock"})";
    EXPECT_EQ(Decide(first, "k", "free", &call).kind, BlockDecision::kPass);
    LedgerWindow(4000);
    Cache(3999);
    Cache(3998);
    Cache(3990);   // not contiguous
    service->Maintain(kWall);
    BlockCall again;
    BlockDecision d = Decide(first, "k", "free", &again);
    EXPECT_EQ(d.body, R"({"jsonrpc":"2.0","result":3998,"id":3})");
}

TEST_F(BlockServiceTest, PeersGetCacheHitsOrA503AndTheSummary) {
    Cache(4900);
    service->Maintain(kWall);
    BlockCall hit;
    EXPECT_EQ(Decide(GetBlock(4900), "", "", &hit, kToken).kind,
              BlockDecision::kCache);
    BlockCall miss;
    BlockDecision d = Decide(GetBlock(4901), "", "", &miss, kToken);
    EXPECT_EQ(d.http_status, 503u);
    BlockCall wrong;
    EXPECT_EQ(Decide(GetBlock(4901), "", "", &wrong, "guess").http_status,
              401u);   // a wrong token is an ordinary client
    // The cached file went away between lookup and open: still only 503,
    // never this region's ledger or its own peers.
    EXPECT_EQ(service->AfterSourceFailure(&hit, kNow).http_status, 503u);
    BlockCall summary;
    d = Decide(R"({"jsonrpc":"2.0","id":1,"method":"solgateBlockSummary"})",
               "", "", &summary, kToken);
    EXPECT_NE(d.body.find(R"("variants":{"getBlock/json/full/r1/v0":"4900"})"),
              std::string::npos)
        << d.body;
    BlockCall anonymous;
    EXPECT_EQ(Decide(R"({"jsonrpc":"2.0","id":1,)"
                     R"("method":"solgateBlockSummary"})",
                     "", "", &anonymous)
                  .kind,
              BlockDecision::kPass);
}

TEST_F(BlockServiceTest, RequestsRaiseTheScoreOnceMaintained) {
    Cache(4900);   // score 1: the request that brought it
    Cache(4901);
    for (int i = 0; i < 3; i++) {
        service->request_scores().Note(4900, "getBlock/json/full/r1/v0",
                                       kWall);
    }
    service->request_scores().Note(4901, "getBlock/json/full/r1/v0", kWall);
    BlockRecord rec;
    ASSERT_TRUE(service->cache().Lookup(4900, "getBlock/json/full/r1/v0",
                                        &rec));
    EXPECT_DOUBLE_EQ(rec.score, 1.0);   // not before Maintain
    service->Maintain(kWall);
    ASSERT_TRUE(service->cache().Lookup(4900, "getBlock/json/full/r1/v0",
                                        &rec));
    EXPECT_DOUBLE_EQ(rec.score, 4.0);
    ASSERT_TRUE(service->cache().Lookup(4901, "getBlock/json/full/r1/v0",
                                        &rec));
    EXPECT_DOUBLE_EQ(rec.score, 2.0);
}

TEST_F(BlockServiceTest, EvictionKeepsTheCacheUnderMaxSize) {
    rig.Reload(TwoPeersAndATinyPlan(3 * BlockAnswer(4900, "77").size()));
    ASSERT_EQ(rig.error(), "");
    service = rig.service();
    Cache(4900);
    Cache(4901);
    Cache(4902);
    // The fourth needs room, but all three are younger than 15 minutes.
    BlockCall call;
    Decide(GetBlock(4903), "k", "operator", &call);
    auto capture = BlockCapture::Start(service->cache(), call);
    std::string body = BlockAnswer(4903, "77");
    capture->Write(body.data(), body.size());
    std::string error;
    EXPECT_FALSE(capture->Finish(kWall, &error));
    EXPECT_EQ(service->cache().Totals()->entries, 3u);
    // An hour later the oldest slots leave, down to the 95% watermark.
    EXPECT_TRUE(service->cache().MakeRoom(body.size(), kWall + 3600 * 1000));
    EXPECT_EQ(service->cache().Totals()->entries, 1u);
    BlockRecord rec;
    EXPECT_FALSE(service->cache().Lookup(4900, "getBlock/json/full/r1/v0",
                                         &rec));
    EXPECT_TRUE(service->cache().Lookup(4902, "getBlock/json/full/r1/v0",
                                        &rec));
}

TEST(BlockServiceNoToken, NoRegionIsRecognisedWithoutAToken) {
    TestNetwork net(1);
    BlockConfBuilder builder;   // peer_token left out
    Accept(builder.Region("us"));
    Accept(builder.Cache("/nonexistent/cache"));
    Accept(builder.State("/nonexistent/state"));
    BlockServiceConf conf = testing::Built(builder);
    testing::BlocksZone zone(conf);
    BlockService service(conf, net.network);
    std::string error;
    ASSERT_TRUE(service.Bind(zone.memory(), true, &error)) << error;
    std::string body = GetBlock(10);
    RpcRequest request = ParseRpcRequest(body.data(), body.size());
    BlockCall call;
    EXPECT_EQ(service.Decide(request, "", "", "", kNow, kWall, &call)
                  .http_status,
              401u);
    BlockCall empty;
    EXPECT_EQ(service.Decide(request, "", "", "x", kNow, kWall, &empty)
                  .http_status,
              401u);
}

}  // namespace
}  // namespace solgate

namespace solgate {
namespace {

// keyless_plan tiny: a call without a key is served on "tiny", each
// client address with a budget of its own; a keyed call keeps its own.
TEST(BlockServiceKeyless, CallsWithoutAKeyGoOnTheKeylessPlanByClientAddress) {
    TestNetwork net(2);
    BlockConfBuilder conf = TwoPeersAndATinyPlan();
    Accept(conf.KeylessPlan("tiny"));
    testing::BlockServiceRig rig(net.network, "solgate-keyless", std::move(conf));
    ASSERT_EQ(rig.error(), "");
    for (size_t i = 0; i < 2; i++) {
        net.network.record(i).SuggestProcessed(5000);
        net.network.record(i).SuggestFinalized(4968);
    }
    auto decide = [&](std::string_view key, std::string_view client,
                      BlockCall* call) {
        std::string body = GetBlock(100);
        RpcRequest request = ParseRpcRequest(body.data(), body.size());
        return rig.service()->Decide(request, key, "", "", kNow, kWall, call,
                                     client);
    };
    std::vector<unsigned> status;
    std::string first_key;
    for (int i = 0; i < 3; i++) {
        BlockCall call;
        BlockDecision d = decide("", "10.0.0.1", &call);
        status.push_back(d.kind == BlockDecision::kAnswer ? d.http_status : 200);
        EXPECT_EQ(call.api_key.rfind("client:", 0), 0u) << call.api_key;
        first_key = call.api_key;
    }
    EXPECT_EQ(status, (std::vector<unsigned>{200, 200, 429}))
        << "tiny's 2 r/s, for that address";
    BlockCall other;
    EXPECT_EQ(decide("", "10.0.0.2", &other).kind, BlockDecision::kLedger)
        << "another address has its own budget";
    EXPECT_NE(other.api_key, first_key);
    BlockCall spoof;
    EXPECT_EQ(decide(first_key, "10.0.0.9", &spoof).http_status, 401u)
        << "a key that looks like an address's has no plan";
    BlockCall keyed;
    EXPECT_EQ(decide("k", "10.0.0.1", &keyed).http_status, 401u)
        << "a key keeps its own plan (none here)";
    BlockCall nowhere;
    EXPECT_EQ(decide("", "", &nowhere).http_status, 401u)
        << "no address, no keyless plan";
}

TEST(BlockConfBuilder, KeylessPlanMustBeAPlan) {
    BlockConfBuilder b;
    Accept(b.Region("us"));
    Accept(b.Cache("/var/cache/solgate"));
    Accept(b.State("/var/lib/solgate"));
    Accept(b.KeylessPlan("gold"));
    EXPECT_EQ(b.KeylessPlan("free"),
              std::optional<std::string>("\"keyless_plan\" directive is duplicate"));
    EXPECT_EQ(b.Build(nullptr),
              std::optional<std::string>(
                  "keyless_plan \"gold\" is not a plan (neither built in nor "
                  "plan_define'd)"));
    Accept(b.PlanDefine("gold", {"tier=free", "getblock_rate=1r/s"}));
    EXPECT_EQ(b.Build(nullptr), std::nullopt);
}

}  // namespace
}  // namespace solgate

namespace solgate {
namespace {

// However many addresses come without a key, they hold at most
// kKeylessKeys keys; an IPv6 subscriber's /64 is one.
TEST(BlockServiceKeyless, AnonymousCallersShareABoundedSetOfKeys) {
    BlockConfBuilder b;
    Accept(b.Region("us"));
    Accept(b.Cache("/var/cache/solgate"));
    Accept(b.State("/var/lib/solgate"));
    Accept(b.KeylessPlan("free"));
    BlockServiceConf conf;
    ASSERT_EQ(b.Build(&conf), std::nullopt);
    std::set<std::string> keys;
    for (int i = 0; i < 5000; i++) {
        std::string owned;
        std::string address = "10." + std::to_string(i / 256) + "." +
                              std::to_string(i % 256) + ".7";
        keys.insert(std::string(CallerOf(conf, "", "", address, &owned).api_key));
    }
    EXPECT_LE(keys.size(), kKeylessKeys);
    EXPECT_GT(keys.size(), kKeylessKeys / 2);
    std::string a, c;
    EXPECT_EQ(CallerOf(conf, "", "", "2001:db8:1:2:aaaa::1", &a).api_key,
              CallerOf(conf, "", "", "2001:db8:1:2:bbbb:cccc:dddd:eeee", &c).api_key)
        << "one /64";
    std::string d;
    EXPECT_EQ(CallerOf(conf, "", "", "2001:db8::1", &d).plan, "free");
    std::string e, f;
    EXPECT_EQ(CallerOf(conf, "", "", "::ffff:10.1.2.3", &e).api_key,
              CallerOf(conf, "", "", "10.1.2.3", &f).api_key)
        << "an IPv4 address seen on an IPv6 socket is that address";
}

}  // namespace
}  // namespace solgate
