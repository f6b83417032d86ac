#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "blocks/retrieval_queue.h"
#include "support/blocks_zone.h"
#include "support/workloads.h"

namespace solgate {
namespace {

constexpr char kVariant[] = "getBlock/json/full/r1/v0";
constexpr uint32_t kLimit = 16384;
constexpr double kFast = 1e6;  // retrievals per second: never the bound

using Queue = testing::MappedQueue;

// Repeat counts from a table in the test.
uint32_t FromMap(uint32_t key, void* user) {
    auto* m = static_cast<std::map<uint32_t, uint32_t>*>(user);
    auto it = m->find(key);
    return it == m->end() ? 0 : it->second;
}

RepeatFn Repeats(std::map<uint32_t, uint32_t>* m) {
    RepeatFn r;
    r.fn = FromMap;
    r.user = m;
    return r;
}

QueueAnswer Ask(RetrievalQueueShared* q, uint32_t key, uint64_t slot,
                int64_t now_ms, const RepeatFn& r = RepeatFn()) {
    return RequestBlock(q, key, slot, kVariant, now_ms, kLimit, 1.0, r);
}

// Hands out and completes `n` retrievals, 1 ms apart from now_ms.
std::vector<Retrieval> Drain(RetrievalQueueShared* q, size_t n,
                             int64_t now_ms,
                             const RepeatFn& r = RepeatFn()) {
    std::vector<Retrieval> out;
    for (size_t i = 0; i < n; ++i) {
        auto got = NextRetrieval(q, now_ms + int64_t(i), kFast, 1, 120000, r);
        if (!got) break;
        CompleteRetrieval(q, got->index, got->generation, true,
                          now_ms + int64_t(i));
        out.push_back(*got);
    }
    return out;
}

std::vector<uint64_t> Slots(const std::vector<Retrieval>& rs) {
    std::vector<uint64_t> out;
    for (const Retrieval& r : rs) out.push_back(r.slot);
    return out;
}

TEST(RetrievalQueue, TurnsAlternateNewestFirst) {
    Queue queue;
    auto* q = queue.get();
    for (uint64_t s : {10, 11, 12}) Ask(q, 1, s, 0);
    for (uint64_t s : {20, 21, 22}) Ask(q, 2, s, 0);
    using V = std::vector<uint64_t>;
    EXPECT_EQ(Slots(Drain(q, 10, 1000)), (V{12, 22, 11, 21, 10, 20}));
    EXPECT_EQ(GetQueueStats(q, 2000).retrieved, 6u);
}

TEST(RetrievalQueue, ALetGoRetrievalIsNeitherRetrievedNorFailed) {
    Queue queue;
    RetrievalQueueShared* q = queue.get();
    Ask(q, 1, 500, 0);
    auto r = NextRetrieval(q, 1, kFast, 1, 0, RepeatFn());
    ASSERT_TRUE(r);
    EXPECT_TRUE(LetGoRetrieval(q, r->index, r->generation, 2));
    QueueStats s = GetQueueStats(q, 2);
    EXPECT_EQ(s.retrieved, 0u);
    EXPECT_EQ(s.failed, 0u);
    EXPECT_EQ(s.in_flight + s.depth + s.tombstones, 0u);
    EXPECT_FALSE(LetGoRetrieval(q, r->index, r->generation, 3))
        << "gone already";
    // asked again, it is a new block (no tombstone to report)
    EXPECT_EQ(Ask(q, 1, 500, 4).outcome, QueueOutcome::kQueued);
}

TEST(RetrievalQueue, MostWaitedForFirstOnAKeysTurn) {
    Queue queue;
    auto* q = queue.get();
    for (uint64_t s : {10, 11, 12, 13}) Ask(q, 1, s, 0);
    Ask(q, 2, 11, 0);
    Ask(q, 3, 11, 0);
    Ask(q, 2, 10, 0);
    Ask(q, 4, 30, 0);
    // Key 1: 11 (3 waiters).  Key 2: 10 (2).  Key 3: nothing left, no
    // turn.  Key 4: 30.  Key 1: 13, 12 (newest first).
    using V = std::vector<uint64_t>;
    EXPECT_EQ(Slots(Drain(q, 10, 1000)), (V{11, 10, 30, 13, 12}));
}

TEST(RetrievalQueue, RepeatsFromOneKeyDoNotAddWaiters) {
    Queue queue;
    auto* q = queue.get();
    for (int i = 0; i < 5; ++i) Ask(q, 1, 20, i);
    Ask(q, 1, 10, 0);
    Ask(q, 2, 10, 0);
    auto rs = Drain(q, 10, 1000);
    ASSERT_EQ(rs.size(), 2u);
    EXPECT_EQ(rs[0].slot, 10u);  // two keys beat one key asking 5 times
    EXPECT_EQ(rs[0].waiter_count, 2u);
    EXPECT_EQ(rs[0].waiters, (std::vector<uint32_t>{1, 2}));
    EXPECT_EQ(rs[1].slot, 20u);
    EXPECT_EQ(rs[1].waiter_count, 1u);
}

TEST(RetrievalQueue, ManyWaitersCountedDistinctPastStored) {
    Queue queue;
    auto* q = queue.get();
    for (uint32_t k = 0; k < 40; ++k) {
        Ask(q, k, 5, 0);
        Ask(q, k, 5, 1);  // repeats
    }
    auto rs = Drain(q, 1, 1000);
    ASSERT_EQ(rs.size(), 1u);
    EXPECT_EQ(rs[0].waiter_count, 40u);
    EXPECT_EQ(rs[0].waiters.size(), kMaxWaiters);
}

// Turns of key 1 (repeat 0) and key 2 (repeat `r2`) over 300 retrievals.
std::pair<int, int> CountTurns(uint32_t r2) {
    Queue queue;
    auto* q = queue.get();
    std::map<uint32_t, uint32_t> rep{{2, r2}};
    RepeatFn fn = Repeats(&rep);
    for (uint64_t s = 0; s < 400; ++s) {
        Ask(q, 1, 1000 + s, 0, fn);
        Ask(q, 2, 5000 + s, 0, fn);
    }
    int one = 0, two = 0;
    for (const Retrieval& r : Drain(q, 300, 1000, fn)) {
        (r.waiters[0] == 1 ? one : two) += 1;
    }
    return {one, two};
}

TEST(RetrievalQueue, RepeatCountReducesTurns) {
    auto [a1, b1] = CountTurns(1);
    EXPECT_EQ(a1 + b1, 300);
    EXPECT_NEAR(b1, 100, 2);  // half the turns of key 1
    auto [a3, b3] = CountTurns(3);
    EXPECT_NEAR(b3, 60, 2);   // a quarter of key 1's
    EXPECT_NEAR(a3, 240, 2);
    auto [a0, b0] = CountTurns(0);
    EXPECT_EQ(a0, 150);
    EXPECT_EQ(b0, 150);
}

TEST(RetrievalQueue, IdleKeyCannotBankTurns) {
    Queue queue;
    auto* q = queue.get();
    for (uint64_t s = 0; s < 100; ++s) Ask(q, 1, 1000 + s, 0);
    EXPECT_EQ(Drain(q, 50, 1000).size(), 50u);  // key 2 idle meanwhile
    for (uint64_t s = 0; s < 50; ++s) Ask(q, 2, 5000 + s, 2000);
    int two = 0;
    for (const Retrieval& r : Drain(q, 20, 3000)) {
        two += r.waiters[0] == 2;
    }
    EXPECT_GE(two, 9);
    EXPECT_LE(two, 11);  // takes turns with key 1, not 20 in a row
}

TEST(RetrievalQueue, SharedBlockRetrievedOnceForAllWaiters) {
    Queue queue;
    auto* q = queue.get();
    for (uint32_t k : {7, 3, 9}) {
        EXPECT_EQ(Ask(q, k, 77, 0).outcome, QueueOutcome::kQueued);
    }
    auto r = NextRetrieval(q, 10, kFast, 8, 120000, RepeatFn());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->slot, 77u);
    EXPECT_EQ(r->variant, kVariant);
    EXPECT_FALSE(NextRetrieval(q, 20, kFast, 8, 120000, RepeatFn()));
    // A request while it is retrieved: position 1, added to the waiters.
    QueueAnswer a = Ask(q, 5, 77, 30);
    EXPECT_EQ(a.outcome, QueueOutcome::kQueued);
    EXPECT_EQ(a.position, 1u);
    EXPECT_EQ(CompleteRetrieval(q, r->index, r->generation, true, 40),
              (std::vector<uint32_t>{7, 3, 9, 5}));
    QueueStats st = GetQueueStats(q, 50);
    EXPECT_EQ(st.retrieved, 1u);
    EXPECT_EQ(st.depth + st.in_flight + st.tombstones, 0u);
    // Completing twice does nothing.
    EXPECT_TRUE(
        CompleteRetrieval(q, r->index, r->generation, true, 60).empty());
}

TEST(RetrievalQueue, DroppedAfter150SecondsWithoutRequest) {
    Queue queue;
    auto* q = queue.get();
    EXPECT_EQ(Ask(q, 1, 50, 0).outcome, QueueOutcome::kQueued);
    EXPECT_EQ(GetQueueStats(q, 149000).depth, 1u);
    EXPECT_EQ(GetQueueStats(q, 150000).depth, 1u);
    ExpireIdle(q, 151000);
    QueueStats st = GetQueueStats(q, 151000);
    EXPECT_EQ(st.depth, 0u);
    EXPECT_EQ(st.tombstones, 1u);
    EXPECT_EQ(st.dropped, 1u);
    QueueAnswer a = Ask(q, 2, 50, 151000);
    EXPECT_EQ(a.outcome, QueueOutcome::kDropped);
    EXPECT_EQ(a.position, 1u);
    EXPECT_EQ(Ask(q, 2, 50, 152000).outcome, QueueOutcome::kQueued);
    // Requests keep it: 150 s after each one, not after the first.
    EXPECT_EQ(Ask(q, 2, 50, 290000).outcome, QueueOutcome::kQueued);
    EXPECT_EQ(GetQueueStats(q, 440000).depth, 1u);
    auto r = Drain(q, 5, 440000);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].waiters, (std::vector<uint32_t>{2}));  // fresh entry
}

