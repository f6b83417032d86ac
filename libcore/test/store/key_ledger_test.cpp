#include <gtest/gtest.h>
#include <lmdb.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "store/key_ledger.h"
#include "support/scribble.h"
#include "support/temp_dir.h"
#include "support/workloads.h"

namespace solgate {
namespace {

constexpr int64_t kHour = 3600000;
constexpr int64_t kDay = 24 * kHour;
// 2026-12-01T00:00:00.000Z
constexpr int64_t kDec1 = 1796083200000;
// 2026-12-01T10:00:00.000Z, on an hour boundary.
constexpr int64_t kNow = kDec1 + 10 * kHour;

// UTC wall ms of a civil time, through the C library.
int64_t Utc(int year, int month, int day, int hour = 0, int minute = 0,
            int second = 0, int ms = 0) {
    struct tm tm = {};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

// A row of the receipts sub-database, read behind the ledger's back.
struct RawRow {
    std::string key;
    std::string value;
};

// The rows of sub-database `db` of a closed ledger.
std::vector<RawRow> RawRows(const std::string& state_dir, const char* db) {
    std::vector<RawRow> rows;
    MDB_env* env = nullptr;
    MDB_txn* txn = nullptr;
    MDB_dbi dbi = 0;
    MDB_cursor* cursor = nullptr;
    std::string dir = state_dir + "/keys";
    if (mdb_env_create(&env) != 0) {
        return rows;
    }
    mdb_env_set_maxdbs(env, 8);
    if (mdb_env_open(env, dir.c_str(), MDB_RDONLY, 0600) == 0 &&
        mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) == 0 &&
        mdb_dbi_open(txn, db, 0, &dbi) == 0 &&
        mdb_cursor_open(txn, dbi, &cursor) == 0) {
        MDB_val key;
        MDB_val value;
        int rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST);
        while (rc == 0) {
            rows.push_back({std::string(static_cast<char*>(key.mv_data),
                                        key.mv_size),
                            std::string(static_cast<char*>(value.mv_data),
                                        value.mv_size)});
            rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT);
        }
        mdb_cursor_close(cursor);
    }
    if (txn != nullptr) {
        mdb_txn_abort(txn);
    }
    mdb_env_close(env);
    return rows;
}

// The slot a receipt row's key starts its chunk with.
uint64_t FirstSlotOf(const RawRow& row) {
    uint64_t slot = 0;
    for (size_t i = row.key.size() - 8; i < row.key.size(); i++) {
        slot = (slot << 8) | static_cast<unsigned char>(row.key[i]);
    }
    return slot;
}

// The slots of a receipt row: its first slot, then LEB128 gaps.
std::vector<uint64_t> SlotsOf(const RawRow& row) {
    std::vector<uint64_t> slots{FirstSlotOf(row)};
    uint64_t gap = 0;
    int shift = 0;
    for (char c : row.value) {
        auto byte = static_cast<unsigned char>(c);
        gap |= static_cast<uint64_t>(byte & 0x7F) << shift;
        shift += 7;
        if ((byte & 0x80) == 0) {
            slots.push_back(slots.back() + gap);
            gap = 0;
            shift = 0;
        }
    }
    return slots;
}

class KeyLedgerTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(dir_.path().empty());
        options_.state_dir = dir_.path() + "/state";
    }

    std::unique_ptr<KeyLedger> OpenLedger() {
        std::string error;
        auto ledger = KeyLedger::Open(options_, &error);
        EXPECT_NE(ledger, nullptr) << error;
        return ledger;
    }

    TempDir dir_{"key_ledger_test"};
    KeyLedgerOptions options_;
};

// --- months ----------------------------------------------------------------

