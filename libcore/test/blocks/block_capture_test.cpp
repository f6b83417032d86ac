// BlockCapture: a getBlock answer copied into the region cache as it
// streams, through its own API (Start, Write, Finish, StoreAnswer), on a
// bound and opened BlockService.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "blocks/block_capture.h"
#include "support/blocks_zone.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::BlockServiceRig;
using testing::TestNetwork;

constexpr int64_t kWall = 1'800'000'000'000;
constexpr const char* kVariant = "getBlock/json/full/r1/v0";

std::string Block(uint64_t slot, const std::string& id) {
    return R"({"jsonrpc":"2.0","result":{"blockHeight":)" +
           std::to_string(slot - 10) + R"(,"transactions":[]},"id":)" + id +
           "}\n";
}

std::string ErrorAnswer(int code, const std::string& id) {
    return R"({"jsonrpc":"2.0","error":{"code":)" + std::to_string(code) +
           R"(,"message":"Slot 7 was skipped"},"id":)" + id + "}";
}

BlockConfBuilder Conf(uint64_t max_bytes = 0) {
    BlockConfBuilder conf;
    testing::Accept(conf.Region("us"));
    testing::Accept(conf.MaxSize(max_bytes));
    return conf;
}

BlockCall CallFor(uint64_t slot, const std::string& api_key = "") {
    BlockCall call;
    call.slot = slot;
    call.variant = kVariant;
    call.id_raw = "1";
    call.api_key = api_key;
    call.wall_ms = kWall;
    return call;
}

std::string ReadAll(int fd) {
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof buffer)) > 0) {
        out.append(buffer, static_cast<size_t>(n));
    }
    return out;
}

class BlockCaptureTest : public ::testing::Test {
protected:
    explicit BlockCaptureTest(uint64_t max_bytes = 0)
        : net_(1), rig_(net_.network, "solgate-capture", Conf(max_bytes)) {
        EXPECT_EQ(rig_.error(), "");
        std::string temp = service().cache().NewTempPath();
        temp_dir_ = temp.substr(0, temp.rfind('/'));
    }

    BlockService& service() { return *rig_.service(); }
    BlockStore& store() { return *service().cache().StoreForTesting(); }

    // Files being written in the cache's tmp/.
    size_t TempFiles() const {
        size_t count = 0;
        if (DIR* dir = opendir(temp_dir_.c_str())) {
            while (const dirent* entry = readdir(dir)) {
                std::string name = entry->d_name;
                count += name != "." && name != "..";
            }
            closedir(dir);
        }
        return count;
    }

    // What the cache serves for `slot`, "" when nothing.
    std::string Served(uint64_t slot, BlockRecord* rec = nullptr) {
        BlockRecord found;
        int fd = store().OpenVerified(slot, kVariant, &found);
        if (fd < 0) {
            return "";
        }
        std::string body = ReadAll(fd);
        close(fd);
        if (rec != nullptr) {
            *rec = found;
        }
        return body;
    }

    // Start, Write in chunks of `chunk` bytes, Finish: Finish's answer.
    bool Capture(const BlockCall& call, const std::string& body,
                 size_t chunk, std::string* error) {
        auto capture = BlockCapture::Start(service().cache(), call);
        if (capture == nullptr) {
            *error = "no capture";
            return false;
        }
        for (size_t at = 0; at < body.size(); at += chunk) {
            if (!capture->Write(body.data() + at,
                                std::min(chunk, body.size() - at))) {
                break;
            }
        }
        return capture->Finish(kWall, error);
    }

    TestNetwork net_;
    BlockServiceRig rig_;
    std::string temp_dir_;
};

