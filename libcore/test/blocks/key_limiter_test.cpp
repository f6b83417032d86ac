#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "blocks/key_limiter.h"

namespace solgate {
namespace {

constexpr int64_t kSecond = 1000000;  // us

// A zeroed table on the heap (the real one lives in shared memory).
struct Table {
    std::unique_ptr<KeyTable> owned{new KeyTable()};
    KeyTable* t = owned.get();

    Table() { InitKeyTable(t); }
};

KeySnapshot SnapshotOf(const KeyTable* t, const std::string& key) {
    for (KeySnapshot& s : SnapshotKeys(t)) {
        if (s.key == key) {
            return s;
        }
    }
    ADD_FAILURE() << "no snapshot for " << key;
    return {};
}

// Two different hashes whose probes start at the same entry.
std::pair<uint64_t, uint64_t> CollidingHashes() {
    uint64_t first = 12345;
    for (uint64_t h = first + 1;; h++) {
        if (KeyProbeStart(h) == KeyProbeStart(first)) {
            return {first, h};
        }
    }
}

TEST(KeyLimiter, HashAndInit) {
    EXPECT_EQ(KeyHash(""), 14695981039346656037ULL);
    EXPECT_EQ(KeyHash("a"), 0xaf63dc4c8601ec8cULL);  // FNV-1a 64 vector
    EXPECT_NE(KeyHash("key-1"), KeyHash("key-2"));
    EXPECT_LT(KeyProbeStart(~0ULL), KeyTable::kCapacity);

    Table table;
    EXPECT_EQ(table.t->magic, KeyTable::kMagic);
    EXPECT_EQ(table.t->layout, KeyTable::kLayout);
    EXPECT_TRUE(SnapshotKeys(table.t).empty());
}

TEST(KeyLimiter, FindOrAddReturnsTheSameEntry) {
    Table table;
    KeyEntry* a = FindOrAddKey(table.t, "alpha", 2, 1000);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(FindOrAddKey(table.t, "alpha", 3, 2000), a);
    KeyEntry* b = FindOrAddKey(table.t, "beta", 1, 1500);
    ASSERT_NE(b, nullptr);
    EXPECT_NE(a, b);
    EXPECT_EQ(a->hash.load(), KeyHash("alpha"));
    EXPECT_EQ(a->ready.load(), 1u);
    EXPECT_EQ(a->plan_index.load(), 3u);      // follows the latest plan
    EXPECT_EQ(a->last_seen_ms.load(), 2000);
    FindOrAddKey(table.t, "alpha", 3, 1800);  // never goes back
    EXPECT_EQ(a->last_seen_ms.load(), 2000);
    EXPECT_EQ(SnapshotKeys(table.t).size(), 2u);
    EXPECT_EQ(table.t->table_full.load(), 0u);
}

TEST(KeyLimiter, BurstThenRefusedWithRetryAfter) {
    Table table;
    KeyEntry* e = FindOrAddKey(table.t, "ten", 0, 0);
    int64_t now = 500 * kSecond;
    for (int i = 0; i < 10; i++) {
        LimitVerdict v = CheckRate(e, 10, now);
        EXPECT_TRUE(v.allowed) << i;
        EXPECT_EQ(v.retry_after_ms, 0);
    }
    LimitVerdict refused = CheckRate(e, 10, now);
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after_ms, 100);
    // Slightly later, the wait is shorter (rounded up to whole ms).
    refused = CheckRate(e, 10, now + 30500);
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after_ms, 70);
    EXPECT_FALSE(CheckRate(e, 10, now + 99999).allowed);
    EXPECT_TRUE(CheckRate(e, 10, now + 100000).allowed);
    EXPECT_FALSE(CheckRate(e, 10, now + 100000).allowed);
    EXPECT_EQ(e->requests.load(), 15u);
    EXPECT_EQ(e->limited.load(), 4u);
}

TEST(KeyLimiter, SteadyRates) {
    Table table;
    KeyEntry* steady = FindOrAddKey(table.t, "steady", 0, 0);
    KeyEntry* twice = FindOrAddKey(table.t, "twice", 0, 0);
    int64_t start = 7 * kSecond;
    int steady_allowed = 0;
    int twice_allowed = 0;
    for (int64_t i = 0; i < 60 * 20; i++) {
        int64_t now = start + i * (kSecond / 20);
        if (i % 2 == 0) {
            steady_allowed += CheckRate(steady, 10, now).allowed;
        }
        twice_allowed += CheckRate(twice, 10, now).allowed;
    }
    EXPECT_EQ(steady_allowed, 600);
    EXPECT_EQ(steady->limited.load(), 0u);
    // 20/s against 10/s: half refused; 600 at the rate, plus the 9 the
    // burst tolerance lets through early in the first second.
    EXPECT_EQ(twice_allowed, 609);
    EXPECT_EQ(twice->requests.load(), 1200u);
    EXPECT_EQ(twice->limited.load(), 1200u - twice_allowed);
}

