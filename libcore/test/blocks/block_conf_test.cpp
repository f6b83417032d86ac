// The solgate_blocks configuration: each directive checked as given, with
// the message nginx prints, and the limits that the shared zone's arrays
// depend on.
#include "blocks/block_conf.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace solgate {
namespace {

using Refusal = std::optional<std::string>;

// A builder with everything Build insists on.
BlockConfBuilder Complete() {
    BlockConfBuilder b;
    EXPECT_EQ(b.Region("us"), std::nullopt);
    EXPECT_EQ(b.Cache("/var/cache/solgate"), std::nullopt);
    EXPECT_EQ(b.State("/var/lib/solgate"), std::nullopt);
    return b;
}

TEST(BlockConfBuilder, BuildsWhatItWasGiven) {
    BlockConfBuilder b = Complete();
    EXPECT_EQ(b.MaxSize(200), std::nullopt);
    EXPECT_EQ(b.PeerToken("0123456789abcdef"), std::nullopt);
    EXPECT_EQ(b.Peer("eu", "http://eu/", false), std::nullopt);
    EXPECT_EQ(b.LongTermStorage("http://lts/"), std::nullopt);
    EXPECT_EQ(b.PlanDefine("gold", {"tier=archive", "retrieval_rate=1r/s"}),
              std::nullopt);
    BlockServiceConf conf;
    ASSERT_EQ(b.Build(&conf), std::nullopt);
    EXPECT_EQ(conf.region(), "us");
    EXPECT_EQ(conf.cache_dir(), "/var/cache/solgate");
    EXPECT_EQ(conf.state_dir(), "/var/lib/solgate");
    EXPECT_EQ(conf.max_bytes(), 200u);
    EXPECT_EQ(conf.peer_token(), "0123456789abcdef");
    ASSERT_EQ(conf.peers().size(), 1u);
    EXPECT_EQ(conf.peers()[0].name, "eu");
    EXPECT_EQ(conf.peers()[0].url, "http://eu/");
    EXPECT_FALSE(conf.peers()[0].copy);
    ASSERT_EQ(conf.long_term().size(), 1u);
    EXPECT_EQ(conf.long_term()[0].url, "http://lts/");
    EXPECT_EQ(conf.long_term()[0].connect_to, "");
    // The defaults first, then what was defined.
    ASSERT_EQ(conf.plans().size(), DefaultBlockPlans().size() + 1);
    EXPECT_EQ(conf.plans().back().name, "gold");
    EXPECT_DOUBLE_EQ(conf.plans().back().retrieval_rate, 1.0);
}

TEST(BlockConfBuilder, DirectivesGivenOnceAndNotEmpty) {
    BlockConfBuilder b = Complete();
    EXPECT_EQ(b.Region("eu"), Refusal("\"region\" directive is duplicate"));
    EXPECT_EQ(b.Cache("/x"), Refusal("\"cache\" directive is duplicate"));
    EXPECT_EQ(b.State("/x"), Refusal("\"state\" directive is duplicate"));
    BlockConfBuilder empty;
    EXPECT_EQ(empty.Region(""),
              Refusal("invalid region name \"\": must be 1 to 64 characters long"));
    EXPECT_EQ(empty.Cache(""), Refusal("invalid cache directory \"\""));
    EXPECT_EQ(empty.State(""), Refusal("invalid state directory \"\""));
    // A refused step changed nothing: the first value stays.
    BlockServiceConf conf;
    ASSERT_EQ(b.Build(&conf), std::nullopt);
    EXPECT_EQ(conf.region(), "us");
}

TEST(BlockConfBuilder, PeerTokenIsLongEnoughToTellARegionFromAClient) {
    BlockConfBuilder b = Complete();
    std::string fifteen(kMinPeerTokenBytes - 1, 't');
    EXPECT_EQ(b.PeerToken(fifteen),
              Refusal("peer_token must be at least 16 bytes: it is all that "
                      "tells another region from a client"));
    EXPECT_EQ(b.PeerToken(""), Refusal("peer_token must be at least 16 "
                                       "bytes: it is all that tells another "
                                       "region from a client"));
    EXPECT_EQ(b.PeerToken(std::string(kMinPeerTokenBytes, 't')),
              std::nullopt);
    EXPECT_EQ(b.PeerToken(std::string(40, 'u')),
              Refusal("\"peer_token\" directive is duplicate"));
}

TEST(BlockConfBuilder, PeersAreNamedOnceAndAtMostSixteen) {
    BlockConfBuilder b = Complete();
    EXPECT_EQ(b.Peer("", "http://x/", true),
              Refusal("invalid peer name \"\": must be 1 to 64 characters long"));
    EXPECT_EQ(b.Peer("eu", "", true),
              Refusal("invalid peer URL \"\": must start with \"http://\" or \"https://\""));
    EXPECT_EQ(b.Peer("eu", "http://eu/", true), std::nullopt);
    EXPECT_EQ(b.Peer("eu", "http://other/", true),
              Refusal("duplicate peer \"eu\""));
    for (size_t i = 1; i < kMaxBlockPeers; i++) {
        ASSERT_EQ(b.Peer("p" + std::to_string(i), "http://p/", true),
                  std::nullopt);
    }
    EXPECT_EQ(b.Peer("one-more", "http://p/", true),
              Refusal("too many peers (at most 16)"));
    EXPECT_EQ(b.PeerToken("0123456789abcdef"), std::nullopt);
    BlockServiceConf conf;
    ASSERT_EQ(b.Build(&conf), std::nullopt);
    EXPECT_EQ(conf.peers().size(), kMaxBlockPeers);
}

TEST(BlockConfBuilder, AtMostEightLongTermStorageUrls) {
    BlockConfBuilder b = Complete();
    EXPECT_EQ(b.LongTermStorage(""),
              Refusal("invalid long_term_storage URL \"\": must start with \"http://\" or \"https://\""));
    for (size_t i = 0; i < kMaxLongTermUrls; i++) {
        ASSERT_EQ(b.LongTermStorage("http://lts-" + std::to_string(i) + "/"),
                  std::nullopt);
    }
    EXPECT_EQ(b.LongTermStorage("http://lts-9/"),
              Refusal("too many long_term_storage URLs (at most 8)"));
    BlockServiceConf conf;
    ASSERT_EQ(b.Build(&conf), std::nullopt);
    EXPECT_EQ(conf.long_term().size(), kMaxLongTermUrls);
    EXPECT_EQ(conf.long_term().front().url, "http://lts-0/");
}

std::vector<BlockServer> Servers(std::initializer_list<BlockServer> list) {
    return list;
}

// long_term_storage http://archive_pool/ where archive_pool is an upstream
// block: the poller asks each of its servers in turn (backups last, those
// down never), the URL (and so the Host) staying the block's name.
TEST(BlockConfBuilder, ALongTermUrlNamingABlockIsOneEndpointPerServer) {
    BlockConfBuilder b = Complete();
    ASSERT_EQ(b.LongTermStorage("http://lts-a/"), std::nullopt);
    ASSERT_EQ(b.LongTermStorage("http://archive_pool/v1"), std::nullopt);
    ASSERT_EQ(b.LongTermStorage("https://lts-c:8443/"), std::nullopt);
    EXPECT_EQ(b.LongTermAuthority(1), "archive_pool");
    EXPECT_EQ(b.LongTermAuthority(2), "lts-c:8443");
    EXPECT_EQ(b.LongTermAuthority(3), "");
    ASSERT_EQ(b.LongTermThroughBlock(
                  1, Servers({{"10.0.0.1:8899", false, true, false},
                              {"10.0.0.2:8899", false, false, false},
                              {"10.0.0.3:8899", false, false, true}})),
              std::nullopt);
    BlockServiceConf conf;
    ASSERT_EQ(b.Build(&conf), std::nullopt);
    ASSERT_EQ(conf.long_term().size(), 4u);
    EXPECT_EQ(conf.long_term()[0].url, "http://lts-a/");
    EXPECT_EQ(conf.long_term()[1].url, "http://archive_pool/v1");
    EXPECT_EQ(conf.long_term()[1].connect_to, "::10.0.0.2:8899");
    EXPECT_EQ(conf.long_term()[2].connect_to, "::10.0.0.1:8899");   // backup
    EXPECT_EQ(conf.long_term()[3].url, "https://lts-c:8443/");
    EXPECT_EQ(LongTermName(conf.long_term()[1]),
              "http://archive_pool/v1 (server 10.0.0.2:8899)");
    EXPECT_EQ(LongTermName(conf.long_term()[0]), "http://lts-a/");
}

TEST(BlockConfBuilder, ABlockWithNoServerThePollerCanReachIsRefused) {
    BlockConfBuilder b = Complete();
    ASSERT_EQ(b.LongTermStorage("http://archive_pool/"), std::nullopt);
    EXPECT_EQ(b.LongTermThroughBlock(
                  0, Servers({{"10.0.0.1:1", false, false, true}})),
              Refusal("long_term_storage URL \"http://archive_pool/\": every "
                      "server of upstream block \"archive_pool\" is marked down"));
    EXPECT_EQ(b.LongTermThroughBlock(
                  0, Servers({{"unix:/run/x.sock", true, false, false}})),
              Refusal("long_term_storage URL \"http://archive_pool/\": server 1 "
                      "of upstream block \"archive_pool\" is a unix socket, "
                      "which the poller cannot reach"));
    std::vector<BlockServer> many(kMaxLongTermUrls + 1,
                                  BlockServer{"10.0.0.1:1", false, false, false});
    EXPECT_EQ(b.LongTermThroughBlock(0, many),
              Refusal("the servers of upstream block \"archive_pool\" make "
                      "more than 8 long_term_storage endpoints"));
}

TEST(BlockConfBuilder, AnHttpsUrlCannotNameABlock) {
    BlockConfBuilder b = Complete();
    ASSERT_EQ(b.LongTermStorage("https://archive_pool/"), std::nullopt);
    EXPECT_EQ(b.LongTermThroughBlock(
                  0, Servers({{"10.0.0.1:443", false, false, false}})),
              Refusal("long_term_storage URL \"https://archive_pool/\": an "
                      "https:// URL cannot name an upstream block (the poller "
                      "would check the certificate against \"archive_pool\"); "
                      "name the host"));
}

TEST(BlockConfBuilder, APeerNamingABlockIsPolledAtItsFirstServerUp) {
    BlockConfBuilder b = Complete();
    ASSERT_EQ(b.PeerToken("0123456789abcdef"), std::nullopt);
    ASSERT_EQ(b.Peer("eu", "http://eu/", true), std::nullopt);
    ASSERT_EQ(b.PeerThroughBlock(
                  0, Servers({{"10.0.0.7:80", false, false, true},
                              {"10.0.0.8:80", false, false, false}})),
              std::nullopt);
    BlockServiceConf conf;
    ASSERT_EQ(b.Build(&conf), std::nullopt);
    EXPECT_EQ(conf.peers()[0].connect_to, "::10.0.0.8:80");
    EXPECT_EQ(conf.peers()[0].url, "http://eu/");
}

TEST(BlockConfBuilder, PlansAreParsedAndAtMostThirtyTwo) {
    BlockConfBuilder b = Complete();
    EXPECT_EQ(b.PlanDefine("gold", {"tier=archive", "getblock_rate=fast"}),
              Refusal("invalid rate \"fast\" in \"getblock_rate\""));
    EXPECT_EQ(b.PlanDefine("gold", {"getblock_rate=5r/s"}),
              Refusal("plan \"gold\" needs \"tier=\""));
    size_t room = kMaxBlockPlans - DefaultBlockPlans().size();
    for (size_t i = 0; i < room; i++) {
        ASSERT_EQ(b.PlanDefine("p" + std::to_string(i), {"tier=free"}),
                  std::nullopt);
    }
    EXPECT_EQ(b.PlanDefine("one-more", {"tier=free"}),
              Refusal("too many plans (at most 32)"));
    // A plan of the same name replaces the old one: no room needed.
    EXPECT_EQ(b.PlanDefine("free", {"getblock_rate=1r/s"}), std::nullopt);
    EXPECT_EQ(b.PlanDefine("p0", {"tier=operator"}), std::nullopt);
    BlockServiceConf conf;
    ASSERT_EQ(b.Build(&conf), std::nullopt);
    ASSERT_EQ(conf.plans().size(), kMaxBlockPlans);
    EXPECT_DOUBLE_EQ(FindPlan(conf.plans(), "free")->getblock_rate, 1.0);
    EXPECT_EQ(FindPlan(conf.plans(), "p0")->tier, PlanTier::kOperator);
    EXPECT_EQ(FindPlan(conf.plans(), "one-more"), nullptr);
}

TEST(BlockConfBuilder, BuildSaysWhatIsMissing) {
    BlockConfBuilder b;
    EXPECT_EQ(b.Build(nullptr), Refusal("needs \"region\""));
    EXPECT_EQ(b.Region("us"), std::nullopt);
    EXPECT_EQ(b.Build(nullptr), Refusal("needs \"cache\""));
    EXPECT_EQ(b.Cache("/c"), std::nullopt);
    EXPECT_EQ(b.Build(nullptr), Refusal("needs \"state\""));
    EXPECT_EQ(b.State("/s"), std::nullopt);
    EXPECT_EQ(b.Build(nullptr), std::nullopt);
    EXPECT_EQ(b.Peer("eu", "http://eu/", true), std::nullopt);
    EXPECT_EQ(b.Build(nullptr),
              Refusal("has a \"peer\" but no \"peer_token\""));
    EXPECT_EQ(b.PeerToken("0123456789abcdef"), std::nullopt);
    EXPECT_EQ(b.Build(nullptr), std::nullopt);
}

TEST(BlockConfBuilder, CheckAlsoWantsTheRequestVariables) {
    BlockConfBuilder b;
    EXPECT_EQ(b.Check(true, true), Refusal("needs \"region\""));
    BlockConfBuilder done = Complete();
    EXPECT_EQ(done.Check(false, true), Refusal("needs \"api_key\""));
    EXPECT_EQ(done.Check(true, false), Refusal("needs \"plan\""));
    EXPECT_EQ(done.Check(true, true), std::nullopt);
}

TEST(BlockConfBuilder, AFailedBuildLeavesTheTargetAlone) {
    BlockConfBuilder done = Complete();
    BlockServiceConf conf;
    ASSERT_EQ(done.Build(&conf), std::nullopt);
    BlockConfBuilder unfinished;
    EXPECT_NE(unfinished.Build(&conf), std::nullopt);
    EXPECT_EQ(conf.region(), "us");
}

TEST(BlockServiceConf, QueuesOnlyForArchivePlansWithStorage) {
    BlockServiceConf none = BlockServiceConf();
    EXPECT_EQ(none.QueuedPlans(), 0u);   // no long_term_storage
    EXPECT_TRUE(none.peer_token().empty());

    BlockConfBuilder b = Complete();
    ASSERT_EQ(b.LongTermStorage("http://lts/"), std::nullopt);
    BlockServiceConf conf;
    ASSERT_EQ(b.Build(&conf), std::nullopt);
    size_t archive = 0;
    for (size_t p = 0; p < conf.plans().size(); p++) {
        EXPECT_EQ(conf.HasQueue(p), conf.plans()[p].HasLongTermStorage())
            << conf.plans()[p].name;
        archive += conf.plans()[p].HasLongTermStorage() ? 1 : 0;
    }
    EXPECT_EQ(conf.QueuedPlans(), archive);
    EXPECT_EQ(archive, 2u);   // blade_runner, nexus
    EXPECT_FALSE(conf.HasQueue(conf.plans().size()));
}

}  // namespace
}  // namespace solgate
