// The LMDB plumbing the stores share: opening and stamping an environment,
// the one place transactions begin and end, walking rows by prefix.
#include <gtest/gtest.h>
#include <lmdb.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "store/byte_order.h"
#include "store/lmdb_env.h"
#include "support/temp_dir.h"

namespace solgate {
namespace {

constexpr uint64_t kFormat = 3;

LmdbEnvSettings Settings(uint64_t format = kFormat,
                         size_t map_size = 1u << 20) {
    return LmdbEnvSettings{4, 8, map_size, format, "rows"};
}

// A store of one table, "rows", besides "meta".
class LmdbEnvTest : public ::testing::Test {
protected:
    bool Open(LmdbEnvSettings settings = Settings()) {
        corrupt_ = false;
        error_.clear();
        auto open_tables = [this](MDB_txn* txn, LmdbLayout* layout) {
            int rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &meta_);
            if (rc == 0) {
                rc = mdb_dbi_open(txn, "rows", MDB_CREATE, &rows_);
            }
            if (rc == 0) {
                rc = ReadNumber(txn, meta_, kLmdbFormatKey, &layout->format);
            }
            layout->meta = meta_;
            layout->tables = {rows_};
            return rc;
        };
        return env_.Open(dir_.path(), settings, open_tables, &corrupt_,
                         &error_);
    }

    static int ReadNumber(MDB_txn* txn, MDB_dbi dbi, std::string_view key,
                          uint64_t* out) {
        MDB_val k = LmdbVal(key);
        MDB_val value;
        int rc = mdb_get(txn, dbi, &k, &value);
        *out = rc == 0 && value.mv_size == 8
                   ? ReadLittleEndian(
                         static_cast<const unsigned char*>(value.mv_data), 8)
                   : 0;
        return rc == MDB_NOTFOUND ? 0 : rc;
    }

    int Put(const std::string& key, const std::string& value) {
        return env_.Write([&](MDB_txn* txn) {
            MDB_val k = LmdbVal(key);
            MDB_val v = LmdbVal(value);
            return mdb_put(txn, rows_, &k, &v, 0);
        });
    }

    // The value at `key`, "" when absent.
    std::string Get(const std::string& key) {
        std::string out;
        env_.Read([&](MDB_txn* txn) {
            MDB_val k = LmdbVal(key);
            MDB_val v;
            int rc = mdb_get(txn, rows_, &k, &v);
            if (rc == 0) {
                out = std::string(LmdbView(v));
            }
            return rc;
        });
        return out;
    }

    uint64_t Stamp() {
        uint64_t format = 0;
        env_.Read([&](MDB_txn* txn) {
            return ReadNumber(txn, meta_, kLmdbFormatKey, &format);
        });
        return format;
    }

    std::vector<std::string> Keys(std::string_view prefix) {
        std::vector<std::string> keys;
        int rc = env_.Read([&](MDB_txn* txn) {
            return ForEachLmdbRow(txn, rows_, prefix,
                                  [&](const MDB_val& key, const MDB_val&) {
                                      keys.emplace_back(LmdbView(key));
                                  });
        });
        EXPECT_EQ(rc, 0);
        return keys;
    }

