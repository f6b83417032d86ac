// The long-term storage queues from both ends, without a service: what
// the request path is told (queued, allowance spent, too many keys), what
// the retriever takes out, and what a completed retrieval counts.
#include "blocks/long_term_queues.h"

#include <gtest/gtest.h>

#include "blocks/blocks_shared.h"
#include "blocks/lmdb_allowances.h"
#include "slots/shared_state.h"
#include "slots/state_poller.h"
#include "support/blocks_zone.h"

namespace solgate {
namespace {

using testing::Accept;

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kWall = 1'800'000'000'000;
const char kV[] = "getBlock/json/full/r1/v0";

BlockConfBuilder SmallArchivePlan() {
    BlockConfBuilder b;
    Accept(b.Region("us"));
    Accept(b.Cache("/unused/cache"));
    Accept(b.State("/unused/state"));
    Accept(b.LongTermStorage("http://lts/"));
    Accept(b.PlanDefine("arch", {"tier=archive", "retrieval_rate=10r/s",
                                 "queue_limit=2", "monthly_allowance=1"}));
    return b;
}

class LongTermQueuesTest : public ::testing::Test {
protected:
    LongTermQueuesTest()
        : dir_("long_term_queues_test"),
          conf_(testing::Built(SmallArchivePlan())),
          memory_(conf_),
          zone_(conf_, accounts_),
          queues_(conf_, zone_) {
        std::string error;
        EXPECT_TRUE(zone_.Bind(memory_.memory(), true, &error)) << error;
        EXPECT_TRUE(accounts_.Open(dir_.path(), true, &error)) << error;
        arch_ = static_cast<size_t>(FindPlan(conf_.plans(), "arch") -
                                    conf_.plans().data());
    }

    BlockCall Call(const std::string& key, uint64_t slot,
                   const std::string& plan = "arch") {
        BlockCall call;
        call.plan = static_cast<size_t>(FindPlan(conf_.plans(), plan) -
                                        conf_.plans().data());
        call.api_key = key;
        call.slot = slot;
        call.variant = kV;
        call.key = zone_.keys().FindOrAdd(
            key, static_cast<uint32_t>(call.plan), kWall);
        return call;
    }

    TempDir dir_;
    BlockServiceConf conf_;
    testing::BlocksZone memory_;
    LmdbAllowances accounts_;
    SharedBlocks zone_;
    LongTermQueues queues_;
    size_t arch_ = 0;
};

TEST_F(LongTermQueuesTest, OnlyArchivePlansHaveAQueue) {
    EXPECT_TRUE(queues_.bound());
    EXPECT_TRUE(queues_.HasQueue(arch_));
    size_t free_plan = 0;
    EXPECT_FALSE(queues_.HasQueue(free_plan));
    LongTermVerdict v = queues_.Admit(Call("k1", 10, "free"), kNow, kWall);
    EXPECT_EQ(v.kind, LongTermVerdict::kQueue);
    EXPECT_EQ(v.queue.outcome, QueueOutcome::kUnavailable);
    EXPECT_EQ(queues_.Next(free_plan, kNow, kWall, 1, 0), std::nullopt);
    EXPECT_EQ(queues_.Stats(free_plan, kNow), std::nullopt);
    ASSERT_NE(queues_.Stats(arch_, kNow), std::nullopt);
    EXPECT_EQ(queues_.Stats(arch_, kNow)->depth, 0u);
}

TEST_F(LongTermQueuesTest, QueuedUpToTheLimit) {
    LongTermVerdict v = queues_.Admit(Call("k1", 10), kNow, kWall);
    EXPECT_EQ(v.kind, LongTermVerdict::kQueue);
    EXPECT_EQ(v.queue.outcome, QueueOutcome::kQueued);
    EXPECT_EQ(v.queue.position, 1u);
    EXPECT_EQ(queues_.Admit(Call("k2", 10), kNow, kWall).queue.outcome,
              QueueOutcome::kQueued);   // the same block, one more waiter
    EXPECT_EQ(queues_.Admit(Call("k3", 11), kNow, kWall).queue.outcome,
              QueueOutcome::kQueued);
    EXPECT_EQ(queues_.Admit(Call("k4", 12), kNow, kWall).queue.outcome,
              QueueOutcome::kQueueFull);
    EXPECT_EQ(queues_.Stats(arch_, kNow)->depth, 2u);
}

// Issue 16: ten parallel requests for different old blocks from a key
// with an allowance of 3 got all ten retrieved. What a key waits for now
// counts against what is left of its allowance, in the queue's own step.
TEST_F(LongTermQueuesTest, AKeyNeverWaitsForMoreThanItsAllowanceLeft) {
    ASSERT_EQ(queues_.Admit(Call("k1", 10), kNow, kWall).queue.outcome,
              QueueOutcome::kQueued);
    LongTermVerdict more = queues_.Admit(Call("k1", 11), kNow, kWall);
    EXPECT_EQ(more.kind, LongTermVerdict::kAllowanceSpent);   // allowance 1
    EXPECT_EQ(more.queue.outcome, QueueOutcome::kAllowanceSpent);
    EXPECT_EQ(zone_.counters().allowance_refusals[arch_].load(), 1u);
    // asking again for the block it waits for is no new charge
    EXPECT_EQ(queues_.Admit(Call("k1", 10), kNow, kWall).queue.outcome,
              QueueOutcome::kQueued);
    EXPECT_EQ(queues_.Stats(arch_, kNow)->depth, 1u);
    // once retrieved, it is counted: still nothing left
    auto r = queues_.Next(arch_, kNow + 1000, kWall, 1, 0);
    ASSERT_TRUE(r);
    queues_.Complete(arch_, *r, true, kNow + 1100, kWall);
    EXPECT_EQ(accounts_.AllowanceUsed("k1", kWall), 1u);
    EXPECT_EQ(queues_.Admit(Call("k1", 11), kNow + 1200, kWall).kind,
              LongTermVerdict::kAllowanceSpent);
}

TEST_F(LongTermQueuesTest, AKeyTheTableCouldNotHoldIsNotQueued) {
    BlockCall call = Call("k1", 10);
    call.key = std::nullopt;
    EXPECT_EQ(queues_.Admit(call, kNow, kWall).kind,
              LongTermVerdict::kTooManyKeys);
    EXPECT_EQ(queues_.Stats(arch_, kNow)->depth, 0u);
}

TEST_F(LongTermQueuesTest, ACompletedRetrievalCountsForEveryWaiter) {
    accounts_.NoteReceipt("k2", 10, kWall);   // k2 had it already
    queues_.Admit(Call("k1", 10), kNow, kWall);
    queues_.Admit(Call("k2", 10), kNow, kWall);
    std::optional<Retrieval> r = queues_.Next(arch_, kNow + 200, kWall, 1, 0);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->slot, 10u);
    EXPECT_EQ(r->variant, kV);
    EXPECT_EQ(r->waiter_count, 2u);
    queues_.Complete(arch_, *r, true, kNow + 300, kWall);