TEST(KeyLimiter, UnlimitedAndNull) {
    Table table;
    KeyEntry* e = FindOrAddKey(table.t, "free", 0, 0);
    for (int i = 0; i < 100000; i++) {
        ASSERT_TRUE(CheckRate(e, 0, 1000).allowed);
    }
    EXPECT_TRUE(CheckRate(e, -5, 1000).allowed);
    EXPECT_EQ(e->requests.load(), 100001u);
    EXPECT_EQ(e->limited.load(), 0u);
    // The table-full case: no entry, let through.
    LimitVerdict v = CheckRate(nullptr, 1, 0);
    EXPECT_TRUE(v.allowed);
    EXPECT_EQ(v.retry_after_ms, 0);
    CountServed(nullptr, 0);
}

TEST(KeyLimiter, FractionalRate) {
    Table table;
    KeyEntry* e = FindOrAddKey(table.t, "slow", 0, 0);
    int64_t now = 10 * kSecond;
    EXPECT_TRUE(CheckRate(e, 0.5, now).allowed);
    LimitVerdict v = CheckRate(e, 0.5, now);  // burst is 1
    EXPECT_FALSE(v.allowed);
    EXPECT_EQ(v.retry_after_ms, 2000);
    EXPECT_FALSE(CheckRate(e, 0.5, now + 1999999).allowed);
    EXPECT_TRUE(CheckRate(e, 0.5, now + 2 * kSecond).allowed);
    int allowed = 0;
    for (int64_t s = 3; s <= 62; s++) {  // one a second for a minute
        allowed += CheckRate(e, 0.5, now + s * kSecond).allowed;
    }
    EXPECT_EQ(allowed, 30);
}

TEST(KeyLimiter, KeysAreIndependent) {
    Table table;
    KeyEntry* a = FindOrAddKey(table.t, "a", 0, 0);
    KeyEntry* b = FindOrAddKey(table.t, "b", 0, 0);
    for (int i = 0; i < 5; i++) {
        EXPECT_TRUE(CheckRate(a, 5, kSecond).allowed);
    }
    EXPECT_FALSE(CheckRate(a, 5, kSecond).allowed);
    for (int i = 0; i < 5; i++) {
        EXPECT_TRUE(CheckRate(b, 5, kSecond).allowed);
    }
    EXPECT_EQ(b->limited.load(), 0u);
    EXPECT_EQ(a->limited.load(), 1u);
}

TEST(KeyLimiter, CountServedAndSnapshot) {
    Table table;
    KeyEntry* e = FindOrAddKey(table.t, "counted", 4, 123);
    CountServed(e, kSourceCache);
    CountServed(e, kSourceCache);
    CountServed(e, kSourceLedger);
    CountServed(e, kSourceRegion);
    CountServed(e, kSourceLongTerm);
    CountServed(e, 4);   // out of range: ignored
    CountServed(e, -1);
    CheckRate(e, 1, 0);
    CheckRate(e, 1, 0);
    KeySnapshot s = SnapshotOf(table.t, "counted");
    EXPECT_EQ(s.plan_index, 4u);
    EXPECT_EQ(s.requests, 2u);
    EXPECT_EQ(s.limited, 1u);
    EXPECT_EQ(s.served[0], 2u);
    EXPECT_EQ(s.served[1], 1u);
    EXPECT_EQ(s.served[2], 1u);
    EXPECT_EQ(s.served[3], 1u);
    EXPECT_EQ(s.last_seen_ms, 123);
    EXPECT_EQ(s.key_length, 7u);
}