TEST(KeyLedgerMonthTest, BoundariesAreUtcMidnightOnTheFirst) {
    EXPECT_EQ(Utc(2026, 12, 1), kDec1);
    EXPECT_EQ(KeyLedger::MonthOf(kDec1 - 1), "2026-11");
    EXPECT_EQ(KeyLedger::MonthOf(Utc(2026, 11, 30, 23, 59, 59, 999)),
              "2026-11");
    EXPECT_EQ(KeyLedger::MonthOf(kDec1), "2026-12");
    // December to January changes the year.
    EXPECT_EQ(KeyLedger::MonthOf(Utc(2027, 1, 1) - 1), "2026-12");
    EXPECT_EQ(KeyLedger::MonthOf(Utc(2027, 1, 1)), "2027-01");
    // A leap day.
    EXPECT_EQ(KeyLedger::MonthOf(Utc(2028, 2, 29)), "2028-02");
    EXPECT_EQ(KeyLedger::MonthOf(Utc(2028, 2, 29, 23, 59, 59, 999)),
              "2028-02");
    EXPECT_EQ(KeyLedger::MonthOf(Utc(2028, 3, 1)), "2028-03");
    EXPECT_EQ(Utc(2028, 3, 1) - Utc(2028, 2, 28), 2 * kDay);
    EXPECT_EQ(KeyLedger::MonthOf(0), "1970-01");
    EXPECT_EQ(KeyLedger::MonthOf(-1), "1969-12");
}

TEST(KeyLedgerMonthTest, AgreesWithGmtimeEveryDay) {
    for (int64_t day = -400; day < 60000; day++) {
        for (int64_t ms : {day * kDay, day * kDay + kDay - 1}) {
            time_t seconds = static_cast<time_t>(ms / 1000 -
                                                 (ms % 1000 < 0 ? 1 : 0));
            struct tm tm = {};
            ASSERT_NE(gmtime_r(&seconds, &tm), nullptr);
            char expected[32];
            std::snprintf(expected, sizeof expected, "%04d-%02d",
                          tm.tm_year + 1900, tm.tm_mon + 1);
            ASSERT_EQ(KeyLedger::MonthOf(ms), expected) << ms;
        }
    }
}

// --- the monthly allowance -------------------------------------------------

TEST_F(KeyLedgerTest, AllowanceResetsAtUtcMonthStart) {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    std::string error;
    ASSERT_TRUE(ledger->CountRetrieval({"k"}, kDec1 - 1, &error)) << error;
    ASSERT_TRUE(ledger->CountRetrieval({"k"}, kDec1 - 1, &error));
    ASSERT_TRUE(ledger->CountRetrieval({"k"}, kDec1, &error));
    EXPECT_EQ(ledger->AllowanceUsed("k", kDec1 - 1), 2u);
    EXPECT_EQ(ledger->AllowanceUsed("k", kDec1), 1u);
    EXPECT_EQ(ledger->AllowanceUsed("k", kDec1 + 20 * kDay), 1u);
    EXPECT_EQ(ledger->AllowanceUsed("k", Utc(2027, 1, 1)), 0u);
    EXPECT_EQ(ledger->AllowanceUsed("other", kDec1), 0u);
}

TEST_F(KeyLedgerTest, OneRetrievalCountsOnceForEachWaitingKey) {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    std::string error;
    ASSERT_TRUE(ledger->CountRetrieval({"a", "b", "c"}, kNow, &error));
    ASSERT_TRUE(ledger->CountRetrieval({"b", "b", "c", "b"}, kNow, &error));
    EXPECT_EQ(ledger->AllowanceUsed("a", kNow), 1u);
    EXPECT_EQ(ledger->AllowanceUsed("b", kNow), 2u);
    EXPECT_EQ(ledger->AllowanceUsed("c", kNow), 2u);
    ASSERT_TRUE(ledger->CountRetrieval({}, kNow, &error));
}

