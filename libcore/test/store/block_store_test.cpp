#include <fcntl.h>
#include <gtest/gtest.h>
#include <lmdb.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "store/block_store.h"
#include "support/scribble.h"
#include "support/temp_dir.h"

namespace solgate {
namespace {

namespace fs = std::filesystem;

const char kVariant[] = "getBlock/json/full/r1/v0";

// A getBlock answer for `slot` whose JSON-RPC id is `id`.
std::string Body(uint64_t slot, const std::string& id, size_t padding = 0) {
    return R"({"jsonrpc":"2.0","result":{"blockHeight":)" +
           std::to_string(slot) + R"(,"pad":")" + std::string(padding, 'x') +
           R"("},"id":)" + id + "}";
}

// The record Commit expects for a body made by Body.
BlockRecord RecordFor(const std::string& body, const std::string& id,
                      int64_t now_ms) {
    BlockRecord rec;
    rec.bytes = body.size();
    rec.id_offset = static_cast<uint32_t>(body.size() - 1 - id.size());
    rec.id_length = static_cast<uint32_t>(id.size());
    rec.stored_ms = now_ms;
    rec.score = 1;
    rec.score_ms = now_ms;
    return rec;
}

bool WriteFile(const std::string& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    return static_cast<bool>(out);
}

std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    return content.str();
}

std::string ReadFd(int fd) {
    std::string content;
    char buffer[4096];
    ssize_t n;
    while ((n = read(fd, buffer, sizeof buffer)) > 0) {
        content.append(buffer, static_cast<size_t>(n));
    }
    return content;
}

bool Exists(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0;
}

size_t CountFiles(const std::string& dir) {
    size_t count = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (it->is_regular_file()) {
            count++;
        }
    }
    return count;
}

// Writes `body` to a fresh temp file of the store (its path in *temp) and
// commits it as (slot, variant).
bool Put(BlockStore& store, uint64_t slot, const std::string& variant,
         const std::string& body, int64_t now_ms, std::string* error,
         std::string* temp = nullptr) {
    std::string path = store.NewTempPath();
    if (temp != nullptr) {
        *temp = path;
    }
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                  0644);
    if (fd < 0) {
        *error = "cannot create " + path;
        return false;
    }
    bool written = write(fd, body.data(), body.size()) ==
                   static_cast<ssize_t>(body.size());
    close(fd);
    if (!written) {
        *error = "cannot write " + path;
        return false;
    }
    return store.Commit(path, slot, variant, RecordFor(body, "1", now_ms),
                        error);
}

class BlockStoreTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(dir_.path().empty());
        options_.cache_dir = dir_.path() + "/cache";
        options_.state_dir = dir_.path() + "/state";
    }

    std::unique_ptr<BlockStore> OpenStore(bool reconcile = true) {
        std::string error;
        auto store = BlockStore::Open(options_, reconcile, &error);
        EXPECT_NE(store, nullptr) << error;
        return store;
    }

    std::string TmpDir() const { return options_.cache_dir + "/tmp"; }

    TempDir dir_{"block_store_test"};
    BlockStoreOptions options_;
};

