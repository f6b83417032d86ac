// The keys in the zone's key table, seen through the KeyStore: an id per
// key, the GCRA bucket, the figures, and a full table failing open.
#include "blocks/shm_key_store.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace solgate {
namespace {

constexpr int64_t kSecond = 1000000;  // us

// A set-up table on the heap (the real one lives in the shared zone).
struct Keys {
    std::unique_ptr<KeyTable> table{new KeyTable()};
    ShmKeyStore shm{*table};
    KeyStore& store = shm;

    Keys() { InitKeyTable(table.get()); }
};

TEST(ShmKeyStore, AnIdPerKeyThatNamesItsEntry) {
    Keys keys;
    std::optional<KeyId> a = keys.store.FindOrAdd("alpha", 2, 1000);
    std::optional<KeyId> b = keys.store.FindOrAdd("beta", 1, 1500);
    ASSERT_TRUE(a);
    ASSERT_TRUE(b);
    EXPECT_NE(*a, *b);
    EXPECT_LT(*a, kMaxKeys);
    EXPECT_LT(*b, kMaxKeys);
    EXPECT_EQ(keys.store.FindOrAdd("alpha", 3, 900), a);   // seen again
    EXPECT_EQ(keys.store.Text(*a), "alpha");
    EXPECT_EQ(keys.store.Text(*b), "beta");
    EXPECT_EQ(keys.store.Text(kMaxKeys), "");
    EXPECT_EQ(std::string(keys.table->entries[*a].text), "alpha");

    std::vector<KeySnapshot> all = keys.store.Snapshot();
    ASSERT_EQ(all.size(), 2u);
    for (const KeySnapshot& s : all) {
        if (s.key == "alpha") {
            EXPECT_EQ(s.plan_index, 3u);       // the plan it came on last
            EXPECT_EQ(s.last_seen_ms, 1000);   // the highest time seen
        } else {
            EXPECT_EQ(s.key, "beta");
            EXPECT_EQ(s.plan_index, 1u);
        }
    }
}

TEST(ShmKeyStore, ABurstOfOneSecondThenTheRate) {
    Keys keys;
    KeyId id = *keys.store.FindOrAdd("two-a-second", 0, 0);
    int64_t t = 100 * kSecond;
    EXPECT_TRUE(keys.store.CheckRate(id, 2, t).allowed);
    EXPECT_TRUE(keys.store.CheckRate(id, 2, t).allowed);
    LimitVerdict refused = keys.store.CheckRate(id, 2, t);
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after_ms, 500);
    EXPECT_TRUE(keys.store.CheckRate(id, 2, t + kSecond / 2).allowed);
    KeyId free = *keys.store.FindOrAdd("unlimited", 0, 0);
    for (int i = 0; i < 100; i++) {
        ASSERT_TRUE(keys.store.CheckRate(free, 0, t).allowed);
    }
    for (const KeySnapshot& s : keys.store.Snapshot()) {
        if (s.key == "two-a-second") {
            EXPECT_EQ(s.requests, 4u);
            EXPECT_EQ(s.limited, 1u);
        } else {
            EXPECT_EQ(s.requests, 100u);
            EXPECT_EQ(s.limited, 0u);
        }
    }
}

TEST(ShmKeyStore, ServedPerSource) {
    Keys keys;
    KeyId id = *keys.store.FindOrAdd("k", 0, 0);
    keys.store.CountServed(id, kSourceCache);
    keys.store.CountServed(id, kSourceLongTerm);
    keys.store.CountServed(id, kSourceLongTerm);
    keys.store.CountServed(id, kSourceCount);   // ignored
    keys.store.CountServed(id, -1);                   // ignored
    std::vector<KeySnapshot> all = keys.store.Snapshot();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].served[kSourceCache], 1u);
    EXPECT_EQ(all[0].served[kSourceLedger], 0u);
    EXPECT_EQ(all[0].served[kSourceRegion], 0u);
    EXPECT_EQ(all[0].served[kSourceLongTerm], 2u);
}

TEST(ShmKeyStore, ALongKeyIsStoredCut) {
    Keys keys;
    std::string key(100, 'x');
    KeyId id = *keys.store.FindOrAdd(key, 0, 0);
    EXPECT_EQ(keys.store.Text(id), key.substr(0, kKeyTextCapacity - 1));
    std::vector<KeySnapshot> all = keys.store.Snapshot();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].key_length, 100u);
    EXPECT_EQ(all[0].key.size(), kKeyTextCapacity - 1);
}

TEST(ShmKeyStore, NoIdWhenTheTableIsFullAndSuchKeysAreNotLimited) {
    Keys keys;
    size_t i = 0;
    while (keys.store.FindOrAdd("key-" + std::to_string(i), 0, 0)) {
        ASSERT_LT(++i, 100 * kMaxKeys);
    }
    EXPECT_EQ(keys.table->table_full.load(), 1u);
    EXPECT_EQ(keys.store.TableFull(), 1u);
    EXPECT_LE(keys.store.Snapshot().size(), kMaxKeys);
    // An id no table entry holds fails open, like a key not admitted.
    EXPECT_TRUE(keys.store.CheckRate(kMaxKeys, 1e-6, 0).allowed);
    EXPECT_TRUE(keys.store.CheckRate(kMaxKeys, 1e-6, 0).allowed);
    keys.store.CountServed(kMaxKeys, kSourceCache);   // ignored
}

}  // namespace
}  // namespace solgate