TEST(KeyLimiter, CollidingProbeStarts) {
    Table table;
    auto [h1, h2] = CollidingHashes();
    ASSERT_NE(h1, h2);
    KeyEntry* one = FindOrAddKeyWithHash(table.t, "one", h1, 0, 0);
    KeyEntry* two = FindOrAddKeyWithHash(table.t, "two", h2, 0, 0);
    ASSERT_NE(one, nullptr);
    ASSERT_NE(two, nullptr);
    size_t at = one - table.t->entries;
    EXPECT_EQ(at, KeyProbeStart(h1));
    // The next entry along, wrapping at the end.
    EXPECT_EQ(two, &table.t->entries[(at + 1) % KeyTable::kCapacity]);
    EXPECT_EQ(FindOrAddKeyWithHash(table.t, "one", h1, 0, 0), one);
    EXPECT_EQ(FindOrAddKeyWithHash(table.t, "two", h2, 0, 0), two);
    // Same full hash but another key: a separate entry, not a merge.
    KeyEntry* other = FindOrAddKeyWithHash(table.t, "three", h1, 0, 0);
    ASSERT_NE(other, nullptr);
    EXPECT_NE(other, one);
    EXPECT_NE(other, two);
    EXPECT_EQ(FindOrAddKeyWithHash(table.t, "three", h1, 0, 0), other);
    // A hash of 0 is the free mark: stored as 1.
    KeyEntry* zero = FindOrAddKeyWithHash(table.t, "zero", 0, 0, 0);
    ASSERT_NE(zero, nullptr);
    EXPECT_EQ(zero->hash.load(), 1u);
    EXPECT_EQ(SnapshotKeys(table.t).size(), 4u);
}

TEST(KeyLimiter, FullProbeWindowFailsOpen) {
    Table table;
    uint64_t base = 99;
    std::vector<uint64_t> hashes{base};
    for (uint64_t h = base + 1; hashes.size() < KeyTable::kMaxProbe + 2;
         h++) {
        if (KeyProbeStart(h) == KeyProbeStart(base)) {
            hashes.push_back(h);
        }
    }
    for (size_t i = 0; i < KeyTable::kMaxProbe; i++) {
        std::string key = "k" + std::to_string(i);
        ASSERT_NE(FindOrAddKeyWithHash(table.t, key, hashes[i], 0, 0),
                  nullptr);
    }
    EXPECT_EQ(table.t->table_full.load(), 0u);
    EXPECT_EQ(FindOrAddKeyWithHash(table.t, "late", hashes[64], 0, 0),
              nullptr);
    EXPECT_EQ(FindOrAddKeyWithHash(table.t, "later", hashes[65], 0, 0),
              nullptr);
    EXPECT_EQ(table.t->table_full.load(), 2u);
    // Keys already in stay reachable.
    EXPECT_NE(FindOrAddKeyWithHash(table.t, "k63", hashes[63], 0, 0),
              nullptr);
}

TEST(KeyLimiter, WholeTableFull) {
    Table table;
    size_t added = 0;
    for (size_t i = 0; i < 3 * KeyTable::kCapacity; i++) {
        added += FindOrAddKey(table.t, "key-" + std::to_string(i), 0, 0) !=
                 nullptr;
    }
    // Open addressing fills nearly every entry before windows run out.
    EXPECT_GE(added, KeyTable::kCapacity * 95 / 100);
    EXPECT_LE(added, KeyTable::kCapacity);
    EXPECT_EQ(table.t->table_full.load(), 3 * KeyTable::kCapacity - added);
    EXPECT_EQ(SnapshotKeys(table.t).size(), added);
    // Fill the rest with hashes aimed at the free entries, then nothing
    // new gets in.
    for (size_t i = 0; added < KeyTable::kCapacity; i++) {
        added += FindOrAddKeyWithHash(table.t, "fill-" + std::to_string(i),
                                      i + 1, 0, 0) != nullptr;
        ASSERT_LT(i, 100u * KeyTable::kCapacity);
    }
    uint64_t full = table.t->table_full.load();
    EXPECT_EQ(FindOrAddKey(table.t, "one-too-many", 0, 0), nullptr);
    EXPECT_EQ(table.t->table_full.load(), full + 1);
    EXPECT_NE(FindOrAddKey(table.t, "key-0", 0, 0), nullptr);
}

