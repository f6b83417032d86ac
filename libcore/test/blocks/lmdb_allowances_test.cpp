// The key ledger as Cube Runner's allowances, through the AllowanceStore:
// closed, it counts nothing and says nothing was counted; open, a
// retrieval counts each waiting key once and a repeat for each that had
// already received the block.
#include "blocks/lmdb_allowances.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace solgate {
namespace {

constexpr int64_t kWall = 1'800'000'000'000;

TEST(LmdbAllowances, ClosedCountsNothing) {
    LmdbAllowances ledger;
    AllowanceStore& accounts = ledger;
    EXPECT_FALSE(accounts.open());
    accounts.NoteReceipt("k", 1, kWall);
    EXPECT_FALSE(accounts.Received("k", 1, kWall));
    EXPECT_EQ(accounts.AllowanceUsed("k", kWall), 0u);
    EXPECT_EQ(accounts.RepeatCount("k", kWall), 0u);
    EXPECT_EQ(accounts.CountRetrieval({"k"}, 1, kWall), 0u);
    accounts.Flush();
    accounts.PruneIfDue(kWall);
}

TEST(LmdbAllowances, ARetrievalCountsEveryKeyAndTheRepeats) {
    TempDir dir("lmdb_allowances_test");
    LmdbAllowances ledger;
    std::string error;
    ASSERT_TRUE(ledger.Open(dir.path(), true, &error)) << error;
    AllowanceStore& accounts = ledger;
    EXPECT_TRUE(accounts.open());
    accounts.NoteReceipt("had-it", 7, kWall);
    EXPECT_TRUE(accounts.Received("had-it", 7, kWall));   // before Flush
    EXPECT_FALSE(accounts.Received("new", 7, kWall));

    EXPECT_EQ(accounts.CountRetrieval({"had-it", "new"}, 7, kWall), 1u);
    EXPECT_EQ(accounts.AllowanceUsed("had-it", kWall), 1u);
    EXPECT_EQ(accounts.AllowanceUsed("new", kWall), 1u);
    EXPECT_EQ(accounts.RepeatCount("had-it", kWall), 1u);
    EXPECT_EQ(accounts.RepeatCount("new", kWall), 0u);
    EXPECT_EQ(accounts.CountRetrieval({}, 7, kWall), 0u);
    EXPECT_EQ(accounts.AllowanceUsed("new", kWall), 1u);
}

TEST(LmdbAllowances, ReceiptsOutliveAReopenOnceFlushed) {
    TempDir dir("lmdb_allowances_test");
    std::string error;
    {
        LmdbAllowances ledger;
        ASSERT_TRUE(ledger.Open(dir.path(), true, &error)) << error;
        AllowanceStore& accounts = ledger;
        accounts.NoteReceipt("k", 9, kWall);
        accounts.Flush();
        accounts.PruneIfDue(kWall);   // keeps the last 25 hours
        ledger.Close();
        EXPECT_FALSE(accounts.open());
    }
    LmdbAllowances again;
    ASSERT_TRUE(again.Open(dir.path(), false, &error)) << error;
    const AllowanceStore& reopened = again;
    EXPECT_TRUE(reopened.Received("k", 9, kWall + 1000));
}

TEST(LmdbAllowances, OpenFailsWithTheReason) {
    LmdbAllowances accounts;
    std::string error;
    EXPECT_FALSE(accounts.Open("/proc/no-such-dir", false, &error));
    EXPECT_FALSE(error.empty());
    EXPECT_FALSE(accounts.open());
}

}  // namespace
}  // namespace solgate