TEST(RetrievalQueue, TombstonesFreedAfterTenMinutes) {
    Queue queue;
    auto* q = queue.get();
    Ask(q, 1, 50, 0);
    Ask(q, 1, 60, 0);
    // Dropped at 150 s; still told at 150 + 599 s, forgotten after 600.
    EXPECT_EQ(Ask(q, 1, 50, 749000).outcome, QueueOutcome::kDropped);
    EXPECT_EQ(Ask(q, 1, 60, 751000).outcome, QueueOutcome::kQueued);
    EXPECT_EQ(GetQueueStats(q, 751000).tombstones, 0u);
}

TEST(RetrievalQueue, FailedRetrievalToldThenQueuedAgain) {
    Queue queue;
    auto* q = queue.get();
    Ask(q, 1, 50, 0);
    Ask(q, 2, 50, 0);
    auto r = NextRetrieval(q, 10, kFast, 1, 120000, RepeatFn());
    ASSERT_TRUE(r);
    EXPECT_EQ(CompleteRetrieval(q, r->index, r->generation, false, 20),
              (std::vector<uint32_t>{1, 2}));
    QueueStats st = GetQueueStats(q, 30);
    EXPECT_EQ(st.failed, 1u);
    EXPECT_EQ(st.depth, 0u);
    EXPECT_FALSE(NextRetrieval(q, 40, kFast, 1, 120000, RepeatFn()));
    QueueAnswer a = Ask(q, 2, 50, 50);
    EXPECT_EQ(a.outcome, QueueOutcome::kStorageFailed);
    EXPECT_EQ(a.position, 1u);
    EXPECT_EQ(Ask(q, 1, 50, 60).outcome, QueueOutcome::kQueued);
    auto again = Drain(q, 5, 100);
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0].waiters, (std::vector<uint32_t>{2, 1}));
}

