// The request path's part in what is cached: another region's answers
// always, the ledger's once the slot is finalized, nothing else; and the
// service starting only the captures the decider wants.
#include "blocks/block_decider.h"

#include <gtest/gtest.h>

#include "blocks/block_service.h"
#include "support/blocks_zone.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::Accept;
using testing::TestNetwork;

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kWall = 1'800'000'000'000;
const char kV[] = "getBlock/json/full/r1/v0";

class BlockDeciderTest : public ::testing::Test {
protected:
    BlockDeciderTest()
        : net(1),
          rig(net.network, "block_decider_test", Region()),
          service(rig.service()) {
        EXPECT_EQ(rig.error(), "");
        net.network.record(0).SuggestProcessed(5000);
        net.network.record(0).SuggestFinalized(4968);
    }

    static BlockConfBuilder Region() {
        BlockConfBuilder b;
        Accept(b.Region("us"));
        return b;
    }

    // StartCapture takes the call's flight: a call of its own each time.
    std::unique_ptr<BlockCapture> Start(BlockCall call, bool encoded) {
        return service->StartCapture(call, encoded, kNow);
    }

    BlockCall From(int source, uint64_t slot) {
        BlockCall call;
        call.slot = slot;
        call.variant = kV;
        call.source = source;
        return call;
    }

    TestNetwork net;
    testing::BlockServiceRig rig;
    BlockService* service;
};

TEST_F(BlockDeciderTest, RegionsAlwaysTheLedgerOnceFinalized) {
    const BlockDecider& d = service->decider();
    EXPECT_TRUE(d.WantsCapture(From(kSourceRegion, 4999), false, kNow));
    EXPECT_TRUE(d.WantsCapture(From(kSourceLedger, 4968), false, kNow));
    EXPECT_FALSE(d.WantsCapture(From(kSourceLedger, 4969), false, kNow));
    EXPECT_FALSE(d.WantsCapture(From(kSourceCache, 10), false, kNow));
    EXPECT_FALSE(d.WantsCapture(From(kSourceLongTerm, 10), false, kNow));
    EXPECT_FALSE(d.WantsCapture(From(-1, 10), false, kNow));
    // a body with a Content-Encoding is not the JSON the cache holds
    EXPECT_FALSE(d.WantsCapture(From(kSourceRegion, 4999), true, kNow));
    EXPECT_FALSE(d.WantsCapture(From(kSourceLedger, 4968), true, kNow));
}

TEST_F(BlockDeciderTest, StartCaptureOnlyForWhatIsWanted) {
    EXPECT_NE(Start(From(kSourceRegion, 4999), false),
              nullptr);
    EXPECT_NE(Start(From(kSourceLedger, 4000), false),
              nullptr);
    EXPECT_EQ(Start(From(kSourceLedger, 4990), false),
              nullptr);
    EXPECT_EQ(Start(From(kSourceCache, 4000), false),
              nullptr);
    EXPECT_EQ(Start(From(kSourceRegion, 4999), true),
              nullptr);
    BlockCall uncacheable = From(kSourceRegion, 4000);
    uncacheable.variant.clear();
    EXPECT_EQ(Start(std::move(uncacheable), false), nullptr);
    service->CloseStore();   // no cache in this process
    EXPECT_EQ(Start(From(kSourceRegion, 4999), false),
              nullptr);
}

TEST_F(BlockDeciderTest, ACaptureStartedIsCommittedThroughTheHandoff) {
    std::unique_ptr<BlockCapture> capture =
        Start(From(kSourceLedger, 4000), false);
    ASSERT_NE(capture, nullptr);
    std::string body = R"({"jsonrpc":"2.0","result":{"b":1},"id":5})";
    ASSERT_TRUE(capture->Write(body.data(), body.size()));
    int wakes = 0;
    service->SetCommitWaker([&wakes] { wakes++; });
    service->CommitLater(std::move(capture), kWall);
    EXPECT_EQ(wakes, 1);
    BlockRecord rec;
    EXPECT_FALSE(service->cache().Lookup(4000, kV, &rec));
    service->RunCommits();
    EXPECT_TRUE(service->cache().Lookup(4000, kV, &rec));
    service->SetCommitWaker(nullptr);
}

TEST_F(BlockDeciderTest, NothingIsDecidedBeforeTheZoneIsBound) {
    TestNetwork other(1);
    BlockConfBuilder b = Region();
    Accept(b.Cache("/unused/cache"));
    Accept(b.State("/unused/state"));
    BlockService unbound(testing::Built(b), other.network);
    EXPECT_EQ(other.network.blocks(), &unbound);
    std::string body =
        R"({"jsonrpc":"2.0","id":1,"method":"getBlock","params":[5]})";
    RpcRequest request = ParseRpcRequest(body.data(), body.size());
    BlockCall call;
    EXPECT_EQ(unbound.Decide(request, "k", "free", "", kNow, kWall, &call)
                  .kind,
              BlockDecision::kPass);
    std::string batch = "[" + body + "]";
    request = ParseRpcRequest(batch.data(), batch.size());
    EXPECT_EQ(unbound.Decide(request, "k", "free", "", kNow, kWall, &call)
                  .kind,
              BlockDecision::kPass);
    unbound.CountServed(call, kSourceLedger, kWall);   // ignored
}

}  // namespace
}  // namespace solgate