TEST_F(BlockStoreTest, CommitLookupPathForRoundTrip) {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    const uint64_t slot = 300000000;
    std::string body = Body(slot, "1", 100);
    std::string error;
    std::string temp;
    ASSERT_TRUE(Put(*store, slot, kVariant, body, 1234, &error, &temp))
        << error;

    std::string path = store->PathFor(slot, kVariant);
    EXPECT_EQ(path, options_.cache_dir +
                        "/v/getBlock_2Fjson_2Ffull_2Fr1_2Fv0/73242/300000000");
    EXPECT_EQ(ReadFile(path), body);
    EXPECT_FALSE(Exists(temp));
    EXPECT_EQ(CountFiles(TmpDir()), 0u);

    BlockRecord rec;
    ASSERT_TRUE(store->Lookup(slot, kVariant, &rec));
    EXPECT_EQ(rec.bytes, body.size());
    EXPECT_EQ(body.substr(rec.id_offset, rec.id_length), "1");
    EXPECT_EQ(rec.kind, BlockRecord::kBlock);
    EXPECT_EQ(rec.stored_ms, 1234);
    EXPECT_EQ(rec.score, 1.0);
    EXPECT_EQ(rec.score_ms, 1234);
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(rec.file_id, st.st_ino);

    EXPECT_FALSE(store->Lookup(slot + 1, kVariant, &rec));
    EXPECT_FALSE(store->Lookup(slot, "getBlock/json/full/r1/v-", &rec));

    BlockRecord verified;
    int fd = store->OpenVerified(slot, kVariant, &verified);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(ReadFd(fd), body);
    close(fd);
    EXPECT_EQ(verified.file_id, st.st_ino);
    EXPECT_EQ(store->OpenVerified(slot + 1, kVariant, &verified), -1);

    BlockStore::Totals totals = store->GetTotals();
    EXPECT_EQ(totals.bytes, body.size());
    EXPECT_EQ(totals.entries, 1u);
    EXPECT_EQ(totals.evictions, 0u);
}

TEST_F(BlockStoreTest, SkippedSlotKindRoundTrips) {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    std::string body = R"({"jsonrpc":"2.0","error":{"code":-32007},"id":42})";
    std::string temp = store->NewTempPath();
    ASSERT_TRUE(WriteFile(temp, body));
    BlockRecord rec;
    rec.bytes = body.size();
    rec.id_offset = static_cast<uint32_t>(body.find("42"));
    rec.id_length = 2;
    rec.kind = BlockRecord::kSkippedSlot;
    std::string error;
    ASSERT_TRUE(store->Commit(temp, 7, "v", rec, &error)) << error;
    BlockRecord out;
    ASSERT_TRUE(store->Lookup(7, "v", &out));
    EXPECT_EQ(out.kind, BlockRecord::kSkippedSlot);
    EXPECT_EQ(out.id_offset, rec.id_offset);
}

TEST_F(BlockStoreTest, VariantsAndKeyOrder) {
    EXPECT_TRUE(ValidBlockVariant(std::string(64, 'a')));
    EXPECT_FALSE(ValidBlockVariant(std::string(65, 'a')));
    EXPECT_FALSE(ValidBlockVariant(""));
    EXPECT_FALSE(ValidBlockVariant("a b"));
    EXPECT_FALSE(ValidBlockVariant(std::string("a\0b", 3)));
    EXPECT_FALSE(ValidBlockVariant("caf\xc3\xa9"));

    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->PathFor(1, ""), "");
    EXPECT_EQ(store->PathFor(1, "a b"), "");
    // Variants a simple sanitiser would merge keep apart.
    EXPECT_NE(store->PathFor(1, "a/b"), store->PathFor(1, "a_b"));
    EXPECT_EQ(store->PathFor(4097, "a_b"),
              options_.cache_dir + "/v/a_5Fb/1/4097");
    EXPECT_EQ(store->PathFor(0, "..").find("/../"), std::string::npos);

    std::string error;
    std::string temp;
    EXPECT_FALSE(Put(*store, 1, "a b", Body(1, "1"), 0, &error, &temp));
    EXPECT_NE(error, "");
    EXPECT_FALSE(Exists(temp));

    for (uint64_t slot : {70000u, 5u, 256u}) {
        ASSERT_TRUE(Put(*store, slot, "b", Body(slot, "1"), 0, &error));
    }
    ASSERT_TRUE(Put(*store, 1u << 20, "a", Body(1, "1"), 0, &error));
    std::vector<BlockStore::Entry> entries;
    ASSERT_TRUE(store->List(&entries, &error)) << error;
    ASSERT_EQ(entries.size(), 4u);
    EXPECT_EQ(entries[0].variant, "a");
    EXPECT_EQ(entries[0].slot, 1u << 20);
    EXPECT_EQ(entries[1].slot, 5u);
    EXPECT_EQ(entries[2].slot, 256u);
    EXPECT_EQ(entries[3].slot, 70000u);
    EXPECT_EQ(entries[3].variant, "b");
    EXPECT_EQ(entries[3].rec.bytes, Body(70000, "1").size());
}

