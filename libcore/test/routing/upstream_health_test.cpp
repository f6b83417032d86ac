// Passive health and the cost routing weighs an upstream by.
#include "routing/upstream_health.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <vector>

namespace solgate {
namespace {

struct Host {
    Host() : record(std::make_unique<UpstreamRecord>()) { record->Reset("u"); }
    UpstreamHostRecord& host() { return record->host; }
    std::unique_ptr<UpstreamRecord> record;
};

TEST(UpstreamHealth, ClassifiesWhatTheNodeDid) {
    EXPECT_EQ(ClassifyAttempt(200, false, "").cause, AttemptCause::kOk);
    EXPECT_EQ(ClassifyAttempt(404, false, "").cause, AttemptCause::kOk);
    EXPECT_EQ(ClassifyAttempt(0, false, "").cause, AttemptCause::kTransport);
    EXPECT_EQ(ClassifyAttempt(0, true, "").cause, AttemptCause::kTimeout);
    for (unsigned s : {500u, 502u, 503u, 504u}) {
        EXPECT_EQ(ClassifyAttempt(s, false, "").cause, AttemptCause::kHttpError);
    }
    AttemptOutcome limited = ClassifyAttempt(429, false, "7");
    EXPECT_EQ(limited.cause, AttemptCause::kRateLimited);
    EXPECT_EQ(limited.retry_after_ms, 7000u);
    EXPECT_EQ(ClassifyAttempt(429, false, "3600").retry_after_ms, 60000u);
    EXPECT_EQ(ClassifyAttempt(429, false, "Wed, 21 Oct 2026 07:28:00 GMT")
                  .retry_after_ms, 0u);
    EXPECT_EQ(ClassifyAttempt(429, false, "").retry_after_ms, 0u);
    EXPECT_EQ(AttemptCauseName(AttemptCause::kRateLimited), "http_429");
}

TEST(UpstreamHealth, MaxFailsInARowEjectForFailTimeout) {
    Host h;
    conf::UpstreamRouting r;
    r.max_fails = 2;
    r.fail_timeout_ms = 10000;
    AttemptOutcome failed{AttemptCause::kHttpError, 0};
    EXPECT_EQ(RecordAttempt(h.host(), r, failed, 1000), 0);
    EXPECT_EQ(RecordAttempt(h.host(), r, {}, 1001), 0);   // the run is broken
    EXPECT_EQ(RecordAttempt(h.host(), r, failed, 1002), 0);
    EXPECT_EQ(RecordAttempt(h.host(), r, failed, 1003), 10000);
    EXPECT_TRUE(Ejected(h.host(), 1003));
    EXPECT_TRUE(Ejected(h.host(), 11002));
    EXPECT_FALSE(Ejected(h.host(), 11003));
    EXPECT_EQ(h.host().ejections.load(), 1u);
    r.max_fails = 0;  // never ejected by failures
    for (int i = 0; i < 5; i++) {
        EXPECT_EQ(RecordAttempt(h.host(), r, failed, 20000 + i), 0);
    }
    EXPECT_FALSE(Ejected(h.host(), 20010));
}

// A success says which failure run it ended and the reset it made, as
// its own atomic operations saw them (not read again after them, when
// another worker may have reported too).
TEST(UpstreamHealth, ASuccessSaysTheRunItEndedAndTheResetItMade) {
    Host h;
    conf::UpstreamRouting r;
    r.max_fails = 3;
    AttemptOutcome failed{AttemptCause::kHttpError, 0};
    FailureRun run{7, 7};
    RecordAttempt(h.host(), r, failed, 1000, &run);
    RecordAttempt(h.host(), r, failed, 1001, &run);
    EXPECT_EQ(run.fails_before, 7u);   // a failure leaves it as it was
    uint32_t resets = h.host().run_resets.load();
    RecordAttempt(h.host(), r, {}, 1002, &run);
    EXPECT_EQ(run.fails_before, 2u);
    EXPECT_EQ(run.resets_after, resets + 1);
    EXPECT_EQ(h.host().consecutive_fails.load(), 0u);
    RecordAttempt(h.host(), r, {}, 1003, &run);   // another worker's, say
    EXPECT_EQ(run.fails_before, 0u);
    EXPECT_EQ(run.resets_after, resets + 2);
}

TEST(UpstreamHealth, RetryAfterIsACoolDown) {
    Host h;
    conf::UpstreamRouting r;
    r.max_fails = 0;
    AttemptOutcome limited = ClassifyAttempt(429, false, "30");
    EXPECT_EQ(RecordAttempt(h.host(), r, limited, 0), 30000);
    EXPECT_TRUE(Ejected(h.host(), 29999));
    EXPECT_FALSE(Ejected(h.host(), 30000));
    // while out, another failure extends it but is no new ejection
    EXPECT_EQ(RecordAttempt(h.host(), r, ClassifyAttempt(429, false, "60"), 100),
              0);
    EXPECT_TRUE(Ejected(h.host(), 50000));
}

TEST(UpstreamHealth, CostFollowsLatencyFailuresAndLag) {
    Host a, b;
    for (int i = 0; i < 40; i++) {
        RecordPoll(a.host(), true, 1);
        RecordPoll(b.host(), true, 301);
    }
    EXPECT_EQ(UpstreamCost(a.host(), 0, 20), 5000.0);  // the floor
    EXPECT_NEAR(UpstreamCost(b.host(), 0, 20), 301000.0, 3000.0);
    // small lags and jitter below the floor are equal
    EXPECT_EQ(UpstreamCost(a.host(), 10, 20), UpstreamCost(a.host(), 0, 20));
    EXPECT_GT(UpstreamCost(a.host(), 20, 20), UpstreamCost(a.host(), 0, 20));
    RecordPoll(a.host(), false, 0);
    EXPECT_GT(UpstreamCost(a.host(), 0, 20), 5000.0);
}

TEST(UpstreamHealth, LagIsFromTheObservedSlot) {
    uint64_t heads[] = {1000, 0, 990, 1001};
    EXPECT_EQ(LagReference(heads, 4), 1000u);
    EXPECT_EQ(SlotLag(1000, 920), 80u);
    EXPECT_EQ(SlotLag(1000, 1005), 0u);
    EXPECT_EQ(SlotLag(1000, 0), 0u);    // unknown is not lagging
    EXPECT_TRUE(Lagging(21, 20));
    EXPECT_FALSE(Lagging(20, 20));
    EXPECT_FALSE(Lagging(500, 0));     // max_slot_lag 0: off
}

// The small groups' insertion sort and the large ones' nth_element agree
// with the definition: the upper median of the known (non-zero) heads.
TEST(UpstreamHealth, LagReferenceIsTheUpperMedianOfKnownHeadsAtAnySize) {
    std::mt19937_64 random(17);
    for (size_t n = 0; n <= 20; n++) {
        for (int round = 0; round < 200; round++) {
            std::vector<uint64_t> heads(n);
            for (uint64_t& head : heads) {
                // zeros (unknown) and ties are common
                head = random() % 4 == 0 ? 0 : 1000 + random() % 6;
            }
            std::vector<uint64_t> known;
            for (uint64_t head : heads) {
                if (head != 0) {
                    known.push_back(head);
                }
            }
            std::sort(known.begin(), known.end(), std::greater<uint64_t>());
            uint64_t expected =
                known.empty() ? 0 : known[(known.size() - 1) / 2];
            EXPECT_EQ(LagReference(heads.data(), n), expected) << "n " << n;
        }
    }
}

}  // namespace
}  // namespace solgate
