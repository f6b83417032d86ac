// A network as nginx configures it: names, upstream lines, upstream
// blocks, settings; and the operator's cordons.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "routing/network.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::TestNetwork;

TEST(NetworkConf, UpstreamLinesBecomeProxyAndPollTargets) {
    Network n("mainnet", {});
    size_t i = 9;
    ASSERT_FALSE(n.AddUpstreamArgs({"a", "http://sol_a"}, &i));
    EXPECT_EQ(i, 0u);
    ASSERT_FALSE(n.AddUpstreamArgs({"v", "https://vendor_pool/v1/KEY",
                                    "host=rpc.vendor.example",
                                    "tags=family:vendor"},
                                   &i));
    EXPECT_EQ(i, 1u);
    const UpstreamConf& a = n.upstream(0);
    EXPECT_EQ(a.proxy.url, "http://sol_a/");
    EXPECT_EQ(a.poll.url, "http://sol_a/");
    EXPECT_EQ(a.poll.host_header, "sol_a");
    EXPECT_EQ(a.poll.user_agent.rfind("solgate-poller/", 0), 0u);
    const UpstreamConf& v = n.upstream(1);
    EXPECT_EQ(v.tags, std::vector<std::string>{"family:vendor"});
    EXPECT_EQ(v.poll.host_header, "rpc.vendor.example");
    EXPECT_TRUE(v.poll.connect_to.empty());
}

TEST(NetworkConf, TlsNameIsTheHostThePollerAsksForAndChecks) {
    Network n("mainnet", {});
    size_t i;
    ASSERT_FALSE(n.AddUpstreamArgs({"v", "https://127.0.0.1:8443/v1/KEY",
                                    "tls_name=rpc.test", "tls_verify=on"},
                                   &i));
    const UpstreamConf& v = n.upstream(0);
    EXPECT_EQ(v.proxy.url, "https://127.0.0.1:8443/v1/KEY");  // nginx's
    EXPECT_EQ(v.poll.url, "https://rpc.test/v1/KEY");
    EXPECT_EQ(v.poll.connect_to, "::127.0.0.1:8443");
    EXPECT_EQ(v.poll.host_header, "127.0.0.1:8443");  // as proxy_pass sends
    EXPECT_TRUE(v.poll.tls.verify);
    // through a block: tls_name before host=, the block's server address
    ASSERT_FALSE(n.AddUpstreamArgs({"w", "https://vendor_pool/v1/KEY",
                                    "host=rpc.vendor.example",
                                    "tls_name=edge.vendor.example",
                                    "tls_verify=off"},
                                   &i));
    size_t nodes = 0;
    ASSERT_FALSE(n.ReachThroughBlock(1, {{"10.1.1.1:443"}}, &nodes));
    const UpstreamConf& w = n.upstream(1);
    EXPECT_EQ(w.poll.url, "https://edge.vendor.example/v1/KEY");
    EXPECT_EQ(w.poll.connect_to, "::10.1.1.1:443");
    EXPECT_EQ(w.poll.host_header, "rpc.vendor.example");
    EXPECT_FALSE(w.poll.tls.verify);
}

TEST(NetworkConf, ThroughAnUpstreamBlockThePollerNamesTheRealHost) {
    Network n("mainnet", {});
    size_t i;
    ASSERT_FALSE(n.AddUpstreamArgs({"a", "http://sol_a"}, &i));
    ASSERT_FALSE(n.AddUpstreamArgs({"v", "https://vendor_pool/v1/KEY",
                                    "host=rpc.vendor.example"},
                                   &i));
    size_t nodes = 0;
    ASSERT_FALSE(n.ReachThroughBlock(0, {{"127.0.0.1:8899"}}, &nodes));
    EXPECT_EQ(nodes, 1u);
    ASSERT_FALSE(n.ReachThroughBlock(1, {{"10.1.1.1:443"}}, &nodes));
    EXPECT_EQ(n.upstream(0).id, "a");  // one server: one node, same id
    EXPECT_EQ(n.upstream(0).block_server, 0u);
    EXPECT_EQ(n.upstream(0).poll.connect_to, "::127.0.0.1:8899");
    EXPECT_EQ(n.upstream(0).poll.url, "http://sol_a/");   // host is the block
    EXPECT_EQ(n.upstream(1).poll.connect_to, "::10.1.1.1:443");
    EXPECT_EQ(n.upstream(1).poll.url, "https://rpc.vendor.example/v1/KEY");
    EXPECT_EQ(n.upstream(1).proxy.url, "https://vendor_pool/v1/KEY");
    BlockServer unix_server{"unix:/tmp/x", true};
    EXPECT_EQ(n.ReachThroughBlock(0, {unix_server}, &nodes),
              "upstream \"a\": server 1 of upstream block \"sol_a\" is a unix "
              "socket, which the state poller cannot reach");
}

