#include <gtest/gtest.h>

#include <algorithm>

#include <string>

#include "support/fakes.h"
#include "conf/failsafe_args.h"
#include "routing/router.h"

namespace solgate {
namespace {

NetworkSettings Cluster(sg_cluster_t cluster) {
    NetworkSettings s;
    s.cluster = cluster;
    return s;
}

RouteDecision RouteOn(const Network& network, const std::string& body,
                      std::string_view selector = "") {
    RpcRequest request = testing::ParseKept(body);   // pieces point into it
    return RouteRequest(request, network, PlanRoute(network, request, selector),
                        0);
}

RouteDecision Route(const std::string& body,
                    sg_cluster_t cluster = SG_CLUSTER_MAINNET_BETA) {
    testing::TestNetwork net(2, Cluster(cluster));
    RpcRequest request = testing::ParseKept(body);   // pieces point into it
    return RouteRequest(request, net.network, PlanRoute(net.network, request, ""),
                        0);
}

TEST(Router, ForwardsOrdinaryCalls) {
    auto d = Route(R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})");
    EXPECT_TRUE(d.forward);
}

TEST(Router, ASubscriptionIsForwardedWholeOrRefusedWithAnHttpError) {
    RpcRequest subscription;
    subscription.shape = RpcRequest::Shape::kSubscription;
    EXPECT_EQ(RequestMethodName(subscription), "websocket");
    testing::PubsubTestNetwork t(2, {0});   // up-1 has no ws=
    const Network& n = t.network;

    RouteDecision d =
        RouteRequest(subscription, n, PlanRoute(n, subscription, ""), 0);
    EXPECT_TRUE(d.forward);
    EXPECT_TRUE(d.forward_body.empty() && d.pieces.empty());

    RouteDecision none =
        RouteRequest(subscription, n, PlanRoute(n, subscription, "up-1"), 0);
    EXPECT_FALSE(none.forward);
    EXPECT_EQ(none.http_status, 503u);
    EXPECT_NE(none.answer.find("\"code\":-32601"), std::string::npos);
    RouteDecision bad =
        RouteRequest(subscription, n, PlanRoute(n, subscription, "a |"), 0);
    EXPECT_EQ(bad.http_status, 400u);
    EXPECT_NE(bad.answer.find("\"code\":-32602"), std::string::npos);
}

TEST(Router, ASubscriptionOverWsMaxConnectionsIsA503) {
    RpcRequest subscription;
    subscription.shape = RpcRequest::Shape::kSubscription;
    NetworkSettings settings;
    settings.ws_max_connections = 2;
    testing::PubsubTestNetwork t(1, {0}, settings);
    Network& n = t.network;
    auto route = [&] {
        return RouteRequest(subscription, n, PlanRoute(n, subscription, ""), 0);
    };
    n.host(0).ws_open = 1;
    EXPECT_TRUE(route().forward);
    n.host(0).ws_open = 2;
    RouteDecision full = route();
    EXPECT_FALSE(full.forward);
    EXPECT_EQ(full.http_status, 503u);
    EXPECT_EQ(full.retry_after_s, 5u);
    EXPECT_EQ(full.answer,
              R"({"jsonrpc":"2.0","error":{"code":-32091,"message":"WebSocket )"
              R"(connections full: network mainnet holds its 2 )"
              R"((ws_max_connections); try again later"},"id":null})");
}

TEST(Router, AnswersGenesisHashForKnownClusters) {
    auto d = Route(R"({"jsonrpc":"2.0","id":"g","method":"getGenesisHash"})");
    ASSERT_FALSE(d.forward);
    EXPECT_EQ(d.http_status, 200u);
    EXPECT_EQ(d.answer,
              R"({"jsonrpc":"2.0","result":)"
              R"("5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":"g"})");
    auto dev = Route(R"({"jsonrpc":"2.0","id":1,"method":"getGenesisHash"})",
                     SG_CLUSTER_DEVNET);
    EXPECT_NE(dev.answer.find("EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"),
              std::string::npos);
}