TEST_F(KeyLedgerTest, KeysOfAnyBytesStayApart) {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    std::string error;
    std::string nul("a\0", 2);
    std::string long_key(kMaxLedgerKeyBytes, 'x');
    ASSERT_TRUE(ledger->CountRetrieval({"a", nul, "", long_key}, kNow,
                                       &error))
        << error;
    ASSERT_TRUE(ledger->CountRetrieval({nul}, kNow, &error));
    EXPECT_EQ(ledger->AllowanceUsed("a", kNow), 1u);
    EXPECT_EQ(ledger->AllowanceUsed(nul, kNow), 2u);
    EXPECT_EQ(ledger->AllowanceUsed("", kNow), 1u);
    EXPECT_EQ(ledger->AllowanceUsed(long_key, kNow), 1u);

    // Too long: skipped, reported, the others still counted.
    std::string too_long(kMaxLedgerKeyBytes + 1, 'x');
    EXPECT_FALSE(ledger->CountRetrieval({"a", too_long}, kNow, &error));
    EXPECT_NE(error.find("longer than"), std::string::npos) << error;
    EXPECT_EQ(ledger->AllowanceUsed("a", kNow), 2u);
    EXPECT_EQ(ledger->AllowanceUsed(too_long, kNow), 0u);
    EXPECT_FALSE(ledger->AddRepeat(too_long, kNow, &error));

    // Receipts of a key and of a key that extends it.
    ledger->NoteReceipt("a", 7, kNow);
    ledger->NoteReceipt(nul, 8, kNow);
    ASSERT_TRUE(ledger->Flush(&error)) << error;
    EXPECT_TRUE(ledger->Received("a", 7, kNow));
    EXPECT_FALSE(ledger->Received("a", 8, kNow));
    EXPECT_TRUE(ledger->Received(nul, 8, kNow));
    EXPECT_FALSE(ledger->Received(nul, 7, kNow));
    EXPECT_FALSE(ledger->Received("", 7, kNow));
}

TEST_F(KeyLedgerTest, AllowanceSurvivesReopen) {
    std::string error;
    {
        auto ledger = OpenLedger();
        ASSERT_NE(ledger, nullptr);
        for (int i = 0; i < 3; i++) {
            ASSERT_TRUE(ledger->CountRetrieval({"k", "j"}, kNow, &error));
        }
        ASSERT_TRUE(ledger->AddRepeat("k", kNow, &error));
        ledger->NoteReceipt("k", 42, kNow);   // flushed by the destructor
    }
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    EXPECT_EQ(ledger->AllowanceUsed("k", kNow), 3u);
    EXPECT_EQ(ledger->AllowanceUsed("j", kNow), 3u);
    EXPECT_EQ(ledger->RepeatCount("k", kNow), 1u);
    EXPECT_TRUE(ledger->Received("k", 42, kNow));
}

TEST_F(KeyLedgerTest, KillNineLosesNoCommittedCount) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        std::string error;
        auto ledger = KeyLedger::Open(options_, &error);
        if (ledger == nullptr) {
            _exit(2);
        }
        for (int i = 0; i < 50; i++) {
            if (!ledger->CountRetrieval({"k"}, kNow, &error)) {
                _exit(3);
            }
        }
        if (write(fds[1], "done", 4) != 4) {
            _exit(4);
        }
        raise(SIGKILL);
        _exit(5);
    }
    close(fds[1]);
    char buffer[8] = {};
    ssize_t n = read(fds[0], buffer, sizeof buffer);
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_EQ(n, 4) << "child exit status " << status;
    EXPECT_EQ(std::string(buffer, 4), "done");
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGKILL);

    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    EXPECT_EQ(ledger->AllowanceUsed("k", kNow), 50u);
    std::string error;
    EXPECT_TRUE(ledger->CountRetrieval({"k"}, kNow, &error)) << error;
    EXPECT_EQ(ledger->AllowanceUsed("k", kNow), 51u);
}

TEST_F(KeyLedgerTest, TwoProcessesCountConcurrently) {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    constexpr int kEach = 200;
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The child never touches the parent's ledger; it opens its own.
        std::string error;
        auto child = KeyLedger::Open(options_, &error);
        if (child == nullptr) {
            _exit(2);
        }
        int code = 0;
        for (int i = 0; i < kEach && code == 0; i++) {
            if (!child->CountRetrieval({"shared", "child"}, kNow, &error) ||
                !child->AddRepeat("shared", kNow, &error)) {
                code = 3;
            }
        }
        child.reset();
        _exit(code);
    }
    std::string error;
    for (int i = 0; i < kEach; i++) {
        EXPECT_TRUE(ledger->CountRetrieval({"shared"}, kNow, &error))
            << error;
        EXPECT_TRUE(ledger->AddRepeat("shared", kNow, &error)) << error;
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(ledger->AllowanceUsed("shared", kNow), 2u * kEach);
    EXPECT_EQ(ledger->AllowanceUsed("child", kNow), 1u * kEach);
    EXPECT_EQ(ledger->RepeatCount("shared", kNow), 2u * kEach);
}