TEST_F(BlockStoreTest, CommitRejectsInconsistentInput) {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    std::string body = Body(9, "1");
    std::string error;

    std::string temp = store->NewTempPath();
    ASSERT_TRUE(WriteFile(temp, body));
    BlockRecord rec = RecordFor(body, "1", 0);
    rec.bytes += 1;   // not the file's size
    EXPECT_FALSE(store->Commit(temp, 9, "v", rec, &error));
    EXPECT_NE(error.find("bytes"), std::string::npos) << error;
    EXPECT_FALSE(Exists(temp));

    temp = store->NewTempPath();
    ASSERT_TRUE(WriteFile(temp, body));
    rec = RecordFor(body, "1", 0);
    rec.id_offset = static_cast<uint32_t>(body.size());
    EXPECT_FALSE(store->Commit(temp, 9, "v", rec, &error));
    EXPECT_FALSE(Exists(temp));

    error.clear();
    EXPECT_FALSE(store->Commit(TmpDir() + "/missing", 9, "v",
                               RecordFor(body, "1", 0), &error));
    EXPECT_NE(error, "");

    BlockRecord out;
    EXPECT_FALSE(store->Lookup(9, "v", &out));
    EXPECT_EQ(store->GetTotals().entries, 0u);
    EXPECT_EQ(CountFiles(options_.cache_dir), 0u);
}

TEST_F(BlockStoreTest, ReplacingAnEntryKeepsTotalsRight) {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    std::string error;
    std::string small = Body(5, "1", 10);
    std::string large = Body(5, "1", 500);
    std::string other = Body(6, "1", 20);
    ASSERT_TRUE(Put(*store, 5, "v", small, 100, &error)) << error;
    ASSERT_TRUE(Put(*store, 6, "v", other, 100, &error)) << error;
    ASSERT_TRUE(Put(*store, 5, "v", large, 200, &error)) << error;

    BlockStore::Totals totals = store->GetTotals();
    EXPECT_EQ(totals.entries, 2u);
    EXPECT_EQ(totals.bytes, large.size() + other.size());
    BlockRecord rec;
    ASSERT_TRUE(store->Lookup(5, "v", &rec));
    EXPECT_EQ(rec.bytes, large.size());
    EXPECT_EQ(rec.stored_ms, 200);
    EXPECT_EQ(ReadFile(store->PathFor(5, "v")), large);

    ASSERT_TRUE(Put(*store, 5, "v", small, 300, &error)) << error;
    totals = store->GetTotals();
    EXPECT_EQ(totals.entries, 2u);
    EXPECT_EQ(totals.bytes, small.size() + other.size());
    EXPECT_EQ(CountFiles(options_.cache_dir), 2u);
}

TEST_F(BlockStoreTest, RemoveDeletesFilesAndCountsEvictions) {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    std::string error;
    for (uint64_t slot = 1; slot <= 3; slot++) {
        ASSERT_TRUE(Put(*store, slot, "v", Body(slot, "1"), 0, &error));
    }
    std::string path1 = store->PathFor(1, "v");
    std::string path2 = store->PathFor(2, "v");

    // A reader that opened a file before its removal keeps reading it.
    BlockRecord rec;
    int fd = store->OpenVerified(1, "v", &rec);
    ASSERT_GE(fd, 0);

    ASSERT_TRUE(store->Remove({{1, "v"}, {2, "v"}, {9, "v"}, {1, "w"},
                               {1, "bad variant"}},
                              &error))
        << error;
    EXPECT_FALSE(Exists(path1));
    EXPECT_FALSE(Exists(path2));
    EXPECT_TRUE(Exists(store->PathFor(3, "v")));
    EXPECT_FALSE(store->Lookup(1, "v", &rec));
    EXPECT_TRUE(store->Lookup(3, "v", &rec));
    EXPECT_EQ(CountFiles(TmpDir()), 0u);
    EXPECT_EQ(ReadFd(fd), Body(1, "1"));
    close(fd);

    BlockStore::Totals totals = store->GetTotals();
    EXPECT_EQ(totals.entries, 1u);
    EXPECT_EQ(totals.bytes, Body(3, "1").size());
    EXPECT_EQ(totals.evictions, 2u);

    // Removing again changes nothing.
    ASSERT_TRUE(store->Remove({{1, "v"}}, &error));
    ASSERT_TRUE(store->Remove({}, &error));
    EXPECT_EQ(store->GetTotals().evictions, 2u);
}