TEST(RetrievalQueue, QueueFullAtTheLimit) {
    Queue queue;
    auto* q = queue.get();
    auto ask = [&](uint32_t key, uint64_t slot, int64_t now) {
        return RequestBlock(q, key, slot, kVariant, now, 3, 1.0,
                            RepeatFn());
    };
    for (uint64_t s : {1, 2, 3}) {
        EXPECT_EQ(ask(1, s, 0).outcome, QueueOutcome::kQueued);
    }
    QueueAnswer full = ask(2, 4, 0);
    EXPECT_EQ(full.outcome, QueueOutcome::kQueueFull);
    EXPECT_EQ(full.position, 0u);
    EXPECT_GE(full.retry_after_s, 1u);
    EXPECT_EQ(ask(2, 3, 0).outcome, QueueOutcome::kQueued);  // known
    // A block being retrieved still counts against the limit.
    auto r = NextRetrieval(q, 1, kFast, 1, 120000, RepeatFn());
    ASSERT_TRUE(r);
    EXPECT_EQ(ask(2, 4, 2).outcome, QueueOutcome::kQueueFull);
    CompleteRetrieval(q, r->index, r->generation, true, 3);
    EXPECT_EQ(ask(2, 4, 4).outcome, QueueOutcome::kQueued);
    EXPECT_EQ(GetQueueStats(q, 5).queue_full, 2u);
    // Same variant text decides identity.
    EXPECT_EQ(RequestBlock(q, 1, 4, "getBlock/json/full/r1/v1", 6, 3, 1.0,
                           RepeatFn()).outcome,
              QueueOutcome::kQueueFull);
    EXPECT_EQ(RequestBlock(q, 1, 4, "getBlock/json/full/r1/v1", 6, 0, 1.0,
                           RepeatFn()).outcome,
              QueueOutcome::kQueueFull);
}

