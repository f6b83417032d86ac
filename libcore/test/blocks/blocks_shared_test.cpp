// The shared zone of a solgate_blocks: laid out for the configuration's
// queues, set up when fresh or laid out for another configuration, kept
// across a reload otherwise.
#include "blocks/blocks_shared.h"

#include <gtest/gtest.h>

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
    SharedBlocks zone(conf);
    EXPECT_FALSE(zone.bound());
    EXPECT_EQ(zone.queue(2), nullptr);
    std::string error;
    ASSERT_TRUE(zone.Bind(memory.memory(), true, &error)) << error;
    EXPECT_TRUE(zone.bound());
    EXPECT_EQ(&zone.shared(), memory.shared());
    EXPECT_EQ(zone.shared().magic, BlocksShared::kMagic);
    EXPECT_EQ(zone.shared().queues, 2u);
    for (size_t p = 0; p < conf.plans().size(); p++) {
        EXPECT_EQ(zone.queue(p) != nullptr, conf.HasQueue(p))
            << conf.plans()[p].name;
    }
    EXPECT_EQ(zone.queue(2), QueueAt(memory.memory(), 0));
    EXPECT_EQ(zone.queue(3), QueueAt(memory.memory(), 1));
    EXPECT_EQ(zone.queue(conf.plans().size()), nullptr);
}

TEST(BlocksShared, AReloadKeepsTheCountersUnlessTheLayoutChanged) {
    BlockServiceConf conf = WithStorage();
    testing::BlocksZone memory(conf);
    std::string error;
    {
        SharedBlocks zone(conf);
        ASSERT_TRUE(zone.Bind(memory.memory(), true, &error)) << error;
        zone.shared().tier_answers.store(7);
    }
    SharedBlocks again(conf);
    ASSERT_TRUE(again.Bind(memory.memory(), false, &error)) << error;
    EXPECT_EQ(again.shared().tier_answers.load(), 7u);

    // Laid out for other queues (a plan without storage now): set afresh.
    BlockServiceConf none = testing::Built(Base());
    SharedBlocks other(none);
    ASSERT_TRUE(other.Bind(memory.memory(), false, &error)) << error;
    EXPECT_EQ(other.shared().tier_answers.load(), 0u);
    EXPECT_EQ(other.shared().queues, 0u);

    // And `fresh` always starts over.
    other.shared().tier_answers.store(3);
    SharedBlocks fresh(none);
    ASSERT_TRUE(fresh.Bind(memory.memory(), true, &error)) << error;
    EXPECT_EQ(fresh.shared().tier_answers.load(), 0u);
}

TEST(BlocksShared, KeyTextOfATableIndex) {
    BlockServiceConf conf = testing::Built(Base());
    testing::BlocksZone memory(conf);
    SharedBlocks zone(conf);
    EXPECT_EQ(zone.KeyText(0), "");   // not bound
    std::string error;
    ASSERT_TRUE(zone.Bind(memory.memory(), true, &error)) << error;
    KeyEntry* e = FindOrAddKey(&zone.shared().keys, "the-key", 0, 1);
    ASSERT_NE(e, nullptr);
    auto index = static_cast<uint32_t>(e - zone.shared().keys.entries);
    EXPECT_EQ(zone.KeyText(index), "the-key");
    EXPECT_EQ(zone.KeyText((index + 1) % KeyTable::kCapacity), "");
    EXPECT_EQ(zone.KeyText(KeyTable::kCapacity), "");
}

}  // namespace
}  // namespace solgate