TEST_F(BlockStoreTest, ReopenKeepsEverything) {
    std::string error;
    uint64_t bytes = 0;
    {
        auto store = OpenStore();
        ASSERT_NE(store, nullptr);
        for (uint64_t slot = 10; slot < 20; slot++) {
            std::string body = Body(slot, "1", slot);
            bytes += body.size();
            ASSERT_TRUE(Put(*store, slot, "v", body, 50, &error)) << error;
        }
        ASSERT_TRUE(store->UpdateScores({{12, "v", 3.5, 777}}, &error));
        ASSERT_TRUE(store->Remove({{10, "v"}}, &error));
        bytes -= Body(10, "1", 10).size();
    }
    for (bool reconcile : {true, false}) {
        auto store = OpenStore(reconcile);
        ASSERT_NE(store, nullptr);
        BlockStore::Totals totals = store->GetTotals();
        EXPECT_EQ(totals.entries, 9u);
        EXPECT_EQ(totals.bytes, bytes);
        EXPECT_EQ(totals.evictions, 1u);
        std::vector<BlockStore::Entry> entries;
        ASSERT_TRUE(store->List(&entries, &error));
        EXPECT_EQ(entries.size(), 9u);
        BlockRecord rec;
        ASSERT_TRUE(store->Lookup(12, "v", &rec));
        EXPECT_EQ(rec.score, 3.5);
        EXPECT_EQ(rec.score_ms, 777);
        int fd = store->OpenVerified(19, "v", &rec);
        ASSERT_GE(fd, 0);
        EXPECT_EQ(ReadFd(fd), Body(19, "1", 19));
        close(fd);
        EXPECT_EQ(CountFiles(options_.cache_dir), 9u);
    }
}