// A valid call without id answered here gets no answer at all (JSON-RPC
// answers no notification, not even with an error); an invalid request
// without id is still told why.
TEST(Router, ANotificationAnsweredHereGetsNoAnswer) {
    auto genesis = Route(R"({"jsonrpc":"2.0","method":"getGenesisHash"})");
    EXPECT_FALSE(genesis.forward);
    EXPECT_EQ(genesis.http_status, 200u);
    EXPECT_EQ(genesis.answer, "");
    auto bad_params = Route(R"({"jsonrpc":"2.0","method":"getBlock"})");
    EXPECT_FALSE(bad_params.forward);
    EXPECT_EQ(bad_params.answer, "");
    // the parser's params errors too (a request object, valid as such)
    auto bad_commitment = Route(
        R"({"jsonrpc":"2.0","method":"getBalance","params":["x",{"commitment":"bogus"}]})");
    EXPECT_FALSE(bad_commitment.forward);
    EXPECT_EQ(bad_commitment.answer, "");
    auto invalid = Route(R"({"jsonrpc":"2.0"})");
    EXPECT_FALSE(invalid.forward);
    EXPECT_NE(invalid.answer.find(R"("code":-32600)"), std::string::npos)
        << invalid.answer;
    EXPECT_NE(invalid.answer.find(R"("id":null)"), std::string::npos);
}

TEST(Router, ForwardsGenesisHashForCustomClusters) {
    auto d = Route(R"({"jsonrpc":"2.0","id":1,"method":"getGenesisHash"})",
                   SG_CLUSTER_CUSTOM);
    EXPECT_TRUE(d.forward);
}

TEST(Router, ParseErrorHasNullId) {
    auto d = Route(R"({"jsonrpc":"2.0","id":1,"method":)");
    ASSERT_FALSE(d.forward);
    EXPECT_EQ(d.answer, R"({"jsonrpc":"2.0","error":{"code":-32700,)"
                        R"("message":"Parse error"},"id":null})");
}

TEST(Router, InvalidRequestEchoesReadableId) {
    auto d = Route(R"({"jsonrpc":"2.0","id":"abc","method":7})");
    ASSERT_FALSE(d.forward);
    EXPECT_NE(d.answer.find(R"("code":-32600)"), std::string::npos);
    EXPECT_NE(d.answer.find(R"("id":"abc")"), std::string::npos);
}

TEST(Router, GetBlockNeedsASlot) {
    for (const char* params : {"", R"(,"params":[])", R"(,"params":["x"])",
                               R"(,"params":[-1])", R"(,"params":[1.5])"}) {
        auto d = Route(std::string(R"({"jsonrpc":"2.0","id":3,)"
                                   R"("method":"getBlock")") +
                       params + "}");
        ASSERT_FALSE(d.forward) << params;
        EXPECT_NE(d.answer.find(R"("code":-32602)"), std::string::npos);
        EXPECT_NE(d.answer.find(R"("id":3)"), std::string::npos);
    }
    EXPECT_TRUE(Route(R"({"jsonrpc":"2.0","id":3,"method":"getBlock",)"
                      R"("params":[5]})").forward);
}

TEST(Router, BatchOfValidCallsForwardsWhole) {
    auto d = Route(R"([{"jsonrpc":"2.0","id":1,"method":"getBalance"},)"
                   R"({"jsonrpc":"2.0","id":2,"method":"getAccountInfo"}])");
    EXPECT_TRUE(d.forward);
    EXPECT_TRUE(d.forward_body.empty()) << "the client's body as it is";
    EXPECT_TRUE(d.merge.empty());
}