TEST(RetrievalQueue, RejectsBadInput) {
    Queue queue;
    auto* q = queue.get();
    EXPECT_EQ(Ask(q, 4096, 1, 0).outcome, QueueOutcome::kUnavailable);
    std::string v47(47, 'v'), v48(48, 'v');
    EXPECT_EQ(RequestBlock(q, 1, 1, v47, 0, 10, 1, RepeatFn()).outcome,
              QueueOutcome::kQueued);
    EXPECT_EQ(RequestBlock(q, 1, 1, v48, 0, 10, 1, RepeatFn()).outcome,
              QueueOutcome::kUnavailable);
    auto r = NextRetrieval(q, 0, kFast, 1, 0, RepeatFn());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->variant, v47);
    std::vector<unsigned char> raw(sizeof(RetrievalQueueShared), 0);
    auto* junk = reinterpret_cast<RetrievalQueueShared*>(raw.data());
    EXPECT_EQ(Ask(junk, 1, 1, 0).outcome, QueueOutcome::kUnavailable);
    EXPECT_FALSE(NextRetrieval(junk, 0, 1, 1, 0, RepeatFn()));
}

TEST(RetrievalQueue, RetryAfterWithinOneToSixty) {
    for (double rate : {0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 100.0, 1000.0}) {
        for (uint32_t pos = 1; pos <= 10000; ++pos) {
            uint32_t s = RetryAfterSeconds(pos, rate);
            ASSERT_GE(s, 1u) << pos << " " << rate;
            ASSERT_LE(s, 60u) << pos << " " << rate;
        }
    }
    EXPECT_EQ(RetryAfterSeconds(2, 1), 2u);
    EXPECT_EQ(RetryAfterSeconds(30, 1), 30u);
    EXPECT_EQ(RetryAfterSeconds(11, 2), 6u);
    EXPECT_EQ(RetryAfterSeconds(3, 0.1), 30u);
    EXPECT_EQ(RetryAfterSeconds(7, 0.1), 60u);
    EXPECT_EQ(RetryAfterSeconds(1, 1000), 1u);
    EXPECT_EQ(RetryAfterSeconds(0, 1), 1u);
    EXPECT_EQ(RetryAfterSeconds(5, 0), 5u);     // rate <= 0: 1/s
    EXPECT_EQ(RetryAfterSeconds(5, -3), 5u);
    EXPECT_EQ(RetryAfterSeconds(5, std::nan("")), 5u);
}

