// The answers Cube Runner gives itself, byte for byte as the spec words
// them (Cube Runner responses), with their HTTP status and Retry-After.
#include "blocks/block_answers.h"

#include <gtest/gtest.h>

namespace solgate {
namespace {

BlockCall CallFor(uint64_t slot, const std::string& id = "7") {
    BlockCall call;
    call.slot = slot;
    call.id_raw = id;
    return call;
}

BlockPlan Plan(const char* name, uint64_t allowance = 0) {
    BlockPlan plan;
    plan.name = name;
    plan.tier = PlanTier::kArchive;
    plan.monthly_allowance = allowance;
    return plan;
}

LongTermVerdict Queue(QueueOutcome outcome, uint32_t position,
                      uint32_t retry) {
    LongTermVerdict v;
    v.queue.outcome = outcome;
    v.queue.position = position;
    v.queue.retry_after_s = retry;
    return v;
}

TEST(BlockAnswers, RetryAfterIsWholeSecondsFromOneToSixty) {
    EXPECT_EQ(RetryAfterForMs(0), 1u);
    EXPECT_EQ(RetryAfterForMs(1), 1u);
    EXPECT_EQ(RetryAfterForMs(1000), 1u);
    EXPECT_EQ(RetryAfterForMs(1001), 2u);
    EXPECT_EQ(RetryAfterForMs(-5000), 1u);
    EXPECT_EQ(RetryAfterForMs(600000), 60u);
}

TEST(BlockAnswers, ResultAndUnauthorized) {
    BlockDecision d = ResultAnswer(CallFor(0, "3"), "3998");
    EXPECT_EQ(d.kind, BlockDecision::kAnswer);
    EXPECT_EQ(d.http_status, 200u);
    EXPECT_EQ(d.body, R"({"jsonrpc":"2.0","result":3998,"id":3})");

    d = NoApiKey(CallFor(10, "\"a\""), "getConfirmedBlock");
    EXPECT_EQ(d.http_status, 401u);
    EXPECT_EQ(d.retry_after_s, 0u);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","error":{"code":-32003,"message":)"
              R"("Unauthorized: getConfirmedBlock needs an API key"},)"
              R"("id":"a"})");
    d = NoValidPlan(CallFor(10));
    EXPECT_EQ(d.http_status, 401u);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","error":{"code":-32003,"message":)"
              R"("Unauthorized: the API key has no valid plan"},"id":7})");
}

TEST(BlockAnswers, RateLimitSaysThePlanAndWhenToRetry) {
    BlockDecision d = RateLimited(CallFor(100), Plan("tiny"), 3);
    EXPECT_EQ(d.http_status, 429u);
    EXPECT_EQ(d.retry_after_s, 3u);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","error":{"code":-32019,"message":"Rate )"
              R"(limit of plan tiny exceeded; retry in 3 seconds","data":)"
              R"({"slot":100,"retryAfterSecs":3,"reason":"rate_limit"}},)"
              R"("id":7})");
}

TEST(BlockAnswers, NotHeldHereIsA503ForTheAskingRegion) {
    BlockDecision d = NotHeldHere(CallFor(4901), "us-east");
    EXPECT_EQ(d.http_status, 503u);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","error":{"code":-32001,"message":"Block )"
              R"(4901 is not held in region us-east"},"id":7})");
}

TEST(BlockAnswers, TierAnswerNamesTheFirstAvailableBlock) {
    BlockDecision d = TierAnswer(CallFor(12, "\"t\""), 31, false);
    EXPECT_EQ(d.http_status, 200u);
    EXPECT_EQ(d.retry_after_s, 0u);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","error":{"code":-32001,"message":)"
              R"("Block 12 not available on this tier. First available )"
              R"(block: 31","data":{"slot":12,"firstAvailableBlock":31,)"
              R"("reason":"tier"}},"id":"t"})");
    d = TierAnswer(CallFor(250), 0, true);
    EXPECT_NE(d.body.find(R"("firstAvailableBlock":0,)"
                          R"("reason":"no_long_term_storage")"),
              std::string::npos)
        << d.body;
}

