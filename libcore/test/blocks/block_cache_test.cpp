// The region cache as the rest of Cube Runner sees it: what it holds, the
// CaptureSink that captures, copies and retrievals write into (counted in
// the zone, receipts to the allowances), room made by the retention
// rule, score batches.
#include "blocks/block_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "blocks/lmdb_allowances.h"
#include "support/blocks_zone.h"

namespace solgate {
namespace {

using testing::Accept;

constexpr int64_t kWall = 1'800'000'000'000;
constexpr int64_t kHour = 3600 * 1000;
const char kV[] = "getBlock/json/full/r1/v0";

std::string Answer(uint64_t slot) {
    return R"({"jsonrpc":"2.0","result":{"blockHeight":)" +
           std::to_string(slot) + R"(,"transactions":[]},"id":1})";
}

BlockConfBuilder InDir(const TempDir& dir, uint64_t max_size) {
    BlockConfBuilder b;
    Accept(b.Region("us"));
    Accept(b.Cache(dir.path() + "/cache"));
    Accept(b.State(dir.path() + "/state"));
    Accept(b.MaxSize(max_size));
    return b;
}

class BlockCacheTest : public ::testing::Test {
protected:
    explicit BlockCacheTest(uint64_t max_size = 0)
        : dir_("block_cache_test"),
          conf_(testing::Built(InDir(dir_, max_size))),
          memory_(conf_),
          zone_(conf_, accounts_),
          cache_(conf_, zone_) {
        std::string error;
        EXPECT_TRUE(zone_.Bind(memory_.memory(), true, &error)) << error;
        EXPECT_TRUE(accounts_.Open(conf_.state_dir(), true, &error)) << error;
        EXPECT_TRUE(cache_.OpenStore(true, &error)) << error;
    }

    // What a capture of `body` for (slot, variant) leaves.
    bool Store(uint64_t slot, const std::string& body,
               const std::string& key = "", int64_t wall = kWall,
               const std::string& variant = kV) {
        BlockCall call;
        call.slot = slot;
        call.variant = variant;
        call.api_key = key;
        std::string why;
        return StoreAnswer(cache_, call, body, wall, &why);
    }

    TempDir dir_;
    BlockServiceConf conf_;
    testing::BlocksZone memory_;
    LmdbAllowances accounts_;
    SharedBlocks zone_;
    BlockCache cache_;
};

TEST_F(BlockCacheTest, HoldsWhatWasCommittedAndCountsIt) {
    uint64_t before = cache_.Version();
    ASSERT_TRUE(Store(4900, Answer(4900), "k1"));
    BlockRecord rec;
    ASSERT_TRUE(cache_.Lookup(4900, kV, &rec));
    EXPECT_EQ(rec.bytes, Answer(4900).size());
    EXPECT_EQ(rec.stored_ms, kWall);
    EXPECT_EQ(std::filesystem::file_size(cache_.PathFor(4900, kV)),
              rec.bytes);
    EXPECT_FALSE(cache_.Lookup(4901, kV, &rec));
    EXPECT_EQ(zone_.counters().stored.load(), 1u);
    EXPECT_EQ(cache_.Totals()->entries, 1u);
    EXPECT_EQ(cache_.Totals()->bytes, rec.bytes);
    EXPECT_NE(cache_.Version(), before);
    // The key that received it has its receipt.
    EXPECT_TRUE(accounts_.Received("k1", 4900, kWall));
    std::vector<BlockStore::Entry> entries;
    ASSERT_TRUE(cache_.Entries(&entries));
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].slot, 4900u);
    EXPECT_EQ(entries[0].variant, kV);
}

TEST_F(BlockCacheTest, AFailedCommitIsCountedAndLeavesNoFile) {
    EXPECT_FALSE(Store(1, Answer(1), "k1", kWall, "bad variant"));
    EXPECT_EQ(zone_.counters().store_failures.load(), 1u);
    EXPECT_EQ(zone_.counters().stored.load(), 0u);
    EXPECT_FALSE(accounts_.Received("k1", 1, kWall));
    EXPECT_EQ(cache_.Totals()->entries, 0u);
}