TEST_F(KeyLedgerTest, ListAllowancesAndStats) {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    std::string error;
    ASSERT_TRUE(ledger->CountRetrieval({"old"}, kDec1 - 1, &error));
    ASSERT_TRUE(ledger->CountRetrieval({"b", "a"}, kNow, &error));
    ASSERT_TRUE(ledger->CountRetrieval({"b"}, kNow, &error));
    std::vector<std::pair<std::string, uint64_t>> list;
    ASSERT_TRUE(ledger->ListAllowances(kNow, &list));
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0], std::make_pair(std::string("a"), uint64_t{1}));
    EXPECT_EQ(list[1], std::make_pair(std::string("b"), uint64_t{2}));
    ASSERT_TRUE(ledger->ListAllowances(kDec1 - 1, &list));
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0].first, "old");
    ASSERT_TRUE(ledger->ListAllowances(Utc(2027, 1, 1), &list));
    EXPECT_TRUE(list.empty());

    ledger->NoteReceipt("a", 1, kNow);
    ledger->NoteReceipt("a", 2, kNow);
    KeyLedger::Stats stats = ledger->GetStats();
    EXPECT_EQ(stats.keys_with_allowance, 2u);
    EXPECT_EQ(stats.pending_receipts, 2u);
    EXPECT_EQ(stats.receipt_buckets, 0u);
    ASSERT_TRUE(ledger->Flush(&error));
    stats = ledger->GetStats();
    EXPECT_EQ(stats.pending_receipts, 0u);
    EXPECT_EQ(stats.receipt_buckets, 1u);
    EXPECT_EQ(stats.dropped_receipts, 0u);
}

// --- receipts ----------------------------------------------------------------

TEST_F(KeyLedgerTest, ReceiptsCountForTwentyFourHours) {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    std::string error;
    const int64_t late = kNow - 1;    // the last ms of an hour
    const int64_t early = kNow;       // the first ms of the next
    ledger->NoteReceipt("k", 100, late);
    ledger->NoteReceipt("k", 200, early);
    for (int flushed = 0; flushed < 2; flushed++) {
        SCOPED_TRACE(flushed ? "flushed" : "pending");
        EXPECT_TRUE(ledger->Received("k", 100, late));
        EXPECT_TRUE(ledger->Received("k", 100, late + kDay));
        EXPECT_FALSE(ledger->Received("k", 100, late + kDay + 1));
        EXPECT_TRUE(ledger->Received("k", 200, early + kDay));
        EXPECT_TRUE(ledger->Received("k", 200, early + kDay + kHour - 1));
        EXPECT_FALSE(ledger->Received("k", 200, early + kDay + kHour));
        EXPECT_FALSE(ledger->Received("k", 101, late));
        EXPECT_FALSE(ledger->Received("j", 100, late));
        ASSERT_TRUE(ledger->Flush(&error)) << error;
    }
}

TEST_F(KeyLedgerTest, PendingReceiptsAreVisibleAndBounded) {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    ledger->NoteReceipt("k", 5, kNow);
    EXPECT_TRUE(ledger->Received("k", 5, kNow + 1));
    EXPECT_EQ(ledger->GetStats().pending_receipts, 1u);
    for (size_t i = 1; i < kMaxPendingReceipts + 10; i++) {
        ledger->NoteReceipt("k", 1000 + i, kNow);
    }
    KeyLedger::Stats stats = ledger->GetStats();
    EXPECT_EQ(stats.pending_receipts, kMaxPendingReceipts);
    EXPECT_EQ(stats.dropped_receipts, 10u);
    ledger->NoteReceipt(std::string(kMaxLedgerKeyBytes + 1, 'x'), 1, kNow);
    EXPECT_EQ(ledger->GetStats().dropped_receipts, 11u);
    std::string error;
    ASSERT_TRUE(ledger->Flush(&error)) << error;
    EXPECT_EQ(ledger->GetStats().pending_receipts, 0u);
    EXPECT_TRUE(ledger->Received("k", 5, kNow));
    EXPECT_TRUE(ledger->Received("k", 1000 + kMaxPendingReceipts - 1,
                                 kNow));
    EXPECT_FALSE(ledger->Received("k", 1000 + kMaxPendingReceipts, kNow));
}

