// Cache hits noted on the request path and folded into one score update
// per entry for the upkeep's index write.
#include "blocks/request_scores.h"

#include <gtest/gtest.h>

#include <map>

namespace solgate {
namespace {

constexpr int64_t kHour = 3600 * 1000;
constexpr int64_t kWall = 1'800'000'000'000;
const char kV[] = "getBlock/json/full/r1/v0";

TEST(RequestScores, TakeHandsOverWhatWasNotedOnce) {
    RequestScores scores;
    scores.Note(1, kV, kWall);
    scores.Note(2, kV, kWall + 1);
    std::vector<ScoredRequest> taken = scores.Take();
    ASSERT_EQ(taken.size(), 2u);
    EXPECT_EQ(taken[0].slot, 1u);
    EXPECT_EQ(taken[1].slot, 2u);
    EXPECT_EQ(taken[1].variant, kV);
    EXPECT_EQ(taken[1].wall_ms, kWall + 1);
    EXPECT_TRUE(scores.Take().empty());
}

TEST(RequestScores, BoundedBetweenBatches) {
    RequestScores scores;
    for (size_t i = 0; i < kMaxPendingRequests + 10; i++) {
        scores.Note(i, kV, kWall);
    }
    EXPECT_EQ(scores.Take().size(), kMaxPendingRequests);
    scores.Note(1, kV, kWall);
    EXPECT_EQ(scores.Take().size(), 1u);
}

TEST(FoldScores, OneUpdatePerEntryAndOneLookup) {
    std::map<uint64_t, BlockRecord> index;
    index[10].score = 1;
    index[10].score_ms = kWall;
    index[11].score = 0.5;
    index[11].score_ms = kWall;
    std::map<uint64_t, int> lookups;
    RecordLookup lookup = [&](uint64_t slot, const std::string& variant,
                              BlockRecord* rec) {
        EXPECT_EQ(variant, kV);
        lookups[slot]++;
        auto it = index.find(slot);
        if (it == index.end()) {
            return false;
        }
        *rec = it->second;
        return true;
    };
    RetentionPolicy policy;
    std::vector<ScoredRequest> requests = {
        {11, kV, kWall}, {10, kV, kWall}, {10, kV, kWall},
        {12, kV, kWall},   // no longer cached
        {10, kV, kWall - kHour},   // late: scored, time kept
    };
    std::vector<BlockStore::ScoreUpdate> updates =
        FoldScores(requests, lookup, policy);
    ASSERT_EQ(updates.size(), 2u);
    EXPECT_EQ(updates[0].slot, 10u);   // in slot order
    EXPECT_DOUBLE_EQ(updates[0].score, 4.0);
    EXPECT_EQ(updates[0].score_ms, kWall);
    EXPECT_EQ(updates[1].slot, 11u);
    EXPECT_DOUBLE_EQ(updates[1].score, 1.5);
    EXPECT_EQ(lookups[10], 1);
    EXPECT_EQ(lookups[11], 1);
    EXPECT_EQ(lookups[12], 1);
}

TEST(FoldScores, ScoresDecayBetweenRequests) {
    RecordLookup lookup = [](uint64_t, const std::string&, BlockRecord* rec) {
        rec->score = 2;
        rec->score_ms = kWall;
        return true;
    };
    RetentionPolicy policy;   // halves every 3 h
    std::vector<BlockStore::ScoreUpdate> updates =
        FoldScores({{1, kV, kWall + 3 * kHour}}, lookup, policy);
    ASSERT_EQ(updates.size(), 1u);
    EXPECT_DOUBLE_EQ(updates[0].score, 2.0);   // 2 halved, plus 1
    EXPECT_EQ(updates[0].score_ms, kWall + 3 * kHour);
    EXPECT_TRUE(FoldScores({}, lookup, policy).empty());
}

}  // namespace
}  // namespace solgate