// A getSlot in a batch is corrected: the batch goes as it is, its answer
// through the merger.
TEST(Router, ABatchWithAGetSlotIsMergedThoughSentWhole) {
    auto d = Route(R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"},)"
                   R"( {"jsonrpc":"2.0","id":2,"method":"getBalance"}])");
    ASSERT_TRUE(d.forward);
    EXPECT_TRUE(d.forward_body.empty());
    ASSERT_EQ(d.merge.size(), 2u);
    EXPECT_TRUE(d.merge[0].forwarded && d.merge[1].forwarded);
    EXPECT_EQ(d.merge[1].id, "2");
    EXPECT_TRUE(d.pieces.empty());
}

std::string BatchOf(size_t n) {
    std::string body = "[";
    for (size_t i = 0; i < n; i++) {
        body += (i ? "," : "") + std::string(R"({"jsonrpc":"2.0","id":)") +
                std::to_string(i) + R"(,"method":"getSlot"})";
    }
    return body + "]";
}

TEST(Router, ABatchOverMaxBatchSizeIsRefusedHere) {
    NetworkSettings s;
    s.max_batch_size = 3;
    testing::TestNetwork net(2, s);
    EXPECT_TRUE(RouteOn(net.network, BatchOf(3)).forward);
    RouteDecision d = RouteOn(net.network, BatchOf(4));
    ASSERT_FALSE(d.forward);
    EXPECT_EQ(d.http_status, 200u);
    EXPECT_EQ(d.answer,
              R"({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid )"
              R"(request: a batch of 4 calls is more than max_batch_size 3"},)"
              R"("id":null})");
    s.max_batch_size = 0;   // no limit
    testing::TestNetwork open(2, s);
    EXPECT_TRUE(RouteOn(open.network, BatchOf(500)).forward);
}

TEST(Router, BatchAnsweredLocallyWhenEveryCallIs) {
    auto d = Route(R"([{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"},)"
                   R"({"jsonrpc":"2.0","id":2,"method":5}])");
    ASSERT_FALSE(d.forward);
    EXPECT_EQ(d.answer.front(), '[');
    EXPECT_EQ(d.answer.back(), ']');
    EXPECT_NE(d.answer.find(R"("result":"5eykt)"), std::string::npos);
    EXPECT_NE(d.answer.find(R"("code":-32600)"), std::string::npos);
}

// The calls answered here take their places; the others go upstream as
// the client wrote them, notifications included (they get no answer).
TEST(Router, ABatchIsJudgedCallByCall) {
    auto d = Route(R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"},)"
                   R"({"jsonrpc":"2.0","id":2},)"
                   R"({"jsonrpc":"2.0","id":3,"method":"getGenesisHash"},)"
                   R"( {"jsonrpc":"2.0","method":"getSlot"} ,)"
                   R"({"jsonrpc":"2.0","id":"x","method":"getBalance"}])");
    ASSERT_TRUE(d.forward);
    EXPECT_EQ(d.forward_body,
              R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"},)"
              R"({"jsonrpc":"2.0","method":"getSlot"},)"
              R"({"jsonrpc":"2.0","id":"x","method":"getBalance"}])");
    ASSERT_EQ(d.merge.size(), 4u);
    EXPECT_TRUE(d.merge[0].forwarded);
    EXPECT_EQ(d.merge[1].text,
              R"({"jsonrpc":"2.0","error":{"code":-32600,"message":)"
              R"("Invalid request: missing \"method\""},"id":2})");
    EXPECT_FALSE(d.merge[2].forwarded);
    EXPECT_NE(d.merge[2].text.find(R"("result":"5eykt)"), std::string::npos);
    EXPECT_TRUE(d.merge[3].forwarded);
    EXPECT_EQ(d.merge[3].id, R"("x")");
    EXPECT_EQ(MissingBatchAnswer(d.merge[3].id),
              R"({"jsonrpc":"2.0","error":{"code":-32603,"message":)"
              R"("Internal error: the upstream answered the batch without )"
              R"(an answer to this call"},"id":"x"})");
}