TEST_F(BlockStoreTest, ReconcileRepairsFilesAndIndex) {
    std::string error;
    std::string stale_temp;
    std::string orphan;
    std::string other_orphan;
    {
        auto store = OpenStore();
        ASSERT_NE(store, nullptr);
        for (uint64_t slot = 10; slot <= 13; slot++) {
            ASSERT_TRUE(Put(*store, slot, "v1", Body(slot, "1"), 0, &error));
        }
        // 11: its file vanished.
        ASSERT_EQ(unlink(store->PathFor(11, "v1").c_str()), 0);
        // 12: its file has another size.
        ASSERT_TRUE(WriteFile(store->PathFor(12, "v1"), "short"));
        // 13: another file of the same size took its place.
        std::string impostor = store->NewTempPath();
        ASSERT_TRUE(WriteFile(impostor, Body(99, "1")));
        ASSERT_EQ(rename(impostor.c_str(), store->PathFor(13, "v1").c_str()),
                  0);
        // Files no entry knows, strays, and a temp file left by a crash.
        orphan = store->PathFor(14, "v1");
        ASSERT_TRUE(WriteFile(orphan, Body(14, "1")));
        other_orphan = store->PathFor(20, "v2");
        fs::create_directories(fs::path(other_orphan).parent_path());
        ASSERT_TRUE(WriteFile(other_orphan, Body(20, "1")));
        ASSERT_TRUE(WriteFile(options_.cache_dir + "/v/stray.txt", "x"));
        fs::create_directories(options_.cache_dir + "/v/a_zz/0");
        ASSERT_TRUE(WriteFile(options_.cache_dir + "/v/a_zz/0/1", "x"));
        ASSERT_TRUE(WriteFile(options_.cache_dir + "/v/v1/0/010", "x"));
        ASSERT_TRUE(WriteFile(options_.cache_dir + "/v/v1/0/5000", "x"));
        stale_temp = store->NewTempPath();
        ASSERT_TRUE(WriteFile(stale_temp, "half a bl"));
    }
    {
        // Without reconcile nothing is touched.
        auto store = OpenStore(false);
        ASSERT_NE(store, nullptr);
        EXPECT_FALSE(store->opening().reconciled);
        EXPECT_EQ(store->GetTotals().entries, 4u);
        EXPECT_TRUE(Exists(orphan));
        EXPECT_TRUE(Exists(stale_temp));
        // The swapped file is never served, though the index still has it.
        BlockRecord rec;
        EXPECT_TRUE(store->Lookup(13, "v1", &rec));
        EXPECT_EQ(store->OpenVerified(13, "v1", &rec), -1);
        EXPECT_EQ(store->OpenVerified(12, "v1", &rec), -1);
        EXPECT_EQ(store->OpenVerified(11, "v1", &rec), -1);
    }
    auto store = OpenStore(true);
    ASSERT_NE(store, nullptr);
    // what it did, for the log: 12, 13, the two orphans, the four strays
    // deleted; the entries of 11, 12, 13 dropped
    const BlockStore::Opening& opening = store->opening();
    EXPECT_TRUE(opening.reconciled);
    EXPECT_EQ(opening.items_removed, 8u);
    EXPECT_EQ(opening.entries_dropped, 3u);
    EXPECT_EQ(opening.entries_kept, 1u);
    EXPECT_EQ(opening.damage, "");
    BlockRecord rec;
    EXPECT_TRUE(store->Lookup(10, "v1", &rec));
    EXPECT_FALSE(store->Lookup(11, "v1", &rec));
    EXPECT_FALSE(store->Lookup(12, "v1", &rec));
    EXPECT_FALSE(store->Lookup(13, "v1", &rec));
    EXPECT_FALSE(store->Lookup(14, "v1", &rec));
    EXPECT_FALSE(Exists(orphan));
    EXPECT_FALSE(Exists(other_orphan));
    EXPECT_FALSE(Exists(options_.cache_dir + "/v/v2"));   // emptied dirs go
    EXPECT_FALSE(Exists(stale_temp));
    EXPECT_TRUE(Exists(TmpDir()));
    EXPECT_EQ(CountFiles(options_.cache_dir), 1u);
    EXPECT_TRUE(Exists(store->PathFor(10, "v1")));

    BlockStore::Totals totals = store->GetTotals();
    EXPECT_EQ(totals.entries, 1u);
    EXPECT_EQ(totals.bytes, Body(10, "1").size());
    std::vector<BlockStore::Entry> entries;
    ASSERT_TRUE(store->List(&entries, &error));
    ASSERT_EQ(entries.size(), 1u);
    EXPECT_EQ(entries[0].slot, 10u);
}

TEST_F(BlockStoreTest, ReconcileKeepsTempFilesOfLiveProcesses) {
    // A process that has exited: its pid is dead (until reused).
    pid_t dead = fork();
    ASSERT_GE(dead, 0);
    if (dead == 0) {
        _exit(0);
    }
    ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
    // A live process that is not this one: the parent of the test.
    pid_t live = getppid();

    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    std::string live_temp =
        TmpDir() + "/" + std::to_string(live) + "-00-1.tmp";
    std::string dead_temp =
        TmpDir() + "/" + std::to_string(dead) + "-00-1.tmp";
    std::string own_temp = store->NewTempPath();
    std::string odd = TmpDir() + "/junk";
    for (const std::string& path : {live_temp, dead_temp, own_temp, odd}) {
        ASSERT_TRUE(WriteFile(path, "partial"));
    }
    store.reset();
    store = OpenStore(true);
    ASSERT_NE(store, nullptr);
    EXPECT_TRUE(Exists(live_temp));
    EXPECT_FALSE(Exists(dead_temp));
    EXPECT_FALSE(Exists(own_temp));
    EXPECT_FALSE(Exists(odd));
}