TEST(RetrievalQueue, PositionsMatchRetrievalOrder) {
    Queue queue;
    auto* q = queue.get();
    std::map<uint32_t, uint32_t> rep{{1, 0}, {2, 1}, {3, 2}, {4, 0}};
    RepeatFn fn = Repeats(&rep);
    std::mt19937 rng(42);
    std::map<uint64_t, uint32_t> first_waiter;
    for (int i = 0; i < 60; ++i) {
        uint64_t slot = 100 + rng() % 40;  // some blocks asked repeatedly
        uint32_t key = 1 + rng() % 4;
        Ask(q, key, slot, 0, fn);
        first_waiter.emplace(slot, key);
    }
    // One retrieval out: everything else starts at position 2.
    auto out = NextRetrieval(q, 1, kFast, 100, 120000, fn);
    ASSERT_TRUE(out);
    first_waiter.erase(out->slot);
    std::map<uint64_t, uint32_t> position;
    for (auto [slot, key] : first_waiter) {  // a waiter asks again
        QueueAnswer a = Ask(q, key, slot, 2, fn);
        ASSERT_EQ(a.outcome, QueueOutcome::kQueued);
        position[slot] = a.position;
    }
    EXPECT_EQ(Ask(q, 1, out->slot, 2, fn).position, 1u);
    CompleteRetrieval(q, out->index, out->generation, true, 3);
    auto order = Drain(q, 1000, 10, fn);
    ASSERT_EQ(order.size(), first_waiter.size());
    for (size_t i = 0; i < order.size(); ++i) {
        EXPECT_EQ(position[order[i].slot], i + 2) << "slot "
                                                   << order[i].slot;
    }
}

TEST(RetrievalQueue, RateBoundsRetrievals) {
    Queue queue;
    auto* q = queue.get();
    for (uint64_t s = 0; s < 200; ++s) Ask(q, uint32_t(s % 3), s, 0);
    std::vector<int64_t> handed;
    for (int64_t t = 1000; t < 11000; t += 10) {
        auto r = NextRetrieval(q, t, 5.0, 10, 120000, RepeatFn());
        if (!r) continue;
        handed.push_back(t);
        CompleteRetrieval(q, r->index, r->generation, true, t);
    }
    EXPECT_GE(handed.size(), 49u);
    EXPECT_LE(handed.size(), 50u);
    for (size_t i = 0; i < handed.size(); ++i) {
        size_t in_second = 0;
        for (size_t j = i; j < handed.size(); ++j) {
            in_second += handed[j] < handed[i] + 1000;
        }
        EXPECT_LE(in_second, 5u);
    }
}

TEST(RetrievalQueue, MaxInFlightBounds) {
    Queue queue;
    auto* q = queue.get();
    for (uint64_t s = 0; s < 10; ++s) Ask(q, 1, s, 0);
    int got = 0;
    for (int i = 0; i < 10; ++i) {
        got += NextRetrieval(q, i, kFast, 3, 120000, RepeatFn()).has_value();
    }
    EXPECT_EQ(got, 3);
    EXPECT_EQ(GetQueueStats(q, 10).in_flight, 3u);
}

TEST(RetrievalQueue, StaleRetrievalReturnsToQueue) {
    Queue queue;
    auto* q = queue.get();
    Ask(q, 1, 50, 0);
    auto r = NextRetrieval(q, 0, kFast, 1, 120000, RepeatFn());
    ASSERT_TRUE(r);
    Ask(q, 2, 50, 60000);  // requests keep it from being dropped
    Ask(q, 1, 50, 110000);
    EXPECT_FALSE(NextRetrieval(q, 119000, kFast, 1, 120000, RepeatFn()));
    auto again = NextRetrieval(q, 120000, kFast, 1, 120000, RepeatFn());
    ASSERT_TRUE(again);
    EXPECT_EQ(again->index, r->index);
    EXPECT_NE(again->generation, r->generation);
    EXPECT_EQ(again->waiters, (std::vector<uint32_t>{1, 2}));
    EXPECT_EQ(GetQueueStats(q, 120000).stale, 1u);
    // The dead worker's late answer is ignored; the new one counts.
    EXPECT_TRUE(
        CompleteRetrieval(q, r->index, r->generation, true, 121000).empty());
    EXPECT_EQ(GetQueueStats(q, 121000).in_flight, 1u);
    EXPECT_EQ(
        CompleteRetrieval(q, again->index, again->generation, true, 122000),
        (std::vector<uint32_t>{1, 2}));
}