RouteDecision RouteRun(const Network& network, const std::string& body) {
    RpcRequest request = testing::ParseKept(body);   // pieces point into it
    return RouteRequest(request, network, PlanRoute(network, request, ""), 0,
                        RouteOptions{true});
}

NetworkSettings NoRetry() {
    NetworkSettings s = Cluster(SG_CLUSTER_MAINNET_BETA);
    s.retry_missing_data.on = false;
    return s;
}

// The calls that need the single-call path go alone; the calls between
// them go as runs, answers made here keep their places.
TEST(Router, ABatchWithACallThatGoesAloneGoesCallByCall) {
    testing::TestNetwork net(2, Cluster(SG_CLUSTER_MAINNET_BETA));
    const std::string tx =
        R"({"jsonrpc":"2.0","id":2,"method":"getTransaction","params":["s"]})";
    const std::string block =
        R"({"jsonrpc":"2.0","id":6,"method":"getBlock","params":[5]})";
    auto d = RouteOn(net.network,
                     "[" R"({"jsonrpc":"2.0","id":1,"method":"getGenesisHash"},)" +
                         tx + "," +
                         R"({"jsonrpc":"2.0","id":3,"method":"getBalance"},)"
                         R"({"jsonrpc":"2.0","method":"getTransaction"},)"
                         R"({"jsonrpc":"2.0","id":5,"method":"getAccountInfo"},)" +
                         block + "]");
    ASSERT_TRUE(d.forward);
    EXPECT_TRUE(d.forward_body.empty());
    EXPECT_TRUE(d.merge.empty());
    ASSERT_EQ(d.pieces.size(), 4u);
    EXPECT_EQ(d.pieces[0].kind, BatchPiece::Kind::kLocal);
    EXPECT_NE(d.pieces[0].text.find(R"("result":"5eykt)"), std::string::npos);
    EXPECT_EQ(d.pieces[1].kind, BatchPiece::Kind::kAlone);
    EXPECT_EQ(d.pieces[1].call, tx);
    EXPECT_EQ(d.pieces[2].kind, BatchPiece::Kind::kRun);
    EXPECT_EQ(d.pieces[2].text,
              R"([{"jsonrpc":"2.0","id":3,"method":"getBalance"},)"
              R"({"jsonrpc":"2.0","method":"getTransaction"},)"
              R"({"jsonrpc":"2.0","id":5,"method":"getAccountInfo"}])")
        << "a notification never goes alone";
    EXPECT_TRUE(d.pieces[2].answers);
    EXPECT_EQ(d.pieces[3].kind, BatchPiece::Kind::kAlone);
    EXPECT_EQ(d.pieces[3].call, block);

    // a run of notifications answers nothing
    d = RouteOn(net.network,
                R"([{"jsonrpc":"2.0","method":"getBalance"},)" + tx + "]");
    ASSERT_EQ(d.pieces.size(), 2u);
    EXPECT_FALSE(d.pieces[0].answers);

    // with retry_missing_data off and no policy, nothing needs to
    testing::TestNetwork plain(2, NoRetry());
    d = RouteOn(plain.network, "[" + tx + "," + block + "]");
    EXPECT_TRUE(d.forward && d.pieces.empty() && d.merge.empty());
}

TEST(Router, PolicyAndCubeRunnerCallsGoAlone) {
    NetworkSettings s = NoRetry();
    ASSERT_FALSE(conf::ParseHedge({"getBalance"}, &s.hedge));
    testing::TestNetwork hedged(2, s);
    auto d = RouteOn(hedged.network,
                     R"([{"jsonrpc":"2.0","id":1,"method":"getBalance"},)"
                     R"({"jsonrpc":"2.0","id":2,"method":"getSlot"}])");
    ASSERT_EQ(d.pieces.size(), 2u);
    EXPECT_EQ(d.pieces[0].kind, BatchPiece::Kind::kAlone);
    EXPECT_EQ(d.pieces[1].kind, BatchPiece::Kind::kRun);

    testing::TestNetwork net(2, NoRetry());
    // The router only asks whether a Cube Runner serves the network.
    alignas(8) static char service[8];
    net.network.set_blocks(reinterpret_cast<BlockService*>(service));
    d = RouteOn(net.network,
                R"([{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[5]},)"
                R"({"jsonrpc":"2.0","id":2,"method":"getBalance","params":["x"]}])");
    ASSERT_EQ(d.pieces.size(), 2u);
    EXPECT_EQ(d.pieces[0].kind, BatchPiece::Kind::kAlone);
    EXPECT_EQ(d.pieces[1].text,
              R"([{"jsonrpc":"2.0","id":2,"method":"getBalance","params":["x"]}])");
    // a Cube Runner call that reached a run is never forwarded
    d = RouteRun(net.network,
                 R"([{"jsonrpc":"2.0","id":1,"method":"getBlock","params":[5]},)"
                 R"({"jsonrpc":"2.0","id":2,"method":"getBalance"}])");
    ASSERT_TRUE(d.forward);
    EXPECT_EQ(d.forward_body, R"([{"jsonrpc":"2.0","id":2,"method":"getBalance"}])");
    ASSERT_EQ(d.merge.size(), 2u);
    EXPECT_NE(d.merge[0].text.find("served by Cube Runner"), std::string::npos);
}

// Each call that goes alone is a subrequest: past kMaxAloneCalls the
// calls go in runs, and Cube Runner's are refused (never forwarded).
TEST(Router, AtMostKMaxAloneCallsGoAlone) {
    NetworkSettings s = Cluster(SG_CLUSTER_MAINNET_BETA);
    s.max_batch_size = 0;
    testing::TestNetwork net(2, s);
    alignas(8) static char service[8];
    net.network.set_blocks(reinterpret_cast<BlockService*>(service));
    std::string body = "[";
    const size_t n = kMaxAloneCalls + 3;
    for (size_t i = 0; i < n; i++) {
        body += (i ? "," : "") + std::string(R"({"jsonrpc":"2.0","id":)") +
                std::to_string(i) +
                (i + 1 < n ? R"(,"method":"getTransaction","params":["s"]})"
                           : R"(,"method":"getBlock","params":[5]})");
    }
    auto d = RouteOn(net.network, body + "]");
    ASSERT_EQ(d.pieces.size(), kMaxAloneCalls + 2);
    EXPECT_EQ(d.pieces[kMaxAloneCalls].kind, BatchPiece::Kind::kRun);
    EXPECT_EQ(d.pieces.back().kind, BatchPiece::Kind::kLocal);
    EXPECT_NE(d.pieces.back().text.find("served by Cube Runner"), std::string::npos);
    // a Cube Runner notification is not read by anyone: not sent, and
    // (a notification) not answered either
    d = RouteOn(net.network, R"([{"jsonrpc":"2.0","method":"getBlock","params":[5]},)"
                             R"({"jsonrpc":"2.0","id":2,"method":"getBalance"}])");
    ASSERT_TRUE(d.pieces.empty());
    ASSERT_EQ(d.merge.size(), 1u);
    EXPECT_TRUE(d.merge[0].forwarded);
    EXPECT_EQ(d.forward_body, R"([{"jsonrpc":"2.0","id":2,"method":"getBalance"}])");
}

// JSON-RPC answers no notification, in a batch as alone: a valid call
// without id answered here puts no element in the batch's answer, and a
// batch of nothing else gets no answer at all (not "[]"); an invalid call
// without id is still answered, with a null id.
TEST(Router, ABatchAnswersNothingForItsNotifications) {
    testing::TestNetwork net(2, Cluster(SG_CLUSTER_MAINNET_BETA));
    auto local = RouteOn(net.network,
                         R"([{"jsonrpc":"2.0","method":"getGenesisHash"},)"
                         R"({"jsonrpc":"2.0","id":7,"method":"getGenesisHash"},)"
                         R"({"jsonrpc":"2.0"}])");
    ASSERT_FALSE(local.forward);
    EXPECT_EQ(local.answer.find(R"("id":7)") != std::string::npos, true)
        << local.answer;
    EXPECT_EQ(local.answer.rfind('[', 0), 0u) << local.answer;
    EXPECT_EQ(std::count(local.answer.begin(), local.answer.end(), '{'),
              std::count(local.answer.begin(), local.answer.end(), '}'));
    EXPECT_NE(local.answer.find(R"(-32600)"), std::string::npos);
    EXPECT_NE(local.answer.find(R"("id":null)"), std::string::npos);
    // two elements: the id 7 answer and the invalid call's error
    EXPECT_EQ(local.answer.find("5eykt4Us"), local.answer.rfind("5eykt4Us"));

    auto quiet = RouteOn(net.network,
                         R"([{"jsonrpc":"2.0","method":"getGenesisHash"},)"
                         R"({"jsonrpc":"2.0","method":"getGenesisHash"}])");
    ASSERT_FALSE(quiet.forward);
    EXPECT_EQ(quiet.answer, "");

    // with calls that go upstream: only those are sent and merged
    auto mixed = RouteOn(net.network,
                         R"([{"jsonrpc":"2.0","method":"getGenesisHash"},)"
                         R"({"jsonrpc":"2.0","id":2,"method":"getBalance"}])");
    ASSERT_TRUE(mixed.forward);
    ASSERT_EQ(mixed.merge.size(), 1u);
    EXPECT_TRUE(mixed.merge[0].forwarded);
    EXPECT_EQ(mixed.forward_body, R"([{"jsonrpc":"2.0","id":2,"method":"getBalance"}])");
}

// In a run, an answer made here for a notification has no place.
TEST(Router, ARunAnswersNothingForItsNotifications) {
    testing::TestNetwork net(2, Cluster(SG_CLUSTER_MAINNET_BETA));
    auto d = RouteRun(net.network, R"([{"jsonrpc":"2.0","method":"getGenesisHash"},)"
                                   R"({"jsonrpc":"2.0","id":2,"method":"getBalance"}])");
    ASSERT_TRUE(d.forward);
    ASSERT_EQ(d.merge.size(), 1u);
    EXPECT_TRUE(d.merge[0].forwarded);
    EXPECT_EQ(d.forward_body, R"([{"jsonrpc":"2.0","id":2,"method":"getBalance"}])");
    d = RouteRun(net.network, R"([{"jsonrpc":"2.0","method":"getGenesisHash"},)"
                              R"({"jsonrpc":"2.0","id":2,"method":"getGenesisHash"}])");
    ASSERT_FALSE(d.forward);
    EXPECT_EQ(d.answer.front(), '{');
    EXPECT_EQ(d.answer.find("},{"), std::string::npos) << d.answer;
}

// A run: no calls go alone, no brackets, and its answer is always merged.
TEST(Router, ARunIsMergedWithoutBrackets) {
    testing::TestNetwork net(2, Cluster(SG_CLUSTER_MAINNET_BETA));
    auto d = RouteRun(net.network,
                      R"([{"jsonrpc":"2.0","id":1,"method":"getTransaction"},)"
                      R"({"jsonrpc":"2.0","id":2,"method":"getBalance"}])");
    ASSERT_TRUE(d.forward);
    EXPECT_TRUE(d.pieces.empty());
    EXPECT_TRUE(d.forward_body.empty()) << "sent as it is";
    ASSERT_EQ(d.merge.size(), 2u);
    d = RouteRun(net.network,
                 R"([{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"},)"
                 R"({"jsonrpc":"2.0","id":2,"method":5}])");
    ASSERT_FALSE(d.forward);
    EXPECT_EQ(d.answer.front(), '{');
    EXPECT_EQ(d.answer.back(), '}');
    EXPECT_NE(d.answer.find(R"(},{)"), std::string::npos);
}