    BlocksHostCounters& shared = zone_.counters();
    EXPECT_EQ(shared.served[kSourceLongTerm].load(), 2u);
    EXPECT_EQ(shared.allowance_counted[arch_].load(), 2u);
    EXPECT_EQ(shared.repeats_counted[arch_].load(), 1u);
    EXPECT_EQ(accounts_.AllowanceUsed("k1", kWall), 1u);
    EXPECT_EQ(accounts_.AllowanceUsed("k2", kWall), 1u);
    EXPECT_EQ(accounts_.RepeatCount("k2", kWall), 1u);
    EXPECT_EQ(accounts_.RepeatCount("k1", kWall), 0u);
    EXPECT_EQ(memory_.shared()->keys.entries[*Call("k1", 0).key]
                  .served[kSourceLongTerm].load(),
              1u);
    EXPECT_EQ(queues_.Stats(arch_, kNow + 400)->retrieved, 1u);

    // Each key's allowance of 1 is now spent.
    LongTermVerdict v = queues_.Admit(Call("k1", 11), kNow + 400, kWall);
    EXPECT_EQ(v.kind, LongTermVerdict::kAllowanceSpent);
    EXPECT_EQ(shared.allowance_refusals[arch_].load(), 1u);
    EXPECT_EQ(queues_.Stats(arch_, kNow + 400)->depth, 0u);
}

TEST_F(LongTermQueuesTest, AFailedRetrievalCountsNothing) {
    queues_.Admit(Call("k1", 10), kNow, kWall);
    std::optional<Retrieval> r = queues_.Next(arch_, kNow + 200, kWall, 1, 0);
    ASSERT_TRUE(r);
    queues_.Complete(arch_, *r, false, kNow + 300, kWall);
    EXPECT_EQ(zone_.counters().served[kSourceLongTerm].load(), 0u);
    EXPECT_EQ(accounts_.AllowanceUsed("k1", kWall), 0u);
    EXPECT_EQ(queues_.Admit(Call("k1", 10), kNow + 400, kWall).queue.outcome,
              QueueOutcome::kStorageFailed);
}

TEST_F(LongTermQueuesTest, OneProcessRetrievesForAPlan) {
    EXPECT_TRUE(queues_.ClaimRetrievals(arch_, 1, kNow, kLeaseTtlMs));
    EXPECT_FALSE(queues_.ClaimRetrievals(arch_, 2, kNow, kLeaseTtlMs));
    EXPECT_TRUE(queues_.ClaimRetrievals(arch_, 1, kNow + 1, kLeaseTtlMs));
    queues_.ReleaseRetrievals(arch_, 2);   // not its lease
    EXPECT_FALSE(queues_.ClaimRetrievals(arch_, 2, kNow + 2, kLeaseTtlMs));
    queues_.ReleaseRetrievals(arch_, 1);
    EXPECT_TRUE(queues_.ClaimRetrievals(arch_, 2, kNow + 3, kLeaseTtlMs));
    EXPECT_FALSE(queues_.ClaimRetrievals(kMaxBlockPlans, 2, kNow, 1));
}

TEST(LongTermQueuesUnbound, NothingBeforeTheZone) {
    BlockServiceConf conf = testing::Built(SmallArchivePlan());
    LmdbAllowances accounts;
    SharedBlocks zone(conf, accounts);
    LongTermQueues queues(conf, zone);
    EXPECT_FALSE(queues.bound());
    EXPECT_FALSE(queues.HasQueue(4));
    EXPECT_FALSE(queues.ClaimRetrievals(4, 1, kNow, kLeaseTtlMs));
    queues.ReleaseRetrievals(4, 1);
    EXPECT_EQ(queues.Next(4, kNow, kWall, 1, 0), std::nullopt);
}

}  // namespace
}  // namespace solgate