TEST(NetworkConf, EveryServerOfABlockIsANode) {
    Network n("mainnet", {});
    size_t i;
    ASSERT_FALSE(n.AddUpstreamArgs({"first", "http://10.0.0.9:80"}, &i));
    ASSERT_FALSE(n.AddUpstreamArgs({"pool", "http://own_pool/rpc",
                                    "tags=family:own", "methods=get*",
                                    "weight=3"},
                                   &i));
    ASSERT_FALSE(n.AddUpstreamArgs({"last", "http://10.0.0.8:80"}, &i));
    BlockServer down{"10.0.0.3:8899"};
    down.down = true;
    BlockServer backup{"10.0.0.4:8899"};
    backup.backup = true;
    size_t nodes = 0;
    ASSERT_FALSE(n.ReachThroughBlock(
        1, {{"10.0.0.1:8899"}, {"10.0.0.2:8899"}, down, backup}, &nodes));
    ASSERT_EQ(nodes, 3u);  // the server marked down is no node
    ASSERT_EQ(n.size(), 5u);
    std::vector<std::string> ids;
    for (size_t u = 0; u < n.size(); u++) ids.push_back(n.upstream(u).id);
    EXPECT_EQ(ids, (std::vector<std::string>{"first", "pool.1", "pool.2",
                                             "pool.4", "last"}));
    const UpstreamConf& second = n.upstream(2);
    EXPECT_EQ(second.group, "pool");
    EXPECT_EQ(second.block_server, 2u);
    EXPECT_EQ(second.poll.connect_to, "::10.0.0.2:8899");
    EXPECT_EQ(second.proxy.url, "http://own_pool/rpc");
    EXPECT_EQ(second.tags, std::vector<std::string>{"family:own"});
    EXPECT_EQ(second.methods, std::vector<std::string>{"get*"});
    EXPECT_EQ(second.routing.weight, 3u);
    EXPECT_FALSE(second.routing.backup);
    EXPECT_TRUE(n.upstream(3).routing.backup);  // the block's backup server
    EXPECT_EQ(n.upstream(3).block_server, 4u);
    EXPECT_TRUE(n.has_backups());
    EXPECT_EQ(n.all_upstreams(), (std::vector<size_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(n.FindUpstream("last"), 4u);

    auto shared = std::make_unique<NetworkShared>();
    std::string error;
    ASSERT_TRUE(n.Bind(shared.get(), true, 0, &error)) << error;
    // The upstream's id selects all of its nodes; a node's id one of them.
    EXPECT_EQ(n.ResolveSelector("pool").matched,
              (std::vector<size_t>{1, 2, 3}));
    EXPECT_EQ(n.ResolveSelector("pool.2").matched, std::vector<size_t>{2});
    EXPECT_EQ(n.ResolveSelector("!pool").matched,
              (std::vector<size_t>{0, 4}));
    EXPECT_EQ(n.ResolveSelector("family:own & !pool.1").matched,
              (std::vector<size_t>{2, 3}));
}

TEST(NetworkConf, ABlockSplitIsRefusedWhenItCannotBeNodes) {
    Network n("mainnet", {});
    size_t i, nodes = 0;
    ASSERT_FALSE(n.AddUpstreamArgs({"pool", "http://own_pool"}, &i));
    ASSERT_FALSE(n.AddUpstreamArgs({"pool.2", "http://10.0.0.2"}, &i));
    BlockServer down{"10.0.0.1:80"};
    down.down = true;
    EXPECT_EQ(n.ReachThroughBlock(0, {down, down}, &nodes),
              "upstream \"pool\": every server of upstream block \"own_pool\" "
              "is marked down");
    EXPECT_EQ(n.ReachThroughBlock(0, {{"10.0.0.1:80"}, {"10.0.0.3:80"}}, &nodes),
              "upstream \"pool\": its node \"pool.2\" (server of upstream block "
              "\"own_pool\") has the id of another upstream");
    EXPECT_EQ(n.size(), 2u);  // refused: nothing changed
    std::vector<BlockServer> many(kMaxUpstreams, BlockServer{"10.0.0.1:80"});
    EXPECT_EQ(n.ReachThroughBlock(1, many, &nodes),
              "upstream \"pool.2\": the servers of upstream block "
              "\"10.0.0.2\" make network \"mainnet\" more than 256 nodes");
}

TEST(NetworkConf, DuplicatesAndTheUpstreamLimit) {
    Network n("m", {});
    size_t i;
    ASSERT_FALSE(n.AddUpstreamArgs({"a", "http://x"}, &i));
    EXPECT_EQ(n.AddUpstreamArgs({"a", "http://y"}, &i),
              "duplicate upstream \"a\" in network \"m\"");
    for (size_t k = 1; k < kMaxUpstreams; k++) {
        ASSERT_FALSE(n.AddUpstreamArgs({"u" + std::to_string(k), "http://x"}, &i));
    }
    EXPECT_EQ(n.AddUpstreamArgs({"one-more", "http://x"}, &i),
              "too many upstreams in network \"m\", the maximum is 256");
    EXPECT_EQ(n.size(), kMaxUpstreams);
}

NetworkTuning Tuning(uint32_t debounce_ms, int64_t max_finalized_slot_lag,
                     bool enforce, int64_t max_slot_lag = 20) {
    NetworkTuning t;
    t.debounce_ms = debounce_ms;
    t.max_finalized_slot_lag = max_finalized_slot_lag;
    t.enforce_block_availability = enforce;
    t.max_slot_lag = max_slot_lag;
    return t;
}

TEST(NetworkConf, SettingsOnceAndInRange) {
    Network n("m", {});
    EXPECT_EQ(n.Configure(Tuning(400, 100, true)),
              "solgate_network \"m\" has no \"upstream\"");
    size_t i;
    ASSERT_FALSE(n.AddUpstreamArgs({"a", "http://x"}, &i));
    EXPECT_FALSE(n.SetCluster("testnet"));
    EXPECT_EQ(n.SetCluster("devnet"), "\"cluster\" directive is duplicate");
    EXPECT_EQ(n.settings().cluster, SG_CLUSTER_TESTNET);
    EXPECT_FALSE(n.SetCommitment("confirmed"));
    EXPECT_EQ(n.SetCommitment("finalized"),
              "\"commitment\" directive is duplicate");
    EXPECT_EQ(n.settings().default_commitment, SG_COMMITMENT_CONFIRMED);
    EXPECT_FALSE(n.SetDefaultSelector(""));   // "": no default selector
    EXPECT_EQ(n.SetDefaultSelector("a"),
              "\"use_upstream_default\" directive is duplicate");
    EXPECT_EQ(n.Configure(Tuning(60001, 100, true)),
              "state_poller_debounce of network \"m\" must be at most 60s");
    EXPECT_EQ(n.Configure(Tuning(400, -1, true)),
              "max_finalized_slot_lag of network \"m\" must not be negative");
    EXPECT_EQ(n.Configure(Tuning(400, 100, true, -1)),
              "max_slot_lag of network \"m\" must not be negative");
    EXPECT_FALSE(n.Configure(Tuning(2000, 0, false, 0)));
    EXPECT_EQ(n.settings().max_slot_lag, 0u);
    EXPECT_EQ(n.settings().debounce_ms, 2000u);
    EXPECT_EQ(n.settings().max_finalized_slot_lag, 0);
    EXPECT_FALSE(n.settings().enforce_block_availability);
    EXPECT_EQ(n.GuardMargin(), 7u);
}

TEST(NetworkConf, ADefaultSelectorThatMatchesNoUpstreamIsRefused) {
    Network n("m", {});
    EXPECT_FALSE(n.CheckDefaultSelector());   // none given
    size_t i;
    ASSERT_FALSE(n.AddUpstreamArgs({"a", "http://x", "tags=family:vendor"}, &i));
    ASSERT_FALSE(n.SetDefaultSelector("family:own"));
    const std::string unmatched =
        "use_upstream_default \"family:own\" of network \"m\" matches no "
        "upstream (every request would get -32602)";
    EXPECT_EQ(n.CheckDefaultSelector(), unmatched);
    EXPECT_EQ(n.Configure(Tuning(400, 100, true)), unmatched);
    ASSERT_FALSE(n.AddUpstreamArgs({"b", "http://y", "tags=family:own"}, &i));
    EXPECT_FALSE(n.CheckDefaultSelector());
    EXPECT_FALSE(n.Configure(Tuning(400, 100, true)));
}

TEST(NetworkConf, AConsensusNeedsAsManyUpstreamsAsMustAgree) {
    Network n("m", {});
    size_t i;
    ASSERT_FALSE(n.AddUpstreamArgs({"a", "http://x"}, &i));
    ASSERT_FALSE(n.AddUpstreamArgs({"b", "http://y"}, &i));
    EXPECT_FALSE(n.CheckConsensusReach());   // no consensus
    ASSERT_FALSE(n.SetPolicy("consensus", {"getBalance", "participants=5",
                                           "agreement=3"}));
    EXPECT_EQ(n.CheckConsensusReach(),
              "\"consensus\" asks 3 upstreams to agree (agreement=), but "
              "network \"m\" has 2: every call it takes would fail with "
              "-32090");
    ASSERT_FALSE(n.AddUpstreamArgs({"c", "http://z"}, &i));
    EXPECT_FALSE(n.CheckConsensusReach());
}

TEST(NetworkConf, AConsensusNeedsAsManyUpstreamsServingTheMethod) {
    Network n("m", {});
    size_t i;
    ASSERT_FALSE(n.AddUpstreamArgs({"a", "http://x"}, &i));
    ASSERT_FALSE(n.AddUpstreamArgs({"b", "http://y", "methods=getBlock"}, &i));
    ASSERT_FALSE(n.AddUpstreamArgs({"c", "http://z",
                                    "ignore_methods=getBal*"}, &i));
    ASSERT_FALSE(n.SetPolicy("consensus", {"getBlock|getBalance",
                                           "agreement=2"}));
    EXPECT_EQ(n.CheckConsensusReach(),
              "\"consensus\" asks 2 upstreams to agree (agreement=), but "
              "only 1 of network \"m\"'s upstreams serve getBalance "
              "(methods=, ignore_methods=): every such call would fail "
              "with -32090");
    // a glob is not judged: it may match names no upstream filters
    Network g("g", {});
    ASSERT_FALSE(g.AddUpstreamArgs({"a", "http://x"}, &i));
    ASSERT_FALSE(g.AddUpstreamArgs({"b", "http://y", "methods=getBlock"}, &i));
    ASSERT_FALSE(g.SetPolicy("consensus", {"get*", "agreement=2"}));
    EXPECT_FALSE(g.CheckConsensusReach());
}

TEST(NetworkConf, DefaultsComeFromTheCAbi) {
    NetworkSettings s;
    EXPECT_EQ(s.debounce_ms, static_cast<uint32_t>(SG_DEFAULT_DEBOUNCE_MS));
    EXPECT_EQ(s.max_finalized_slot_lag, SG_DEFAULT_MAX_FINALIZED_LAG);
    EXPECT_TRUE(s.enforce_block_availability);
    EXPECT_EQ(kMaxUpstreams, static_cast<size_t>(SG_MAX_UPSTREAMS));
}

TEST(OperatorCordon, ReplacesThePollersAndKeepsAPrintableReason) {
    TestNetwork t(2);
    Network& n = t.network;
    n.record(0).SwapCordon(CordonOwner::kNone,
                         {CordonOwner::kPoller, CordonCause::kShredLag, 1});
    n.OperatorCordon(0, "disk\x01" "full \xff", 42);
    CordonState s = n.record(0).Cordon();
    EXPECT_EQ(s.owner, CordonOwner::kOperator);
    EXPECT_EQ(s.cause, CordonCause::kOperator);
    EXPECT_EQ(s.since_wall_ms, 42);
    EXPECT_EQ(n.record(0).cordon_note.Read(), "disk?full ?");
    EXPECT_EQ(n.record(0).host.cordon_events.load(), 1u);
    n.OperatorCordon(1, "", 43);
    EXPECT_EQ(n.record(1).cordon_note.Read(), "cordoned by the operator");
    n.OperatorUncordon(0, 0);
    EXPECT_EQ(n.record(0).Cordon().owner, CordonOwner::kNone);
    EXPECT_TRUE(n.Cordoned(1));
}

TEST(AllCordonedWarning, AtMostOncePerInterval) {
    TestNetwork t(1);
    EXPECT_TRUE(t.network.TakeAllCordonedWarning(5000));
    EXPECT_FALSE(t.network.TakeAllCordonedWarning(5000 + kAllCordonedWarnMs - 1));
    EXPECT_TRUE(t.network.TakeAllCordonedWarning(5000 + kAllCordonedWarnMs));
}

}  // namespace
}  // namespace solgate