TEST(Router, FailAnswersEveryCallWithItsId) {
    std::string body = R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"},)"
                       R"({"jsonrpc":"2.0","id":"x","method":"getSlot"}])";
    auto req = ParseRpcRequest(body.data(), body.size());
    std::string out = FailRequest(req, -32603, "down");
    EXPECT_EQ(out, R"([{"jsonrpc":"2.0","error":{"code":-32603,"message":)"
                   R"("down"},"id":1},{"jsonrpc":"2.0","error":{"code":)"
                   R"(-32603,"message":"down"},"id":"x"}])");
    std::string single = R"({"jsonrpc":"2.0","id":9,"method":"getSlot"})";
    auto one = ParseRpcRequest(single.data(), single.size());
    EXPECT_EQ(FailRequest(one, -32603, "down"),
              R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"down"},)"
              R"("id":9})");
}

class GuardTest : public ::testing::Test {
protected:
    RouteDecision GetBlock(uint64_t slot) {
        std::string body = R"({"jsonrpc":"2.0","id":5,"method":"getBlock",)"
                           R"("params":[)" + std::to_string(slot) + "]}";
        return RouteOn(net.network, body);
    }

    testing::TestNetwork net{2, Cluster(SG_CLUSTER_MAINNET_BETA)};
};

TEST_F(GuardTest, FailsOpenWhileTheFrontierIsUnknown) {
    EXPECT_TRUE(GetBlock(999999999).forward);
}

