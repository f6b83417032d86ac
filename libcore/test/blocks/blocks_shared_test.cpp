// The shared zone of a solgate_blocks: laid out for the configuration's
// queues, set up when fresh or laid out for another configuration, kept
// across a reload otherwise.
#include "blocks/blocks_shared.h"

#include <gtest/gtest.h>

#include "blocks/lmdb_allowances.h"
#include "support/blocks_zone.h"

namespace solgate {
namespace {

using testing::Accept;

BlockConfBuilder Base() {
    BlockConfBuilder b;
    Accept(b.Region("us"));
    Accept(b.Cache("/unused/cache"));
    Accept(b.State("/unused/state"));
    return b;
}

BlockServiceConf WithStorage() {
    BlockConfBuilder b = Base();
    Accept(b.LongTermStorage("http://lts/"));
    return testing::Built(b);
}

TEST(BlocksShared, ARoomPerArchivePlanWithStorage) {
    BlockServiceConf none = testing::Built(Base());
    BlockServiceConf two = WithStorage();   // blade_runner, nexus
    EXPECT_GE(BlocksSharedSize(two) - BlocksSharedSize(none),
              2 * sizeof(RetrievalQueueShared));
    EXPECT_GE(BlocksSharedSize(none), sizeof(BlocksShared));
    // Queues are 64-byte aligned, one after the other, after the header.
    auto* zone = reinterpret_cast<void*>(0x10000);
    auto q0 = reinterpret_cast<uintptr_t>(QueueAt(zone, 0));
    auto q1 = reinterpret_cast<uintptr_t>(QueueAt(zone, 1));
    EXPECT_EQ(q0 % 64, 0u);
    EXPECT_GE(q0 - 0x10000, sizeof(BlocksShared));
    EXPECT_GE(q1 - q0, sizeof(RetrievalQueueShared));
    EXPECT_EQ(q1 % 64, 0u);
}

TEST(BlocksShared, BindMapsTheQueuesOfArchivePlans) {
    BlockServiceConf conf = WithStorage();
    testing::BlocksZone memory(conf);
    LmdbAllowances ledger;
    SharedBlocks zone(conf, ledger);
    EXPECT_FALSE(zone.bound());
    EXPECT_EQ(zone.queue(2), nullptr);
    EXPECT_EQ(&zone.allowances(), &ledger);   // not in the zone
    std::string error;
    ASSERT_TRUE(zone.Bind(memory.memory(), true, &error)) << error;
    EXPECT_TRUE(zone.bound());
    EXPECT_EQ(&zone.counters(), &memory.shared()->counters);
    EXPECT_EQ(memory.shared()->magic, BlocksShared::kMagic);
    EXPECT_EQ(memory.shared()->queues, 2u);
    for (size_t p = 0; p < conf.plans().size(); p++) {
        EXPECT_EQ(zone.queue(p) != nullptr, conf.HasQueue(p))
            << conf.plans()[p].name;
    }
    // Each queue store is over its own queue in the zone.
    BlockCall call;
    call.key = zone.keys().FindOrAdd("k", 2, 1);
    ASSERT_TRUE(call.key);
    EXPECT_EQ(zone.queue(2)->Request(*call.key, 10, "v", 1000, 4, 1, {}, KeyLimitFn())
                  .outcome,
              QueueOutcome::kQueued);
    zone.queue(3)->Request(*call.key, 11, "v", 1000, 4, 1, {}, KeyLimitFn());
    zone.queue(3)->Request(*call.key, 12, "v", 1000, 4, 1, {}, KeyLimitFn());
    EXPECT_EQ(GetQueueStats(QueueAt(memory.memory(), 0), 1000).depth, 1u);
    EXPECT_EQ(GetQueueStats(QueueAt(memory.memory(), 1), 1000).depth, 2u);
    EXPECT_EQ(zone.queue(3)->Stats(1000).depth, 2u);
    EXPECT_EQ(zone.queue(conf.plans().size()), nullptr);
}

TEST(BlocksShared, AReloadKeepsTheCountersUnlessTheLayoutChanged) {
    BlockServiceConf conf = WithStorage();
    testing::BlocksZone memory(conf);
    std::string error;
    LmdbAllowances ledger;
    {
        SharedBlocks zone(conf, ledger);
        ASSERT_TRUE(zone.Bind(memory.memory(), true, &error)) << error;
        zone.counters().tier_answers.store(7);
    }
    SharedBlocks again(conf, ledger);
    ASSERT_TRUE(again.Bind(memory.memory(), false, &error)) << error;
    EXPECT_EQ(again.counters().tier_answers.load(), 7u);

    // Laid out for other queues (a plan without storage now): set afresh.
    BlockServiceConf none = testing::Built(Base());
    SharedBlocks other(none, ledger);
    ASSERT_TRUE(other.Bind(memory.memory(), false, &error)) << error;
    EXPECT_EQ(other.counters().tier_answers.load(), 0u);
    EXPECT_EQ(static_cast<BlocksShared*>(memory.memory())->queues, 0u);

    // And `fresh` always starts over.
    other.counters().tier_answers.store(3);
    SharedBlocks fresh(none, ledger);
    ASSERT_TRUE(fresh.Bind(memory.memory(), true, &error)) << error;
    EXPECT_EQ(fresh.counters().tier_answers.load(), 0u);
}

TEST(BlocksShared, TheKeysAndLeasesAreTheZones) {
    BlockServiceConf conf = testing::Built(Base());
    testing::BlocksZone memory(conf);
    LmdbAllowances ledger;
    SharedBlocks zone(conf, ledger);
    EXPECT_FALSE(zone.bound());   // no key store to ask yet
    std::string error;
    ASSERT_TRUE(zone.Bind(memory.memory(), true, &error)) << error;
    std::optional<KeyId> id = zone.keys().FindOrAdd("the-key", 0, 1);
    ASSERT_TRUE(id);
    KeyEntry* e = FindOrAddKey(&memory.shared()->keys, "the-key", 0, 1);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(*id, static_cast<KeyId>(e - memory.shared()->keys.entries));
    EXPECT_EQ(zone.keys().Text(*id), "the-key");
    EXPECT_EQ(zone.keys().Text((*id + 1) % KeyTable::kCapacity), "");
    EXPECT_EQ(zone.keys().Text(KeyTable::kCapacity), "");

    ASSERT_TRUE(zone.leases().ClaimLease(kCopyLease, 7, 100, 2000));
    EXPECT_EQ(Lease::Unpack(memory.shared()->copy_lease.load()).pid, 7u);
    ASSERT_TRUE(zone.leases().ClaimLease(RetrievalLease(3), 8, 100, 2000));
    EXPECT_EQ(Lease::Unpack(memory.shared()->retrieval_lease[3].load()).pid,
              8u);
}

}  // namespace
}  // namespace solgate