TEST(KeyLimiter, LongKeysCutButDistinct) {
    Table table;
    std::string base(63, 'x');
    std::string long1 = base + "-first-suffix";
    std::string long2 = base + "-other-suffix";
    KeyEntry* e63 = FindOrAddKey(table.t, base, 0, 0);
    KeyEntry* e1 = FindOrAddKey(table.t, long1, 0, 0);
    KeyEntry* e2 = FindOrAddKey(table.t, long2, 0, 0);
    ASSERT_NE(e63, nullptr);
    ASSERT_NE(e1, nullptr);
    ASSERT_NE(e2, nullptr);
    EXPECT_NE(e1, e2);
    EXPECT_NE(e1, e63);
    EXPECT_EQ(FindOrAddKey(table.t, long1, 0, 0), e1);
    EXPECT_EQ(FindOrAddKey(table.t, long2, 0, 0), e2);
    EXPECT_EQ(e1->text[63], '\0');
    std::vector<KeySnapshot> all = SnapshotKeys(table.t);
    ASSERT_EQ(all.size(), 3u);
    for (const KeySnapshot& s : all) {
        EXPECT_EQ(s.key, base);
    }
    std::set<uint32_t> lengths;
    for (const KeySnapshot& s : all) {
        lengths.insert(s.key_length);
    }
    EXPECT_EQ(lengths, (std::set<uint32_t>{63, 76}));
    // Same cut text, same length, same hash forced: one entry.
    EXPECT_EQ(FindOrAddKeyWithHash(table.t, base + "-first-suffiX",
                                   KeyHash(long1), 0, 0),
              e1);
}

TEST(KeyLimiter, ConcurrentCallersExact) {
    Table table;
    KeyEntry* e = FindOrAddKey(table.t, "hot", 0, 0);
    constexpr int kThreads = 4;
    constexpr int kCalls = 10000;
    std::vector<int> allowed(kThreads, 0);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; i++) {
        threads.emplace_back([&, i] {
            KeyEntry* mine = FindOrAddKey(table.t, "hot", 0, 0);
            for (int n = 0; n < kCalls; n++) {
                allowed[i] += CheckRate(mine, 1000, 42 * kSecond).allowed;
            }
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    int total = 0;
    for (int n : allowed) {
        total += n;
    }
    EXPECT_EQ(total, 1000);
    EXPECT_EQ(e->requests.load(), uint64_t{kThreads * kCalls});
    EXPECT_EQ(e->limited.load(), uint64_t{kThreads * kCalls - 1000});
}

TEST(KeyLimiter, ConcurrentAddsOneEntryPerKey) {
    Table table;
    constexpr int kThreads = 4;
    std::vector<std::vector<KeyEntry*>> found(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; i++) {
        threads.emplace_back([&, i] {
            for (int k = 0; k < 1000; k++) {
                found[i].push_back(FindOrAddKey(
                    table.t, "shared-" + std::to_string(k), 0, k));
            }
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    for (int i = 1; i < kThreads; i++) {
        EXPECT_EQ(found[i], found[0]);
    }
    EXPECT_EQ(SnapshotKeys(table.t).size(), 1000u);
}

TEST(KeyLimiter, SharedAcrossForkedProcesses) {
    void* mem = mmap(nullptr, sizeof(KeyTable), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mem, MAP_FAILED);
    auto* t = static_cast<KeyTable*>(mem);
    InitKeyTable(t);

    constexpr int kKeys = 300;
    pid_t child = fork();
    ASSERT_GE(child, 0);
    bool in_child = child == 0;
    const char* who = in_child ? "child-" : "parent-";
    bool ok = true;
    for (int k = 0; k < kKeys; k++) {
        KeyEntry* own = FindOrAddKey(t, who + std::to_string(k), 1, k);
        KeyEntry* both = FindOrAddKey(t, "both-" + std::to_string(k), 2, k);
        ok = ok && own != nullptr && both != nullptr;
        if (both != nullptr) {
            CheckRate(both, 100, kSecond);  // 2 calls in all: both allowed
            CountServed(both, kSourceRegion);
        }
    }
    if (in_child) {
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_TRUE(ok);

    std::vector<KeySnapshot> all = SnapshotKeys(t);
    EXPECT_EQ(all.size(), 3u * kKeys);
    std::set<std::string> names;
    for (const KeySnapshot& s : all) {
        names.insert(s.key);
        if (s.key.rfind("both-", 0) == 0) {
            EXPECT_EQ(s.requests, 2u) << s.key;
            EXPECT_EQ(s.limited, 0u) << s.key;
            EXPECT_EQ(s.served[kSourceRegion], 2u) << s.key;
        }
    }
    EXPECT_EQ(names.size(), 3u * kKeys);
    EXPECT_EQ(names.count("child-0"), 1u);
    EXPECT_EQ(names.count("child-299"), 1u);
    EXPECT_EQ(names.count("parent-299"), 1u);
    EXPECT_EQ(t->table_full.load(), 0u);
    munmap(mem, sizeof(KeyTable));
}

}  // namespace
}  // namespace solgate