TEST_F(GuardTest, RejectsBeyondFrontierPlusMargin) {
    net.network.record(0).shred = 1000;
    net.network.record(1).shred = 990;  // the frontier is the pool's max
    EXPECT_TRUE(GetBlock(1000).forward);
    EXPECT_TRUE(GetBlock(1003).forward);  // margin 3 at 400 ms
    auto d = GetBlock(1004);
    ASSERT_FALSE(d.forward);
    EXPECT_EQ(d.answer, R"({"jsonrpc":"2.0","error":{"code":-32004,)"
                        R"("message":"Block not available for slot 1004"},)"
                        R"("id":5})");
    EXPECT_EQ(net.network.counters().guard_rejections.load(), 1u);
}

TEST(Guard, MarginWidensWithTheDebounce) {
    NetworkSettings s = Cluster(SG_CLUSTER_MAINNET_BETA);
    s.debounce_ms = 2000;
    testing::TestNetwork net(1, s);
    net.network.record(0).shred = 1000;
    auto get_block = [&](uint64_t slot) {
        std::string body = R"({"jsonrpc":"2.0","id":1,"method":"getBlock",)"
                           R"("params":[)" + std::to_string(slot) + "]}";
        return RouteOn(net.network, body);
    };
    EXPECT_TRUE(get_block(1007).forward);
    EXPECT_FALSE(get_block(1008).forward);
}

TEST(Guard, OffForwardsEverything) {
    NetworkSettings s = Cluster(SG_CLUSTER_MAINNET_BETA);
    s.enforce_block_availability = false;
    testing::TestNetwork net(1, s);
    net.network.record(0).shred = 1000;
    std::string body = R"({"jsonrpc":"2.0","id":1,"method":"getConfirmedBlock",)"
                       R"("params":[5000]})";
    EXPECT_TRUE(RouteOn(net.network, body).forward);
}

TEST(Router, MethodNames) {
    auto name = [](const std::string& body) {
        return std::string(
            RequestMethodName(ParseRpcRequest(body.data(), body.size())));
    };
    EXPECT_EQ(name(R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})"),
              "getSlot");
    EXPECT_EQ(name(R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"}])"),
              "batch");
    EXPECT_EQ(name("{"), "");
}

}  // namespace
}  // namespace solgate