TEST(RetrievalQueue, LateCompletionOfRequeuedEntryFreesIt) {
    Queue queue;
    auto* q = queue.get();
    Ask(q, 1, 50, 0);
    Ask(q, 1, 60, 0);
    auto r = NextRetrieval(q, 0, kFast, 5, 1000, RepeatFn());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->slot, 60u);
    auto other = NextRetrieval(q, 500, kFast, 5, 1000, RepeatFn());
    ASSERT_TRUE(other);
    EXPECT_EQ(other->slot, 50u);
    // At 1000 the first goes stale and waits in the queue again; the
    // second is still out, so max_in_flight 1 hands out nothing.
    EXPECT_FALSE(NextRetrieval(q, 1000, kFast, 1, 1000, RepeatFn()));
    QueueStats st = GetQueueStats(q, 1000);
    EXPECT_EQ(st.depth, 1u);
    EXPECT_EQ(st.stale, 1u);
    // A late failure leaves it queued; a late success frees it.
    EXPECT_TRUE(
        CompleteRetrieval(q, r->index, r->generation, false, 1100).empty());
    EXPECT_EQ(GetQueueStats(q, 1100).depth, 1u);
    EXPECT_EQ(CompleteRetrieval(q, r->index, r->generation, true, 1100),
              (std::vector<uint32_t>{1}));
    st = GetQueueStats(q, 1100);
    EXPECT_EQ(st.depth, 0u);
    EXPECT_EQ(st.in_flight, 1u);
    EXPECT_EQ(st.retrieved, 1u);
}

TEST(RetrievalQueue, EntriesReused) {
    Queue queue;
    auto* q = queue.get();
    for (uint64_t s = 0; s < 3; ++s) Ask(q, 1, s, 0);
    auto r = NextRetrieval(q, 0, kFast, 1, 120000, RepeatFn());
    ASSERT_TRUE(r);
    CompleteRetrieval(q, r->index, r->generation, true, 0);
    Ask(q, 1, 10, 0);  // takes the freed entry
    EXPECT_EQ(q->used, 3u);
    ExpireIdle(q, 1000000);  // dropped, then forgotten
    EXPECT_EQ(q->used, 0u);

    for (uint64_t s = 0; s < kQueueCapacity; ++s) {
        ASSERT_EQ(Ask(q, uint32_t(s % 7), s, 2000000).outcome,
                  QueueOutcome::kQueued);
    }
    // A full table of queued blocks: a new one is refused.
    EXPECT_EQ(Ask(q, 1, 999999999, 2000000).outcome,
              QueueOutcome::kQueueFull);
    // All dropped: the oldest tombstone makes room for a new block.
    ExpireIdle(q, 2200000);
    EXPECT_EQ(Ask(q, 1, 999999999, 2200000).outcome, QueueOutcome::kQueued);
    QueueStats st = GetQueueStats(q, 2200000);
    EXPECT_EQ(st.depth, 1u);
    EXPECT_EQ(st.tombstones, kQueueCapacity - 1);
}