    TempDir dir_{"solgate-lmdb-env"};
    LmdbEnv env_{"test store"};
    MDB_dbi meta_ = 0;
    MDB_dbi rows_ = 0;
    bool corrupt_ = false;
    std::string error_;
};

TEST_F(LmdbEnvTest, ANewStoreIsStampedAndReopens) {
    ASSERT_TRUE(Open()) << error_;
    EXPECT_EQ(Stamp(), kFormat);
    ASSERT_EQ(Put("a", "1"), 0);
    env_.Close();
    ASSERT_TRUE(Open()) << error_;
    EXPECT_EQ(Get("a"), "1");
    EXPECT_FALSE(corrupt_);
}

TEST_F(LmdbEnvTest, AnotherFormatIsRefusedAsCorrupt) {
    ASSERT_TRUE(Open(Settings(7))) << error_;
    env_.Close();
    EXPECT_FALSE(Open(Settings(8)));
    EXPECT_TRUE(corrupt_);
    EXPECT_EQ(error_, "test store: format 7, expected 8");
}

TEST_F(LmdbEnvTest, RowsWithoutAStampAreRefusedAsCorrupt) {
    ASSERT_TRUE(Open()) << error_;
    ASSERT_EQ(Put("a", "1"), 0);
    ASSERT_EQ(env_.Write([&](MDB_txn* txn) {
                  MDB_val k = LmdbVal(kLmdbFormatKey);
                  return mdb_del(txn, meta_, &k, nullptr);
              }),
              0);
    env_.Close();
    EXPECT_FALSE(Open());
    EXPECT_TRUE(corrupt_);
    EXPECT_EQ(error_, "test store: rows without a format");
}

TEST_F(LmdbEnvTest, AnEmptyStoreWithoutAStampIsStampedAgain) {
    ASSERT_TRUE(Open()) << error_;
    ASSERT_EQ(env_.Write([&](MDB_txn* txn) {
                  MDB_val k = LmdbVal(kLmdbFormatKey);
                  return mdb_del(txn, meta_, &k, nullptr);
              }),
              0);
    EXPECT_EQ(Stamp(), 0u);
    env_.Close();
    ASSERT_TRUE(Open()) << error_;
    EXPECT_EQ(Stamp(), kFormat);
}

TEST_F(LmdbEnvTest, AMissingDirectoryIsAnErrorNotCorruption) {
    corrupt_ = false;
    LmdbEnv env("test store");
    auto open_tables = [](MDB_txn*, LmdbLayout*) { return 0; };
    std::string missing = dir_.path() + "/missing";
    EXPECT_FALSE(
        env.Open(missing, Settings(), open_tables, &corrupt_, &error_));
    EXPECT_FALSE(corrupt_);
    EXPECT_EQ(error_.rfind("test store: open " + missing + ": ", 0), 0u)
        << error_;
}

TEST_F(LmdbEnvTest, GarbageFilesAreCorrupt) {
    {
        std::ofstream out(dir_.path() + "/data.mdb", std::ios::binary);
        out << std::string(16384, 'x');
    }
    EXPECT_FALSE(Open());
    EXPECT_TRUE(corrupt_);
    EXPECT_EQ(error_.rfind("test store: open " + dir_.path() + ": ", 0), 0u)
        << error_;
}

TEST_F(LmdbEnvTest, AFailingTableOpenNamesTheStepAndTheDirectory) {
    corrupt_ = false;
    auto open_tables = [](MDB_txn*, LmdbLayout*) { return MDB_CORRUPTED; };
    EXPECT_FALSE(
        env_.Open(dir_.path(), Settings(), open_tables, &corrupt_, &error_));
    EXPECT_TRUE(corrupt_);
    EXPECT_EQ(error_, "test store: open " + dir_.path() + ": " +
                          mdb_strerror(MDB_CORRUPTED));
}

TEST_F(LmdbEnvTest, WriteCommitsOnlyWhenTheBodySucceeds) {
    ASSERT_TRUE(Open()) << error_;
    EXPECT_EQ(Put("kept", "1"), 0);
    const std::string key = "dropped", value = "1";
    int rc = env_.Write([&](MDB_txn* txn) {
        MDB_val k = LmdbVal(key);
        MDB_val v = LmdbVal(value);
        int put = mdb_put(txn, rows_, &k, &v, 0);
        return put != 0 ? put : MDB_KEYEXIST;
    });
    EXPECT_EQ(rc, MDB_KEYEXIST);
    EXPECT_EQ(Get("kept"), "1");
    EXPECT_EQ(Get("dropped"), "");
}

TEST_F(LmdbEnvTest, WriteAbortsWhenTheBodyThrows) {
    ASSERT_TRUE(Open()) << error_;
    const std::string key = "dropped", value = "1";
    EXPECT_THROW(env_.Write([&](MDB_txn* txn) -> int {
        MDB_val k = LmdbVal(key);
        MDB_val v = LmdbVal(value);
        mdb_put(txn, rows_, &k, &v, 0);
        throw std::runtime_error("body failed");
    }),
                 std::runtime_error);
    EXPECT_EQ(Get("dropped"), "");
    // The writer lock was released: the next write goes through.
    EXPECT_EQ(Put("after", "2"), 0);
    EXPECT_EQ(Get("after"), "2");
}

TEST_F(LmdbEnvTest, WriteWithATextReportsTheFailure) {
    ASSERT_TRUE(Open()) << error_;
    std::string error;
    EXPECT_TRUE(env_.Write("tidy", &error, [](MDB_txn*) { return 0; }));
    EXPECT_EQ(error, "");
    EXPECT_FALSE(
        env_.Write("tidy", &error, [](MDB_txn*) { return MDB_NOTFOUND; }));
    EXPECT_EQ(error,
              std::string("test store: tidy: ") + mdb_strerror(MDB_NOTFOUND));
    EXPECT_FALSE(
        env_.Write("tidy", nullptr, [](MDB_txn*) { return MDB_NOTFOUND; }));
}

TEST_F(LmdbEnvTest, AFullMapIsTheCallersErrorNotRetried) {
    ASSERT_TRUE(Open(Settings(kFormat, 64u * 1024u))) << error_;
    int calls = 0;
    std::string error;
    bool ok = env_.Write("fill", &error, [&](MDB_txn* txn) {
        calls++;
        std::string value(1024, 'v');
        int rc = 0;
        for (int i = 0; rc == 0 && i < 1000; i++) {
            std::string key = "k" + std::to_string(i);
            MDB_val k = LmdbVal(key);
            MDB_val v = LmdbVal(value);
            rc = mdb_put(txn, rows_, &k, &v, 0);
        }
        return rc;
    });
    EXPECT_FALSE(ok);
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(error,
              std::string("test store: fill: ") + mdb_strerror(MDB_MAP_FULL));
    EXPECT_EQ(Get("k0"), "");
}

TEST_F(LmdbEnvTest, ReadReturnsTheBodysCodeOrWhyItCouldNotBegin) {
    LmdbEnvSettings one_reader = Settings();
    one_reader.max_readers = 1;
    ASSERT_TRUE(Open(one_reader)) << error_;
    EXPECT_EQ(env_.Read([](MDB_txn*) { return 0; }), 0);
    EXPECT_EQ(env_.Read([](MDB_txn*) { return MDB_NOTFOUND; }),
              MDB_NOTFOUND);
    // The only reader slot is taken by the outer transaction.
    bool inner_ran = false;
    int inner = -1;
    env_.Read([&](MDB_txn*) {
        inner = env_.Read([&](MDB_txn*) {
            inner_ran = true;
            return 0;
        });
        return 0;
    });
    EXPECT_EQ(inner, MDB_READERS_FULL);
    EXPECT_FALSE(inner_ran);
}

TEST_F(LmdbEnvTest, OpenOrStartOverTriesOnceMoreOnlyAfterCorruption) {
    struct Case {
        bool recover;
        std::vector<std::pair<bool, bool>> opens;  // (succeeds, corrupt)
        bool start_over_works;
        bool opened;
        int open_calls;
        int start_over_calls;
    };
    const Case cases[] = {
        {true, {{true, false}}, true, true, 1, 0},
        {true, {{false, false}}, true, false, 1, 0},   // not corrupt
        {false, {{false, true}}, true, false, 1, 0},   // may not recover
        {true, {{false, true}, {true, false}}, true, true, 2, 1},
        {true, {{false, true}}, false, false, 1, 1},   // cannot start over
        {true, {{false, true}, {false, true}}, true, false, 2, 1},
    };
    for (const Case& c : cases) {
        int open_calls = 0;
        int start_over_calls = 0;
        auto open = [&](bool* corrupt) {
            const auto& [succeeds, is_corrupt] = c.opens.at(open_calls++);
            *corrupt = is_corrupt;
            return succeeds;
        };
        auto start_over = [&] {
            start_over_calls++;
            return c.start_over_works;
        };
        EXPECT_EQ(env_.OpenOrStartOver(c.recover, open, start_over),
                  c.opened);
        EXPECT_EQ(open_calls, c.open_calls);
        EXPECT_EQ(start_over_calls, c.start_over_calls);
    }
}

TEST_F(LmdbEnvTest, OpenOrStartOverOpensAFreshStoreAfterStartingOver) {
    ASSERT_TRUE(Open()) << error_;
    ASSERT_EQ(Put("old", "1"), 0);
    env_.Close();
    int opens = 0;
    auto open = [&](bool* corrupt) {
        opens++;
        bool ok = Open();
        *corrupt = opens == 1;   // the first open finds it damaged
        return ok && opens > 1;
    };
    auto start_over = [&] {
        return std::remove((dir_.path() + "/data.mdb").c_str()) == 0 &&
               std::remove((dir_.path() + "/lock.mdb").c_str()) == 0;
    };
    EXPECT_TRUE(env_.OpenOrStartOver(true, open, start_over));
    EXPECT_EQ(opens, 2);
    EXPECT_EQ(Get("old"), "");
    EXPECT_EQ(Stamp(), kFormat);
}

TEST_F(LmdbEnvTest, ForEachRowWalksAPrefixInKeyOrder) {
    ASSERT_TRUE(Open()) << error_;
    for (const char* key : {"b2", "a1", "b1", "c", "b", "ba"}) {
        ASSERT_EQ(Put(key, "x"), 0);
    }
    EXPECT_EQ(Keys(""), (std::vector<std::string>{"a1", "b", "b1", "b2",
                                                  "ba", "c"}));
    EXPECT_EQ(Keys("b"),
              (std::vector<std::string>{"b", "b1", "b2", "ba"}));
    EXPECT_EQ(Keys("b1"), (std::vector<std::string>{"b1"}));
    EXPECT_EQ(Keys("bb"), std::vector<std::string>{});
    EXPECT_EQ(Keys("d"), std::vector<std::string>{});
}

TEST_F(LmdbEnvTest, ForEachRowOfAnEmptyTableVisitsNothing) {
    ASSERT_TRUE(Open()) << error_;
    EXPECT_EQ(Keys(""), std::vector<std::string>{});
    EXPECT_EQ(Keys("a"), std::vector<std::string>{});
}

TEST_F(LmdbEnvTest, ForEachRowOnACursorGivesValuesToo) {
    ASSERT_TRUE(Open()) << error_;
    ASSERT_EQ(Put("k1", "one"), 0);
    ASSERT_EQ(Put("k2", "two"), 0);
    ASSERT_EQ(Put("l1", "other"), 0);
    std::vector<std::pair<std::string, std::string>> rows;
    int rc = env_.Read([&](MDB_txn* txn) {
        LmdbCursor cursor;
        int rc = cursor.Open(txn, rows_);
        if (rc != 0) {
            return rc;
        }
        return ForEachLmdbRow(
            cursor.get(), "k", [&](const MDB_val& key, const MDB_val& value) {
                rows.emplace_back(LmdbView(key), LmdbView(value));
            });
    });
    EXPECT_EQ(rc, 0);
    EXPECT_EQ(rows, (std::vector<std::pair<std::string, std::string>>{
                        {"k1", "one"}, {"k2", "two"}}));
}

// The guards under LmdbEnv, on a bare environment.
TEST(LmdbGuards, AnUncommittedTransactionDiscardsItsWrites) {
    TempDir dir("solgate-lmdb-guards");
    MDB_env* env = nullptr;
    ASSERT_EQ(mdb_env_create(&env), 0);
    ASSERT_EQ(mdb_env_open(env, dir.path().c_str(), MDB_NOTLS, 0600), 0);
    MDB_dbi dbi = 0;
    MDB_val k = LmdbVal("a");
    MDB_val v = LmdbVal("1");
    {
        LmdbTxn txn;
        ASSERT_EQ(txn.Begin(env, true), 0);
        ASSERT_EQ(mdb_dbi_open(txn.get(), nullptr, 0, &dbi), 0);
        ASSERT_EQ(mdb_put(txn.get(), dbi, &k, &v, 0), 0);
        LmdbCursor cursor;
        ASSERT_EQ(cursor.Open(txn.get(), dbi), 0);
        EXPECT_NE(cursor.get(), nullptr);
    }
    {
        LmdbTxn txn;
        ASSERT_EQ(txn.Begin(env, false), 0);
        MDB_val out;
        EXPECT_EQ(mdb_get(txn.get(), dbi, &k, &out), MDB_NOTFOUND);
    }
    {
        LmdbTxn txn;
        ASSERT_EQ(txn.Begin(env, true), 0);
        ASSERT_EQ(mdb_put(txn.get(), dbi, &k, &v, 0), 0);
        EXPECT_EQ(txn.Commit(), 0);
        EXPECT_EQ(txn.get(), nullptr);
        txn.Abort();   // nothing left to end
    }
    {
        LmdbTxn txn;
        ASSERT_EQ(txn.Begin(env, false), 0);
        MDB_val out;
        ASSERT_EQ(mdb_get(txn.get(), dbi, &k, &out), 0);
        EXPECT_EQ(LmdbView(out), "1");
    }
    mdb_env_close(env);
}

TEST(LmdbHelpers, NumbersAreEightBytesLittleEndian) {
    TempDir dir("solgate-lmdb-number");
    LmdbEnv env("numbers");
    MDB_dbi meta = 0;
    bool corrupt = false;
    std::string error;
    auto open_tables = [&](MDB_txn* txn, LmdbLayout* layout) {
        int rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &meta);
        layout->meta = meta;
        return rc;
    };
    ASSERT_TRUE(env.Open(dir.path(), Settings(), open_tables, &corrupt,
                         &error))
        << error;
    ASSERT_EQ(env.Write([&](MDB_txn* txn) {
                  return PutLmdbNumber(txn, meta, "n", 0x0102030405060708);
              }),
              0);
    std::string stored;
    ASSERT_EQ(env.Read([&](MDB_txn* txn) {
                  MDB_val k = LmdbVal(std::string_view("n"));
                  MDB_val v;
                  int rc = mdb_get(txn, meta, &k, &v);
                  if (rc == 0) {
                      stored = std::string(LmdbView(v));
                  }
                  return rc;
              }),
              0);
    EXPECT_EQ(stored, std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
}

TEST(LmdbHelpers, ValAndViewCoverTheSameBytes) {
    std::string bytes("a\0b", 3);
    MDB_val val = LmdbVal(bytes);
    EXPECT_EQ(val.mv_size, 3u);
    EXPECT_EQ(val.mv_data, bytes.data());
    EXPECT_EQ(LmdbView(val), std::string_view(bytes));
    EXPECT_EQ(LmdbView(LmdbVal(std::string_view())).size(), 0u);
}

TEST(LmdbHelpers, CorruptionIsTheFilesNotTheSystem) {
    for (int rc : {MDB_CORRUPTED, MDB_PAGE_NOTFOUND, MDB_INVALID,
                   MDB_VERSION_MISMATCH, MDB_INCOMPATIBLE, MDB_PANIC}) {
        EXPECT_TRUE(IsLmdbCorruption(rc)) << rc;
    }
    for (int rc : {0, MDB_NOTFOUND, MDB_MAP_FULL, MDB_READERS_FULL, ENOMEM,
                   EIO, ENOSPC}) {
        EXPECT_FALSE(IsLmdbCorruption(rc)) << rc;
    }
}

}  // namespace
}  // namespace solgate