TEST_F(BlockStoreTest, CorruptIndexStartsOverEmpty) {
    std::string error;
    {
        auto store = OpenStore();
        ASSERT_NE(store, nullptr);
        for (uint64_t slot = 1; slot <= 3; slot++) {
            ASSERT_TRUE(Put(*store, slot, "v", Body(slot, "1"), 0, &error));
        }
        ASSERT_TRUE(store->Remove({{1, "v"}}, &error));
    }
    std::string data = options_.state_dir + "/blocks/data.mdb";
    ASSERT_TRUE(Scribble(data, 64 * 1024));

    // A process that does not reconcile refuses the index.
    EXPECT_EQ(BlockStore::Open(options_, false, &error), nullptr);
    EXPECT_NE(error.find("MDB_INVALID"), std::string::npos) << error;

    auto store = OpenStore(true);
    ASSERT_NE(store, nullptr);
    // the log can say why the cache was emptied
    EXPECT_NE(store->opening().damage.find("MDB_INVALID"), std::string::npos)
        << store->opening().damage;
    EXPECT_TRUE(store->opening().reconciled);
    EXPECT_EQ(store->opening().entries_kept, 0u);
    BlockStore::Totals totals = store->GetTotals();
    EXPECT_EQ(totals.entries, 0u);
    EXPECT_EQ(totals.bytes, 0u);
    EXPECT_EQ(totals.evictions, 0u);
    std::vector<BlockStore::Entry> entries;
    ASSERT_TRUE(store->List(&entries, &error));
    EXPECT_TRUE(entries.empty());
    EXPECT_EQ(CountFiles(options_.cache_dir), 0u);
    EXPECT_TRUE(Exists(options_.state_dir + "/blocks.corrupt/data.mdb"));

    ASSERT_TRUE(Put(*store, 2, "v", Body(2, "1"), 0, &error)) << error;
    BlockRecord rec;
    EXPECT_TRUE(store->Lookup(2, "v", &rec));
    EXPECT_EQ(store->GetTotals().entries, 1u);
}

TEST_F(BlockStoreTest, IndexOfAnotherFormatStartsOver) {
    std::string error;
    {
        auto store = OpenStore();
        ASSERT_NE(store, nullptr);
        ASSERT_TRUE(Put(*store, 1, "v", Body(1, "1"), 0, &error));
    }
    // Rewrite the format version behind the store's back.
    MDB_env* env = nullptr;
    ASSERT_EQ(mdb_env_create(&env), 0);
    mdb_env_set_maxdbs(env, 4);
    std::string env_dir = options_.state_dir + "/blocks";
    ASSERT_EQ(mdb_env_open(env, env_dir.c_str(), 0, 0600), 0);
    MDB_txn* txn = nullptr;
    MDB_dbi meta = 0;
    ASSERT_EQ(mdb_txn_begin(env, nullptr, 0, &txn), 0);
    ASSERT_EQ(mdb_dbi_open(txn, "meta", 0, &meta), 0);
    unsigned char version[8] = {99};
    MDB_val key{6, const_cast<char*>("format")};
    MDB_val value{8, version};
    ASSERT_EQ(mdb_put(txn, meta, &key, &value, 0), 0);
    ASSERT_EQ(mdb_txn_commit(txn), 0);
    mdb_env_close(env);

    EXPECT_EQ(BlockStore::Open(options_, false, &error), nullptr);
    EXPECT_NE(error.find("format 99"), std::string::npos) << error;
    auto store = OpenStore(true);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->GetTotals().entries, 0u);
    EXPECT_EQ(CountFiles(options_.cache_dir), 0u);
}