TEST_F(KeyLedgerTest, FlushMergesWithExistingBuckets) {
    std::string error;
    {
        auto ledger = OpenLedger();
        ASSERT_NE(ledger, nullptr);
        for (uint64_t slot : {30, 10, 20, 30}) {
            ledger->NoteReceipt("k", slot, kNow);
        }
        ASSERT_TRUE(ledger->Flush(&error)) << error;
        for (uint64_t slot : {20, 15, 40, 10, 5, 40}) {
            ledger->NoteReceipt("k", slot, kNow + 1000);
        }
        ASSERT_TRUE(ledger->Flush(&error)) << error;
        ledger->NoteReceipt("k", 25, kNow + kHour);   // the next hour
        ASSERT_TRUE(ledger->Flush(&error)) << error;
        for (uint64_t slot : {5, 10, 15, 20, 25, 30, 40}) {
            EXPECT_TRUE(ledger->Received("k", slot, kNow + kHour));
        }
        EXPECT_FALSE(ledger->Received("k", 25, kNow + kHour - 1));
        for (uint64_t slot : {0, 4, 6, 11, 35, 41}) {
            EXPECT_FALSE(ledger->Received("k", slot, kNow + kHour));
        }
    }
    std::vector<RawRow> rows = RawRows(options_.state_dir, "receipts");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(SlotsOf(rows[0]),
              (std::vector<uint64_t>{5, 10, 15, 20, 30, 40}));
    EXPECT_EQ(rows[0].value, std::string("\x05\x05\x05\x0a\x0a"));
    EXPECT_EQ(SlotsOf(rows[1]), (std::vector<uint64_t>{25}));
    // hour (8) + length (2) + "k" + first slot (8)
    EXPECT_EQ(rows[0].key.size(), 19u);
}

TEST_F(KeyLedgerTest, SlotsRoundTripFromZeroToTheTop) {
    const std::vector<uint64_t> slots = {
        0,           1,           127,         128,
        300,         16383,       16384,       1ull << 32,
        (1ull << 63) - 2,         (1ull << 63) - 1,
        1ull << 63,  UINT64_MAX - 1,          UINT64_MAX};
    std::string error;
    {
        auto ledger = OpenLedger();
        ASSERT_NE(ledger, nullptr);
        for (size_t i = slots.size(); i-- > 0;) {
            ledger->NoteReceipt("k", slots[i], kNow);
        }
        ASSERT_TRUE(ledger->Flush(&error)) << error;
        for (uint64_t slot : slots) {
            EXPECT_TRUE(ledger->Received("k", slot, kNow)) << slot;
        }
        for (uint64_t slot : std::vector<uint64_t>{
                 2, 126, 129, (1ull << 32) + 1, (1ull << 63) - 3,
                 (1ull << 63) + 1, UINT64_MAX - 2}) {
            EXPECT_FALSE(ledger->Received("k", slot, kNow)) << slot;
        }
    }
    std::vector<RawRow> rows = RawRows(options_.state_dir, "receipts");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(SlotsOf(rows[0]), slots);
}

TEST_F(KeyLedgerTest, LargeBucketsSplitIntoSmallChunks) {
    std::string error;
    std::vector<uint64_t> expected;
    {
        auto ledger = OpenLedger();
        ASSERT_NE(ledger, nullptr);
        // A key reading forward: every other slot, one byte each, flushed
        // as they come.
        for (uint64_t slot = 1000; slot < 13000; slot += 2) {
            ledger->NoteReceipt("k", slot, kNow);
            expected.push_back(slot);
            if (slot % 200 == 0) {
                ASSERT_TRUE(ledger->Flush(&error)) << error;
            }
        }
        ASSERT_TRUE(ledger->Flush(&error)) << error;
        // Into the middle of full chunks, below the first, past the last.
        for (uint64_t slot : std::vector<uint64_t>{5001, 5003, 9001, 1, 999,
                                                   20000, 1ull << 40}) {
            ledger->NoteReceipt("k", slot, kNow);
            expected.push_back(slot);
        }
        ASSERT_TRUE(ledger->Flush(&error)) << error;
        std::sort(expected.begin(), expected.end());
        for (uint64_t slot : expected) {
            ASSERT_TRUE(ledger->Received("k", slot, kNow)) << slot;
        }
        for (uint64_t slot : {0, 2, 1001, 5005, 12999, 13000, 19999}) {
            EXPECT_FALSE(ledger->Received("k", slot, kNow)) << slot;
        }
    }
    std::vector<RawRow> rows = RawRows(options_.state_dir, "receipts");
    std::vector<uint64_t> stored;
    size_t bytes = 0;
    for (size_t i = 0; i < rows.size(); i++) {
        EXPECT_LE(rows[i].value.size(), 1536u);
        if (i + 1 < rows.size()) {
            EXPECT_GE(rows[i].value.size(), 700u) << i;   // no slivers
        }
        bytes += rows[i].value.size();
        std::vector<uint64_t> slots = SlotsOf(rows[i]);
        stored.insert(stored.end(), slots.begin(), slots.end());
    }
    EXPECT_EQ(stored, expected);
    EXPECT_GE(rows.size(), 4u);
    EXPECT_LE(rows.size(), 7u);
    EXPECT_LT(bytes, 6000u + 20);   // 1 byte per gap of 2
}