TEST(RetrievalQueue, TwoProcessesEnqueueConcurrently) {
    Queue queue;
    auto* q = queue.get();
    pid_t child = fork();
    ASSERT_GE(child, 0);
    uint32_t key = child == 0 ? 1 : 2;
    uint64_t own = child == 0 ? 0 : 2000;
    for (uint64_t s = 0; s < 1000; ++s) {
        Ask(q, key, own + s, 0);
        if (s < 500) Ask(q, key, 5000 + s, 0);  // both ask for these
    }
    if (child == 0) _exit(0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(GetQueueStats(q, 1).depth, 2500u);
    size_t shared = 0, total = 0;
    for (const Retrieval& r : Drain(q, 3000, 10)) {
        ++total;
        if (r.slot >= 5000) {
            ++shared;
            EXPECT_EQ(r.waiter_count, 2u);
        } else {
            EXPECT_EQ(r.waiter_count, 1u);
        }
    }
    EXPECT_EQ(total, 2500u);
    EXPECT_EQ(shared, 500u);
}

// A key limit that is a number the test holds.
uint32_t FromNumber(uint32_t, void* user) {
    return *static_cast<const uint32_t*>(user);
}
KeyLimitFn Limit(const uint32_t* n) { return KeyLimitFn{FromNumber, const_cast<uint32_t*>(n)}; }

// Issue 16: key_limit is checked and the block added under one lock, so
// four processes and four threads asking at once for different blocks of
// one key never queue more than the key's allowance left.
TEST(RetrievalQueue, AKeyLimitHoldsAcrossProcessesAndThreads) {
    Queue queue;
    auto* q = queue.get();
    constexpr uint32_t kKey = 3;
    constexpr uint32_t kLeft = 3;
    std::vector<pid_t> children;
    for (int p = 0; p < 4; ++p) {
        pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            std::vector<std::thread> threads;
            for (int t = 0; t < 4; ++t) {
                threads.emplace_back([q, p, t] {
                    static const uint32_t left = kLeft;
                    for (uint64_t s = 0; s < 50; ++s) {
                        RequestBlock(q, kKey, 100000 * (p * 4 + t + 1) + s,
                                     kVariant, 0, kLimit, 1.0, RepeatFn(),
                                     Limit(&left));
                    }
                });
            }
            for (auto& th : threads) th.join();
            _exit(0);
        }
        children.push_back(child);
    }
    for (pid_t child : children) {
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFEXITED(status));
    }
    EXPECT_EQ(GetQueueStats(q, 1).depth, kLeft);
    // the key asking again for a block it waits for is no new charge;
    // another key is not bound by it
    std::vector<Retrieval> got = Drain(q, 1, 10);
    ASSERT_EQ(got.size(), 1u);
    const uint32_t three = kLeft, none = 0;
    EXPECT_EQ(RequestBlock(q, kKey, 7, kVariant, 20, kLimit, 1.0, RepeatFn(),
                           Limit(&three)).outcome,
              QueueOutcome::kQueued);   // 2 waiting, limit 3: room for one
    EXPECT_EQ(RequestBlock(q, kKey, 8, kVariant, 20, kLimit, 1.0, RepeatFn(),
                           Limit(&three)).outcome,
              QueueOutcome::kAllowanceSpent);
    EXPECT_EQ(RequestBlock(q, kKey, 7, kVariant, 20, kLimit, 1.0, RepeatFn(),
                           Limit(&none)).outcome,
              QueueOutcome::kQueued);   // already waiting for it
    EXPECT_EQ(RequestBlock(q, kKey + 1, 8, kVariant, 20, kLimit, 1.0,
                           RepeatFn(), Limit(&none)).outcome,
              QueueOutcome::kAllowanceSpent);
    EXPECT_EQ(RequestBlock(q, kKey + 1, 8, kVariant, 20, kLimit, 1.0,
                           RepeatFn()).outcome,
              QueueOutcome::kQueued);
}