TEST_F(BlockStoreTest, TwoProcessesCommitConcurrently) {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // The child never touches the parent's store; it opens its own.
        int code = 0;
        std::string error;
        auto child = BlockStore::Open(options_, false, &error);
        if (child == nullptr) {
            _exit(2);
        }
        for (uint64_t i = 0; i < 100 && code == 0; i++) {
            if (!Put(*child, 1000 + i, "child", Body(1000 + i, "1", i), 0,
                     &error)) {
                code = 3;
            }
        }
        child.reset();
        _exit(code);
    }
    std::string error;
    uint64_t bytes = 0;
    for (uint64_t i = 0; i < 100; i++) {
        std::string body = Body(2000 + i, "1", 2 * i);
        bytes += body.size();
        EXPECT_TRUE(Put(*store, 2000 + i, "parent", body, 0, &error))
            << error;
        bytes += Body(1000 + i, "1", i).size();
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);

    BlockStore::Totals totals = store->GetTotals();
    EXPECT_EQ(totals.entries, 200u);
    EXPECT_EQ(totals.bytes, bytes);
    std::vector<BlockStore::Entry> entries;
    ASSERT_TRUE(store->List(&entries, &error));
    ASSERT_EQ(entries.size(), 200u);
    EXPECT_EQ(entries.front().variant, "child");
    EXPECT_EQ(entries.front().slot, 1000u);
    EXPECT_EQ(entries.back().variant, "parent");
    EXPECT_EQ(entries.back().slot, 2099u);
    BlockRecord rec;
    int fd = store->OpenVerified(1050, "child", &rec);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(ReadFd(fd), Body(1050, "1", 50));
    close(fd);
    EXPECT_EQ(CountFiles(options_.cache_dir), 200u);
}

TEST_F(BlockStoreTest, TwoThreadsShareOneStore) {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    std::atomic<int> failures{0};
    auto work = [&](const std::string& variant, uint64_t base) {
        std::string error;
        for (uint64_t i = 0; i < 150; i++) {
            BlockRecord rec;
            std::vector<BlockStore::Entry> entries;
            if (!Put(*store, base + i, variant, Body(base + i, "1"), 0,
                     &error) ||
                !store->Lookup(base + i, variant, &rec) ||
                !store->UpdateScores({{base + i, variant, 2.0, 9}}, &error) ||
                (i % 25 == 0 && !store->List(&entries, &error))) {
                failures++;
            }
            if (i % 50 == 49 &&
                !store->Remove({{base + i - 1, variant}}, &error)) {
                failures++;
            }
            store->GetTotals();
        }
    };
    std::thread first(work, "t1", 0);
    std::thread second(work, "t2", 100000);
    first.join();
    second.join();
    EXPECT_EQ(failures.load(), 0);

    uint64_t bytes = 0;
    std::string error;
    std::vector<BlockStore::Entry> entries;
    ASSERT_TRUE(store->List(&entries, &error));
    for (const auto& entry : entries) {
        bytes += entry.rec.bytes;
        EXPECT_EQ(entry.rec.score, 2.0);
    }
    BlockStore::Totals totals = store->GetTotals();
    EXPECT_EQ(entries.size(), 294u);
    EXPECT_EQ(totals.entries, 294u);
    EXPECT_EQ(totals.bytes, bytes);
    EXPECT_EQ(totals.evictions, 6u);
    EXPECT_EQ(CountFiles(options_.cache_dir), 294u);
}

TEST_F(BlockStoreTest, TempPathsAreUnique) {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    std::vector<std::string> a;
    std::vector<std::string> b;
    std::thread first([&] {
        for (int i = 0; i < 1000; i++) a.push_back(store->NewTempPath());
    });
    std::thread second([&] {
        for (int i = 0; i < 1000; i++) b.push_back(store->NewTempPath());
    });
    first.join();
    second.join();
    std::set<std::string> all(a.begin(), a.end());
    all.insert(b.begin(), b.end());
    EXPECT_EQ(all.size(), 2000u);
    EXPECT_EQ(a[0].rfind(TmpDir() + "/" + std::to_string(getpid()) + "-", 0),
              0u);
}

