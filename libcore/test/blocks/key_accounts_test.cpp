// The key ledger as Cube Runner uses it: closed, it counts nothing and
// says nothing was counted; open, a retrieval counts each waiting key once
// and a repeat for each that had already received the block.
#include "blocks/key_accounts.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace solgate {
namespace {

constexpr int64_t kWall = 1'800'000'000'000;

TEST(KeyAccounts, ClosedCountsNothing) {
    KeyAccounts accounts;
    EXPECT_FALSE(accounts.open());
    accounts.NoteReceipt("k", 1, kWall);
    EXPECT_FALSE(accounts.Received("k", 1, kWall));
    EXPECT_EQ(accounts.AllowanceUsed("k", kWall), 0u);
    EXPECT_EQ(accounts.RepeatCount("k", kWall), 0u);
    EXPECT_EQ(accounts.CountRetrieval({"k"}, 1, kWall), 0u);
    accounts.Flush();
    accounts.PruneIfDue(kWall);
}

TEST(KeyAccounts, ARetrievalCountsEveryKeyAndTheRepeats) {
    TempDir dir("key_accounts_test");
    KeyAccounts accounts;
    std::string error;
    ASSERT_TRUE(accounts.Open(dir.path(), true, &error)) << error;
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

TEST(KeyAccounts, ReceiptsOutliveAReopenOnceFlushed) {
    TempDir dir("key_accounts_test");
    std::string error;
    {
        KeyAccounts accounts;
        ASSERT_TRUE(accounts.Open(dir.path(), true, &error)) << error;
        accounts.NoteReceipt("k", 9, kWall);
        accounts.Flush();
        accounts.PruneIfDue(kWall);   // keeps the last 25 hours
        accounts.Close();
        EXPECT_FALSE(accounts.open());
    }
    KeyAccounts again;
    ASSERT_TRUE(again.Open(dir.path(), false, &error)) << error;
    EXPECT_TRUE(again.Received("k", 9, kWall + 1000));
}

TEST(KeyAccounts, OpenFailsWithTheReason) {
    KeyAccounts accounts;
    std::string error;
    EXPECT_FALSE(accounts.Open("/proc/no-such-dir", false, &error));
    EXPECT_FALSE(error.empty());
    EXPECT_FALSE(accounts.open());
}

}  // namespace
}  // namespace solgate