// Fleet mode: a retrieval the region's claim counted for a key no longer
// takes a share of what is left of its allowance (the count has it).
TEST(RetrievalQueue, ARetrievalMarkedCountedIsNoLongerChargedToItsKey) {
    Queue queue;
    auto* q = queue.get();
    constexpr uint32_t kKey = 3;
    const uint32_t one = 1;
    ASSERT_EQ(RequestBlock(q, kKey, 10, kVariant, 0, kLimit, 1.0, RepeatFn(),
                           Limit(&one)).outcome,
              QueueOutcome::kQueued);
    std::optional<Retrieval> got =
        NextRetrieval(q, 1, kFast, 1, 120000, RepeatFn());
    ASSERT_TRUE(got);
    EXPECT_EQ(RequestBlock(q, kKey, 11, kVariant, 2, kLimit, 1.0, RepeatFn(),
                           Limit(&one)).outcome,
              QueueOutcome::kAllowanceSpent) << "10 still holds the one left";
    MarkRetrievalCounted(q, got->index, got->generation + 1, {kKey});
    EXPECT_EQ(RequestBlock(q, kKey, 11, kVariant, 2, kLimit, 1.0, RepeatFn(),
                           Limit(&one)).outcome,
              QueueOutcome::kAllowanceSpent) << "another generation's mark";
    MarkRetrievalCounted(q, got->index, got->generation, {kKey + 1});
    EXPECT_EQ(RequestBlock(q, kKey, 11, kVariant, 2, kLimit, 1.0, RepeatFn(),
                           Limit(&one)).outcome,
              QueueOutcome::kAllowanceSpent) << "another key's mark";
    MarkRetrievalCounted(q, got->index, got->generation, {kKey});
    EXPECT_EQ(RequestBlock(q, kKey, 11, kVariant, 2, kLimit, 1.0, RepeatFn(),
                           Limit(&one)).outcome,
              QueueOutcome::kQueued);
    // a new block in the same entry starts uncounted
    CompleteRetrieval(q, got->index, got->generation, true, 3);
    const uint32_t two = 2;
    EXPECT_EQ(RequestBlock(q, kKey, 12, kVariant, 4, kLimit, 1.0, RepeatFn(),
                           Limit(&two)).outcome,
              QueueOutcome::kQueued);
    EXPECT_EQ(RequestBlock(q, kKey, 13, kVariant, 4, kLimit, 1.0, RepeatFn(),
                           Limit(&two)).outcome,
              QueueOutcome::kAllowanceSpent);
}

TEST(RetrievalQueue, DeadLockHolderDoesNotWedgeOthers) {
    Queue queue;
    auto* q = queue.get();
    Ask(q, 1, 10, 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        pthread_mutex_lock(&q->mutex);
        q->pending[5] = 999;  // half-done work: key 5 has no blocks
        q->vtime[5] = 0;
        q->vtime[1] = 7;
        raise(SIGKILL);
        _exit(1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status));
    alarm(20);  // a wedged lock fails the run instead of hanging it
    QueueAnswer a = Ask(q, 2, 20, 10);
    EXPECT_EQ(a.outcome, QueueOutcome::kQueued);
    EXPECT_EQ(GetQueueStats(q, 10).recovered, 1u);
    // The repair recounted pending: key 5 gets no phantom turn.
    auto rs = Drain(q, 5, 20);
    EXPECT_EQ(rs.size(), 2u);
    EXPECT_EQ(GetQueueStats(q, 30).recovered, 1u);
    alarm(0);
}

// A full queue of 10000 blocks from 200 keys, 1-3 waiters each: the block
// retrieved last is far down the queue, and asking for it again keeps its
// place. (The cost of that request, the longest replay, is measured by
// tools/bench/core_bench: queue.)
TEST(RetrievalQueue, PositionOnFullQueue) {
    Queue queue;
    auto* q = queue.get();
    std::map<uint32_t, uint32_t> rep;
    for (uint32_t k = 0; k < 200; ++k) rep[k] = k % 4;
    RepeatFn fn = Repeats(&rep);
    auto ask = [&](uint32_t key, uint64_t slot) {
        return Ask(q, key, slot, 0, fn);
    };
    testing::FullQueueLast last = testing::FillFullQueue(q, ask);
    ASSERT_EQ(GetQueueStats(q, 0).depth, 10000u);
    EXPECT_GT(last.position, 9000u);
    QueueAnswer again = Ask(q, last.key, last.slot, 0, fn);
    EXPECT_EQ(again.outcome, QueueOutcome::kQueued);
    EXPECT_EQ(again.position, last.position);
}

}  // namespace
}  // namespace solgate