TEST_F(BlockStoreTest, UpdateScoresAppliesToExistingEntries) {
    auto store = OpenStore();
    ASSERT_NE(store, nullptr);
    std::string error;
    ASSERT_TRUE(Put(*store, 1, "v", Body(1, "1"), 10, &error));
    ASSERT_TRUE(Put(*store, 2, "v", Body(2, "1"), 10, &error));
    BlockRecord before;
    ASSERT_TRUE(store->Lookup(1, "v", &before));
    BlockStore::Totals totals = store->GetTotals();

    ASSERT_TRUE(store->UpdateScores({{1, "v", 2.5, 1000},
                                     {3, "v", 9, 9},
                                     {1, "bad variant", 7, 7}},
                                    &error))
        << error;
    ASSERT_TRUE(store->UpdateScores({}, &error));
    BlockRecord rec;
    ASSERT_TRUE(store->Lookup(1, "v", &rec));
    EXPECT_EQ(rec.score, 2.5);
    EXPECT_EQ(rec.score_ms, 1000);
    EXPECT_EQ(rec.bytes, before.bytes);
    EXPECT_EQ(rec.id_offset, before.id_offset);
    EXPECT_EQ(rec.stored_ms, before.stored_ms);
    EXPECT_EQ(rec.file_id, before.file_id);
    ASSERT_TRUE(store->Lookup(2, "v", &rec));
    EXPECT_EQ(rec.score, 1.0);
    EXPECT_EQ(rec.score_ms, 10);
    EXPECT_FALSE(store->Lookup(3, "v", &rec));
    BlockStore::Totals after = store->GetTotals();
    EXPECT_EQ(after.entries, totals.entries);
    EXPECT_EQ(after.bytes, totals.bytes);

    // The verified open still matches: the file was not touched.
    int fd = store->OpenVerified(1, "v", &rec);
    EXPECT_GE(fd, 0);
    close(fd);
}

TEST_F(BlockStoreTest, MapFullIsAnErrorNotACrash) {
    options_.map_size = 64 * 1024;
    options_.sync_files = false;
    std::string error;
    uint64_t stored = 0;
    uint64_t bytes = 0;
    {
        auto store = OpenStore();
        ASSERT_NE(store, nullptr);
        bool full = false;
        std::string variant(64, 'x');
        for (uint64_t slot = 0; slot < 5000; slot++) {
            std::string temp;
            std::string body = Body(slot, "1");
            if (!Put(*store, slot, variant, body, 0, &error, &temp)) {
                full = true;
                EXPECT_FALSE(Exists(temp));
                EXPECT_FALSE(Exists(store->PathFor(slot, variant)));
                break;
            }
            stored++;
            bytes += body.size();
        }
        ASSERT_TRUE(full);
        EXPECT_NE(error.find("MDB_MAP_FULL"), std::string::npos) << error;
        EXPECT_GT(stored, 10u);

        BlockStore::Totals totals = store->GetTotals();
        EXPECT_EQ(totals.entries, stored);
        EXPECT_EQ(totals.bytes, bytes);
        std::vector<BlockStore::Entry> entries;
        ASSERT_TRUE(store->List(&entries, &error));
        EXPECT_EQ(entries.size(), stored);
        BlockRecord rec;
        EXPECT_TRUE(store->Lookup(0, variant, &rec));
        EXPECT_EQ(CountFiles(options_.cache_dir), stored);
        EXPECT_FALSE(Put(*store, 9999, variant, Body(1, "1"), 0, &error));
    }
    auto store = OpenStore(true);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->GetTotals().entries, stored);
}

TEST(BlockStoreOpen, FailsCleanly) {
    TempDir dir("block_store_test");
    ASSERT_FALSE(dir.path().empty());
    std::string error;
    BlockStoreOptions options;
    EXPECT_EQ(BlockStore::Open(options, true, &error), nullptr);
    EXPECT_NE(error, "");

    error.clear();
    options.cache_dir = dir.path() + "/cache";
    options.state_dir = dir.path() + "/a-file";
    ASSERT_TRUE(WriteFile(options.state_dir, "not a directory"));
    EXPECT_EQ(BlockStore::Open(options, true, &error), nullptr);
    EXPECT_NE(error.find("a-file"), std::string::npos) << error;
}

}  // namespace
}  // namespace solgate
