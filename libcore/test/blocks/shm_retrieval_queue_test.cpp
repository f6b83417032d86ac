// A plan's long-term queue in the zone, seen through the QueueStore: a
// block queued once for every key that asks, handed out, completed for
// its waiters, failed, and bounded by the plan's limit.
#include "blocks/shm_retrieval_queue.h"

#include <gtest/gtest.h>

#include "support/blocks_zone.h"

namespace solgate {
namespace {

constexpr char kV[] = "getBlock/json/full/r1/v0";
constexpr int64_t kNow = 1'000'000;
constexpr double kRate = 10;   // a hand-out every 100 ms

// A mapped queue and its store.
class Queue {
public:
    QueueStore& store() { return shm_; }
    RetrievalQueueShared* shared() { return mapped_.get(); }

private:
    testing::MappedQueue mapped_;
    ShmRetrievalQueue shm_{mapped_.get()};
};

TEST(ShmRetrievalQueue, OneBlockForEveryKeyThatAsks) {
    Queue q;
    QueueStore& store = q.store();
    QueueAnswer first = store.Request(7, 250, kV, kNow, 4, kRate, {}, KeyLimitFn());
    EXPECT_EQ(first.outcome, QueueOutcome::kQueued);
    EXPECT_EQ(first.position, 1u);
    EXPECT_EQ(first.retry_after_s, 1u);
    EXPECT_EQ(store.Request(9, 250, kV, kNow, 4, kRate, {}, KeyLimitFn()).outcome,
              QueueOutcome::kQueued);
    EXPECT_EQ(store.Stats(kNow).depth, 1u);
    EXPECT_EQ(GetQueueStats(q.shared(), kNow).depth, 1u);   // the zone's

    std::optional<Retrieval> r = store.Next(kNow, kRate, 1, 120000, {});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->slot, 250u);
    EXPECT_EQ(r->variant, kV);
    EXPECT_EQ(r->waiters, (std::vector<KeyId>{7, 9}));
    EXPECT_EQ(r->waiter_count, 2u);
    EXPECT_EQ(store.Stats(kNow).in_flight, 1u);
    EXPECT_EQ(store.Request(11, 250, kV, kNow, 4, kRate, {}, KeyLimitFn()).position, 1u)
        << "being retrieved";
    EXPECT_FALSE(store.Next(kNow + 200, kRate, 1, 120000, {}))
        << "one in flight at most";

    EXPECT_EQ(store.Complete(*r, true, kNow + 300),
              (std::vector<KeyId>{7, 9, 11}));
    QueueStats stats = store.Stats(kNow + 300);
    EXPECT_EQ(stats.depth, 0u);
    EXPECT_EQ(stats.in_flight, 0u);
    EXPECT_EQ(stats.retrieved, 1u);
    EXPECT_TRUE(store.Complete(*r, true, kNow + 400).empty()) << "once";
}

TEST(ShmRetrievalQueue, AFailedBlockIsQueuedAgainAsNew) {
    Queue q;
    QueueStore& store = q.store();
    store.Request(1, 300, kV, kNow, 4, kRate, {}, KeyLimitFn());
    std::optional<Retrieval> r = store.Next(kNow, kRate, 1, 120000, {});
    ASSERT_TRUE(r);
    EXPECT_EQ(store.Complete(*r, false, kNow + 10),
              (std::vector<KeyId>{1}));
    QueueStats stats = store.Stats(kNow + 10);
    EXPECT_EQ(stats.failed, 1u);
    EXPECT_EQ(stats.tombstones, 1u);
    EXPECT_EQ(store.Request(1, 300, kV, kNow + 20, 4, kRate, {}, KeyLimitFn()).outcome,
              QueueOutcome::kStorageFailed);
    EXPECT_EQ(store.Stats(kNow + 20).depth, 1u);
}

TEST(ShmRetrievalQueue, TheLimitBoundsNewBlocksOnly) {
    Queue q;
    QueueStore& store = q.store();
    EXPECT_EQ(store.Request(1, 10, kV, kNow, 2, kRate, {}, KeyLimitFn()).outcome,
              QueueOutcome::kQueued);
    EXPECT_EQ(store.Request(1, 11, kV, kNow, 2, kRate, {}, KeyLimitFn()).outcome,
              QueueOutcome::kQueued);
    EXPECT_EQ(store.Request(1, 12, kV, kNow, 2, kRate, {}, KeyLimitFn()).outcome,
              QueueOutcome::kQueueFull);
    EXPECT_EQ(store.Request(2, 11, kV, kNow, 2, kRate, {}, KeyLimitFn()).outcome,
              QueueOutcome::kQueued);
    EXPECT_EQ(store.Stats(kNow).queue_full, 1u);
    EXPECT_EQ(store.Request(kMaxKeys, 13, kV, kNow, 2, kRate, {}, KeyLimitFn()).outcome,
              QueueOutcome::kUnavailable)
        << "not a key id";
}

// Repeat counts the test sets.
uint32_t TwoRepeatsForKeyOne(KeyId key, void*) { return key == 1 ? 2 : 0; }

TEST(ShmRetrievalQueue, RepeatsWeighTheTurns) {
    Queue q;
    QueueStore& store = q.store();
    RepeatFn repeats{&TwoRepeatsForKeyOne, nullptr};
    for (uint64_t slot : {10, 11, 12}) {
        store.Request(1, slot, kV, kNow, 8, 1e6, repeats, KeyLimitFn());
        store.Request(2, slot + 100, kV, kNow, 8, 1e6, repeats, KeyLimitFn());
    }
    // Key 1 goes first (ties: the lower id), then waits three turns.
    std::vector<uint64_t> order;
    for (int i = 0; i < 4; i++) {
        std::optional<Retrieval> r =
            store.Next(kNow + i, 1e6, 1, 120000, repeats);
        ASSERT_TRUE(r);
        order.push_back(r->slot);
        store.Complete(*r, true, kNow + i);
    }
    EXPECT_EQ(order, (std::vector<uint64_t>{12, 112, 111, 110}));
}

}  // namespace
}  // namespace solgate
