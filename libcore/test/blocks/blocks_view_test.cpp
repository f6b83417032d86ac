// What the state page and the metrics read of a solgate_blocks: figures
// of what is there, and nothing of what is not open in this process.
#include "blocks/blocks_view.h"

#include <gtest/gtest.h>

#include "support/blocks_zone.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::Accept;
using testing::TestNetwork;

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kWall = 1'800'000'000'000;

BlockConfBuilder WithStorage() {
    BlockConfBuilder b;
    Accept(b.Region("us"));
    Accept(b.LongTermStorage("http://lts/"));
    return b;
}

TEST(BlocksView, FiguresOfAnOpenService) {
    TestNetwork net(1);
    net.network.record(0).first_available_plus1.store(4001);
    testing::BlockServiceRig rig(net.network, "blocks_view_test",
                                 WithStorage());
    ASSERT_EQ(rig.error(), "");
    BlockService& service = *rig.service();
    const BlocksView& view = service.view();
    EXPECT_TRUE(view.bound());
    EXPECT_EQ(&view.conf(), &service.conf());
    EXPECT_EQ(&view.counters(), &rig.shared()->counters);
    EXPECT_EQ(view.FirstAvailableBlock(), std::optional<uint64_t>(4000));
    ASSERT_TRUE(view.CacheTotals());
    EXPECT_EQ(view.CacheTotals()->entries, 0u);

    FindOrAddKey(&rig.shared()->keys, "a-key-of-some-length", 2, kWall);
    service.allowances().CountRetrieval({"a-key-of-some-length"}, 5, kWall);
    std::vector<KeyFigures> keys = view.Keys(kWall);
    ASSERT_EQ(keys.size(), 1u);
    EXPECT_EQ(keys[0].snapshot.key, "a-key-of-some-length");
    EXPECT_EQ(keys[0].snapshot.plan_index, 2u);
    EXPECT_EQ(keys[0].allowance_used, std::optional<uint64_t>(1));
    EXPECT_EQ(keys[0].repeat_count, std::optional<uint64_t>(0));

    EXPECT_EQ(view.Queue(0, kNow), std::nullopt);   // free: no queue
    ASSERT_TRUE(view.Queue(2, kNow));               // blade_runner
    EXPECT_EQ(view.Queue(2, kNow)->depth, 0u);
}

TEST(BlocksView, NothingOfWhatIsClosed) {
    TestNetwork net(1);
    testing::BlockServiceRig rig(net.network, "blocks_view_test",
                                 WithStorage());
    ASSERT_EQ(rig.error(), "");
    BlockService& service = *rig.service();
    FindOrAddKey(&rig.shared()->keys, "k", 0, kWall);
    service.CloseStore();
    const BlocksView& view = service.view();
    EXPECT_EQ(view.CacheTotals(), std::nullopt);
    EXPECT_EQ(view.FirstAvailableBlock(), std::nullopt);   // window unknown
    std::vector<KeyFigures> keys = view.Keys(kWall);
    ASSERT_EQ(keys.size(), 1u);
    EXPECT_EQ(keys[0].allowance_used, std::nullopt);
    EXPECT_EQ(keys[0].repeat_count, std::nullopt);
}

}  // namespace
}  // namespace solgate