TEST(BlockAnswers, QueuedGivesThePosition) {
    BlockDecision d = LongTermAnswer(CallFor(250, "9"), Plan("arch"),
                                     Queue(QueueOutcome::kQueued, 4, 2));
    EXPECT_EQ(d.http_status, 429u);
    EXPECT_EQ(d.retry_after_s, 2u);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","error":{"code":-32019,"message":"Block )"
              R"(250 is being retrieved from long-term storage; retry in 2 )"
              R"(seconds","data":{"slot":250,"retryAfterSecs":2,)"
              R"("queuePosition":4}},"id":9})");
}

TEST(BlockAnswers, NotQueuedSaysWhyInData) {
    struct Case {
        QueueOutcome outcome;
        const char* message;
        const char* reason;
    };
    for (const Case& c : {
             Case{QueueOutcome::kQueueFull,
                  "Block 5 was not queued: the long-term storage queue of "
                  "plan arch is full; retry in 6 seconds",
                  "queue_full"},
             Case{QueueOutcome::kDropped,
                  "Block 5 was dropped from the long-term storage queue "
                  "after 150 seconds without a request; it is queued "
                  "again; retry in 6 seconds",
                  "dropped"},
             Case{QueueOutcome::kStorageFailed,
                  "Long-term storage did not return block 5; it is queued "
                  "again; retry in 6 seconds",
                  "storage_failed"},
         }) {
        BlockDecision d =
            LongTermAnswer(CallFor(5), Plan("arch"), Queue(c.outcome, 0, 6));
        EXPECT_EQ(d.http_status, 429u);
        EXPECT_EQ(d.retry_after_s, 6u);
        EXPECT_EQ(d.body,
                  std::string(R"({"jsonrpc":"2.0","error":{"code":-32019,)"
                              R"("message":")") +
                      c.message +
                      R"(","data":{"slot":5,"retryAfterSecs":6,"reason":")" +
                      c.reason + R"("}},"id":7})");
    }
}

TEST(BlockAnswers, TooManyKeysAndASpentAllowanceWaitTheLongest) {
    LongTermVerdict keys;
    keys.kind = LongTermVerdict::kTooManyKeys;
    BlockDecision d = LongTermAnswer(CallFor(5), Plan("arch"), keys);
    EXPECT_EQ(d.retry_after_s, 60u);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","error":{"code":-32019,"message":"Block 5 )"
              R"(was not queued: too many keys","data":{"slot":5,)"
              R"("retryAfterSecs":60,"reason":"queue_full"}},"id":7})");

    LongTermVerdict spent;
    spent.kind = LongTermVerdict::kAllowanceSpent;
    d = LongTermAnswer(CallFor(5), Plan("arch", 3), spent);
    EXPECT_EQ(d.http_status, 429u);
    EXPECT_EQ(d.retry_after_s, 60u);
    EXPECT_EQ(d.body,
              R"({"jsonrpc":"2.0","error":{"code":-32019,"message":"Block 5 )"
              R"(was not retrieved: the monthly allowance of plan arch (3 )"
              R"(blocks) is spent; it resets on the 1st at 00:00 UTC",)"
              R"("data":{"slot":5,"retryAfterSecs":60,"reason":)"
              R"("allowance"}},"id":7})");
}

TEST(BlockAnswers, AnUnusableQueueLeavesTheAnswerToTheTier) {
    BlockDecision d = LongTermAnswer(CallFor(5), Plan("arch"),
                                     Queue(QueueOutcome::kUnavailable, 0, 1));
    EXPECT_EQ(d.kind, BlockDecision::kPass);
    EXPECT_TRUE(d.body.empty());
}

}  // namespace
}  // namespace solgate