TEST_F(BlockCacheTest, ACommitAfterTheCacheClosedRemovesItsFile) {
    std::string temp = cache_.NewTempPath();
    std::ofstream(temp) << Answer(1);
    cache_.Close();
    BlockRecord rec;
    rec.bytes = Answer(1).size();
    std::string error;
    EXPECT_FALSE(cache_.Commit(temp, 1, kV, rec, &error));
    EXPECT_EQ(error, "the cache is closed");
    EXPECT_FALSE(std::filesystem::exists(temp));
    EXPECT_EQ(zone_.counters().store_failures.load(), 1u);
}

TEST_F(BlockCacheTest, ClosedItHoldsNothingAndTakesNoCapture) {
    ASSERT_TRUE(Store(4900, Answer(4900)));
    cache_.Close();
    EXPECT_FALSE(cache_.Open());
    // what opening found is still there to log (the service closes the
    // cache at once when its key ledger fails)
    EXPECT_TRUE(cache_.opening().reconciled);
    BlockRecord rec;
    EXPECT_FALSE(cache_.Lookup(4900, kV, &rec));
    EXPECT_EQ(cache_.PathFor(4900, kV), "");
    EXPECT_EQ(cache_.Totals(), std::nullopt);
    std::vector<BlockStore::Entry> entries;
    EXPECT_FALSE(cache_.Entries(&entries));
    EXPECT_TRUE(cache_.MakeRoom(1u << 30, kWall));
    cache_.ApplyScores({{4900, kV, kWall}});   // nothing to write to
    BlockCall call;
    call.slot = 4901;
    call.variant = kV;
    EXPECT_EQ(BlockCapture::Start(cache_, call), nullptr);
    // Opened again, it holds what it held.
    std::string error;
    ASSERT_TRUE(cache_.OpenStore(false, &error)) << error;
    EXPECT_TRUE(cache_.Lookup(4900, kV, &rec));
}

TEST_F(BlockCacheTest, ScoresAreWrittenInBatches) {
    ASSERT_TRUE(Store(4900, Answer(4900)));
    cache_.ApplyScores({{4900, kV, kWall}, {4900, kV, kWall},
                        {4999, kV, kWall}});
    BlockRecord rec;
    ASSERT_TRUE(cache_.Lookup(4900, kV, &rec));
    EXPECT_DOUBLE_EQ(rec.score, 3.0);   // the capture's 1, and 2 requests
    EXPECT_FALSE(cache_.Lookup(4999, kV, &rec));
}

TEST_F(BlockCacheTest, NoMaxSizeAlwaysHasRoom) {
    ASSERT_TRUE(Store(1, Answer(1)));
    EXPECT_TRUE(cache_.MakeRoom(UINT64_MAX / 2, kWall));
    EXPECT_EQ(cache_.Totals()->entries, 1u);
}

class SmallBlockCacheTest : public BlockCacheTest {
protected:
    SmallBlockCacheTest() : BlockCacheTest(3 * Answer(4900).size()) {}
};

TEST_F(SmallBlockCacheTest, RoomIsMadeByTheRetentionRule) {
    ASSERT_TRUE(Store(4900, Answer(4900)));
    ASSERT_TRUE(Store(4901, Answer(4901)));
    ASSERT_TRUE(Store(4902, Answer(4902)));
    // All younger than 15 minutes: nothing may go for a fourth.
    EXPECT_FALSE(cache_.MakeRoom(Answer(4903).size(), kWall));
    EXPECT_FALSE(Store(4903, Answer(4903), "", kWall));
    EXPECT_EQ(cache_.Totals()->entries, 3u);
    // An hour later the oldest slots go first, down to the watermark.
    EXPECT_TRUE(Store(4903, Answer(4903), "", kWall + kHour));
    BlockRecord rec;
    EXPECT_FALSE(cache_.Lookup(4900, kV, &rec));
    EXPECT_FALSE(cache_.Lookup(4901, kV, &rec));
    EXPECT_TRUE(cache_.Lookup(4902, kV, &rec));
    EXPECT_TRUE(cache_.Lookup(4903, kV, &rec));
    EXPECT_LE(cache_.Totals()->bytes, conf_.max_bytes());
    EXPECT_EQ(cache_.Totals()->evictions, 2u);
}

}  // namespace
}  // namespace solgate