TEST_F(KeyLedgerTest, ThreadsNoteWhileFlushing) {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    std::atomic<bool> stop{false};
    std::atomic<int> misses{0};
    std::thread flusher([&] {
        std::string error;
        while (!stop.load()) {
            ledger->Flush(&error);
        }
    });
    std::vector<std::thread> writers;
    for (int t = 0; t < 3; t++) {
        writers.emplace_back([&, t] {
            std::string key = "key" + std::to_string(t);
            for (uint64_t slot = 0; slot < 3000; slot++) {
                ledger->NoteReceipt(key, slot, kNow);
                if (!ledger->Received(key, slot, kNow)) {
                    misses++;
                }
            }
        });
    }
    for (std::thread& writer : writers) {
        writer.join();
    }
    stop = true;
    flusher.join();
    std::string error;
    ASSERT_TRUE(ledger->Flush(&error)) << error;
    EXPECT_EQ(misses.load(), 0);
    for (int t = 0; t < 3; t++) {
        std::string key = "key" + std::to_string(t);
        for (uint64_t slot = 0; slot < 3000; slot += 7) {
            ASSERT_TRUE(ledger->Received(key, slot, kNow)) << key << slot;
        }
    }
}

// --- repeat counts -------------------------------------------------------

TEST_F(KeyLedgerTest, RepeatCountSumsTheLastTwentyFourHours) {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    std::string error;
    ASSERT_TRUE(ledger->AddRepeat("k", kNow, &error));              // h0
    ASSERT_TRUE(ledger->AddRepeat("k", kNow + kHour - 1, &error));  // h0
    ASSERT_TRUE(ledger->AddRepeat("k", kNow + 5 * kHour, &error));  // h5
    ASSERT_TRUE(ledger->AddRepeat("j", kNow, &error));
    EXPECT_EQ(ledger->RepeatCount("k", kNow - 1), 0u);
    EXPECT_EQ(ledger->RepeatCount("k", kNow), 2u);
    EXPECT_EQ(ledger->RepeatCount("k", kNow + 5 * kHour), 3u);
    EXPECT_EQ(ledger->RepeatCount("k", kNow + 24 * kHour - 1), 3u);
    EXPECT_EQ(ledger->RepeatCount("k", kNow + 24 * kHour), 1u);
    EXPECT_EQ(ledger->RepeatCount("k", kNow + 29 * kHour - 1), 1u);
    EXPECT_EQ(ledger->RepeatCount("k", kNow + 29 * kHour), 0u);
    EXPECT_EQ(ledger->RepeatCount("j", kNow), 1u);
    EXPECT_EQ(ledger->RepeatCount("x", kNow), 0u);
}

// --- upkeep --------------------------------------------------------------