TEST_F(BlockCaptureTest, AStreamedBlockIsStoredAsServed) {
    std::string body = Block(5000, "\"req-9\"");
    std::string error;
    ASSERT_TRUE(Capture(CallFor(5000), body, 7, &error)) << error;
    BlockRecord rec;
    EXPECT_EQ(Served(5000, &rec), body);
    EXPECT_EQ(rec.bytes, body.size());
    EXPECT_EQ(body.substr(rec.id_offset, rec.id_length), "\"req-9\"");
    EXPECT_EQ(rec.kind, BlockRecord::kBlock);
    EXPECT_EQ(rec.stored_ms, kWall);
    EXPECT_EQ(rec.score, 1.0);
    EXPECT_EQ(rec.score_ms, kWall);
    EXPECT_EQ(rig_.shared()->counters.stored.load(), 1u);
    EXPECT_EQ(rig_.shared()->counters.store_failures.load(), 0u);
    EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(BlockCaptureTest, AByteAtATimeIsTheSame) {
    std::string body = Block(77, "12345");
    std::string error;
    ASSERT_TRUE(Capture(CallFor(77), body, 1, &error)) << error;
    BlockRecord rec;
    EXPECT_EQ(Served(77, &rec), body);
    EXPECT_EQ(body.substr(rec.id_offset, rec.id_length), "12345");
}

TEST_F(BlockCaptureTest, SkippedSlotsAreStoredAsSuch) {
    std::string error;
    ASSERT_TRUE(Capture(CallFor(7), ErrorAnswer(-32007, "1"), 64, &error))
        << error;
    ASSERT_TRUE(Capture(CallFor(8), ErrorAnswer(-32009, "null"), 64, &error))
        << error;
    BlockRecord rec;
    EXPECT_EQ(Served(7, &rec), ErrorAnswer(-32007, "1"));
    EXPECT_EQ(rec.kind, BlockRecord::kSkippedSlot);
    EXPECT_EQ(Served(8, &rec), ErrorAnswer(-32009, "null"));
    EXPECT_EQ(rec.kind, BlockRecord::kSkippedSlot);
    EXPECT_EQ(rig_.shared()->counters.stored.load(), 2u);
}

TEST_F(BlockCaptureTest, OtherErrorsAreNotCached) {
    for (int code : {-32004, -32005, -32602, 0}) {
        std::string error;
        EXPECT_FALSE(Capture(CallFor(9), ErrorAnswer(code, "1"), 64, &error))
            << code;
        EXPECT_EQ(error, "not a cacheable getBlock answer");
    }
    EXPECT_EQ(Served(9), "");
    EXPECT_EQ(TempFiles(), 0u);
    EXPECT_EQ(rig_.shared()->counters.stored.load(), 0u);
}

TEST_F(BlockCaptureTest, AMalformedBodyIsAbandonedAtOnce) {
    auto capture = BlockCapture::Start(service().cache(), CallFor(10));
    ASSERT_NE(capture, nullptr);
    EXPECT_EQ(TempFiles(), 1u);
    std::string bad = R"({"jsonrpc":"2.0","result":{]})";
    EXPECT_FALSE(capture->Write(bad.data(), bad.size()));
    EXPECT_EQ(TempFiles(), 0u);
    // Everything after is refused without looking.
    EXPECT_FALSE(capture->Write("{", 1));
    std::string error;
    EXPECT_FALSE(capture->Finish(kWall, &error));
    EXPECT_EQ(error, "capture abandoned");
    EXPECT_EQ(Served(10), "");
}

TEST_F(BlockCaptureTest, ACutBodyLeavesNothing) {
    std::string body = Block(11, "1");
    std::string error;
    EXPECT_FALSE(Capture(CallFor(11), body.substr(0, body.size() / 2), 16,
                         &error));
    EXPECT_EQ(error, "not a cacheable getBlock answer");
    EXPECT_EQ(Served(11), "");
    EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(BlockCaptureTest, TrailingBytesAfterTheAnswerAreMalformed) {
    std::string error;
    EXPECT_FALSE(Capture(CallFor(12), Block(12, "1") + "{}", 64, &error));
    EXPECT_EQ(Served(12), "");
    EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(BlockCaptureTest, AnUnfinishedCaptureLeavesNothing) {
    {
        auto capture = BlockCapture::Start(service().cache(), CallFor(13));
        ASSERT_NE(capture, nullptr);
        std::string body = Block(13, "1");
        EXPECT_TRUE(capture->Write(body.data(), body.size()));
        EXPECT_EQ(TempFiles(), 1u);
    }
    EXPECT_EQ(TempFiles(), 0u);
    EXPECT_EQ(Served(13), "");
}

TEST_F(BlockCaptureTest, ANewAnswerReplacesTheOldOne) {
    std::string error;
    ASSERT_TRUE(Capture(CallFor(14), Block(14, "1"), 64, &error)) << error;
    std::string longer = Block(14, "\"a-much-longer-id\"");
    ASSERT_TRUE(Capture(CallFor(14), longer, 64, &error)) << error;
    EXPECT_EQ(Served(14), longer);
    EXPECT_EQ(store().GetTotals().entries, 1u);
}

TEST_F(BlockCaptureTest, TheClientGetsAReceipt) {
    std::string error;
    ASSERT_TRUE(Capture(CallFor(15, "key-a"), Block(15, "1"), 64, &error))
        << error;
    ASSERT_TRUE(Capture(CallFor(16), Block(16, "1"), 64, &error)) << error;
    const AllowanceStore& ledger = service().allowances();
    EXPECT_TRUE(ledger.Received("key-a", 15, kWall));
    EXPECT_FALSE(ledger.Received("key-a", 16, kWall));
    EXPECT_FALSE(ledger.Received("", 16, kWall));
}

TEST_F(BlockCaptureTest, NoReceiptForWhatWasNotStored) {
    std::string error;
    EXPECT_FALSE(Capture(CallFor(17, "key-a"), ErrorAnswer(-32004, "1"), 64,
                         &error));
    EXPECT_FALSE(service().allowances().Received("key-a", 17, kWall));
}

TEST_F(BlockCaptureTest, AFailedCommitIsCounted) {
    BlockCall call = CallFor(18);
    call.variant = "not a variant";   // spaces: the store refuses it
    std::string error;
    EXPECT_FALSE(Capture(call, Block(18, "1"), 64, &error));
    EXPECT_EQ(error, "block cache: invalid variant");
    EXPECT_EQ(rig_.shared()->counters.store_failures.load(), 1u);
    EXPECT_EQ(rig_.shared()->counters.stored.load(), 0u);
    EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(BlockCaptureTest, StartNeedsAVariantAStoreAndATempFile) {
    BlockCall uncacheable = CallFor(19);
    uncacheable.variant.clear();
    EXPECT_EQ(BlockCapture::Start(service().cache(), uncacheable), nullptr);

    ASSERT_EQ(rmdir(temp_dir_.c_str()), 0);
    EXPECT_EQ(BlockCapture::Start(service().cache(), CallFor(19)), nullptr);

    service().CloseStore();
    EXPECT_EQ(BlockCapture::Start(service().cache(), CallFor(19)), nullptr);
}

class FullBlockCaptureTest : public BlockCaptureTest {
protected:
    FullBlockCaptureTest() : BlockCaptureTest(32) {}
};

TEST_F(FullBlockCaptureTest, NoRoomMeansNotStored) {
    std::string error;
    EXPECT_FALSE(Capture(CallFor(20), Block(20, "1"), 64, &error));
    EXPECT_EQ(error, "cache full of blocks that must stay");
    EXPECT_EQ(Served(20), "");
    EXPECT_EQ(TempFiles(), 0u);
    EXPECT_EQ(rig_.shared()->counters.stored.load(), 0u);
}

TEST(CacheableEnvelope, AResultOrASkippedSlot) {
    EnvelopeScanner::Result result;
    EXPECT_FALSE(CacheableEnvelope(result));
    result.has_result = true;
    EXPECT_TRUE(CacheableEnvelope(result));

    EnvelopeScanner::Result error;
    error.has_error = true;
    for (int64_t code : {-32007, -32009}) {
        error.error_code = code;
        EXPECT_TRUE(CacheableEnvelope(error)) << code;
    }
    for (int64_t code : {0, -32004, -32005, -32008, -32010, 32007}) {
        error.error_code = code;
        EXPECT_FALSE(CacheableEnvelope(error)) << code;
    }
    // The code alone, without an error object, is nothing.
    EnvelopeScanner::Result code_only;
    code_only.error_code = -32007;
    EXPECT_FALSE(CacheableEnvelope(code_only));
}

TEST_F(BlockCaptureTest, StoreAnswerStoresAWholeBody) {
    std::string body = Block(21, "3");
    std::string why;
    EXPECT_TRUE(StoreAnswer(service().cache(), CallFor(21), body, kWall, &why))
        << why;
    EXPECT_EQ(Served(21), body);
    EXPECT_EQ(TempFiles(), 0u);
}

TEST_F(BlockCaptureTest, StoreAnswerSaysWhyNot) {
    std::string why;
    BlockCall uncacheable = CallFor(22);
    uncacheable.variant.clear();
    EXPECT_FALSE(
        StoreAnswer(service().cache(), uncacheable, Block(22, "1"), kWall, &why));
    EXPECT_EQ(why, "cannot start a capture");

    EXPECT_FALSE(StoreAnswer(service().cache(), CallFor(22), "<html>502</html>",
                             kWall, &why));
    EXPECT_EQ(why, "not a getBlock answer");

    EXPECT_FALSE(StoreAnswer(service().cache(), CallFor(22),
                             ErrorAnswer(-32004, "1"), kWall, &why));
    EXPECT_EQ(why, "not a cacheable getBlock answer");
    EXPECT_EQ(Served(22), "");
    EXPECT_EQ(TempFiles(), 0u);
}

}  // namespace
}  // namespace solgate