TEST_F(KeyLedgerTest, PruneRemovesOldBucketsAndMonths) {
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    std::string error;
    const int64_t oct = Utc(2026, 10, 15);
    const int64_t nov = Utc(2026, 11, 15);
    ASSERT_TRUE(ledger->CountRetrieval({"k"}, oct, &error));
    ASSERT_TRUE(ledger->CountRetrieval({"k"}, nov, &error));
    ASSERT_TRUE(ledger->CountRetrieval({"k", "j"}, kNow, &error));
    for (int64_t hours_ago : {40, 25, 24, 1, 0}) {
        int64_t when = kNow - hours_ago * kHour;
        ledger->NoteReceipt("k", static_cast<uint64_t>(hours_ago), when);
        ASSERT_TRUE(ledger->AddRepeat("k", when, &error));
    }
    // Many rows of one old hour: deleted over several transactions.
    for (uint64_t i = 0; i < 25000; i++) {
        ledger->NoteReceipt("many" + std::to_string(i), i,
                            kNow - 30 * kHour);
    }
    ASSERT_TRUE(ledger->Flush(&error)) << error;
    EXPECT_EQ(ledger->GetStats().receipt_buckets, 25005u);

    const int64_t now = kNow + kHour / 2;
    ASSERT_TRUE(ledger->Prune(now, &error)) << error;
    EXPECT_EQ(ledger->GetStats().receipt_buckets, 3u);
    EXPECT_TRUE(ledger->Received("k", 24, now));
    EXPECT_TRUE(ledger->Received("k", 1, now));
    EXPECT_TRUE(ledger->Received("k", 0, now));
    EXPECT_FALSE(ledger->Received("k", 25, now - 2 * kHour));
    EXPECT_EQ(ledger->RepeatCount("k", now), 2u);     // 1 and 0 hours ago
    EXPECT_EQ(ledger->RepeatCount("k", now - kHour), 2u);   // 24 and 1
    EXPECT_EQ(ledger->AllowanceUsed("k", oct), 0u);
    EXPECT_EQ(ledger->AllowanceUsed("k", nov), 1u);
    EXPECT_EQ(ledger->AllowanceUsed("k", kNow), 1u);
    EXPECT_EQ(ledger->AllowanceUsed("j", kNow), 1u);
    ASSERT_TRUE(ledger->Prune(now, &error));   // nothing more to do
    EXPECT_EQ(ledger->GetStats().receipt_buckets, 3u);
}

TEST_F(KeyLedgerTest, CorruptLedgerIsAnErrorOrStartsOver) {
    std::string error;
    {
        auto ledger = OpenLedger();
        ASSERT_NE(ledger, nullptr);
        ASSERT_TRUE(ledger->CountRetrieval({"k"}, kNow, &error));
    }
    ASSERT_TRUE(Scribble(options_.state_dir + "/keys/data.mdb", 64 * 1024));
    EXPECT_EQ(KeyLedger::Open(options_, &error), nullptr);
    EXPECT_NE(error.find("MDB_INVALID"), std::string::npos) << error;

    options_.recover = true;
    auto ledger = OpenLedger();
    ASSERT_NE(ledger, nullptr);
    EXPECT_NE(ledger->damage().find("MDB_INVALID"), std::string::npos)
        << ledger->damage();
    EXPECT_EQ(ledger->AllowanceUsed("k", kNow), 0u);
    ASSERT_TRUE(ledger->CountRetrieval({"k"}, kNow, &error)) << error;
    EXPECT_EQ(ledger->AllowanceUsed("k", kNow), 1u);
    struct stat st;
    EXPECT_EQ(stat((options_.state_dir + "/keys.corrupt/data.mdb").c_str(),
                   &st),
              0);
}

// --- many keys ---------------------------------------------------------

// 256 keys at full rate for 25 hours, near the tip and over all history:
// every flush succeeds, nothing is dropped, the receipts are on disk.
TEST_F(KeyLedgerTest, ReceiptsOfManyKeysAreKept) {
    constexpr int kKeys = 256;
    for (bool archival : {false, true}) {
        SCOPED_TRACE(archival ? "archival" : "near tip");
        std::string state = dir_.path() + (archival ? "/arch" : "/tip");
        testing::ManyKeys m =
            testing::WriteManyReceipts(state, kKeys, archival, kNow);
        ASSERT_TRUE(m.opened);
        EXPECT_EQ(m.failed_flushes, 0);
        EXPECT_EQ(m.dropped, 0u);
        EXPECT_GT(m.rows, 0u);
        EXPECT_GT(m.page_bytes, 0u);
    }
}

}  // namespace
}  // namespace solgate
