// An upstream's 15-minute history in the zone (upstream_history.h): the
// ring of lag samples (the highest per step, gaps, laps, saturation), the
// count marks and the rates from them, a rebound record starting empty,
// and the poller writing it for a stalled node.
#include <gtest/gtest.h>

#include <memory>

#include "routing/request_metrics.h"
#include "slots/state_poller.h"
#include "slots/upstream_history.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::FakeClock;
using testing::FakeTransport;
using testing::Result;
using testing::TestNetwork;

// A time inside step `step`, `into` ms after it began.
constexpr int64_t At(int64_t step, int64_t into = 0) {
    return step * kHistoryStepMs + into;
}

class HistoryTest : public ::testing::Test {
protected:
    HistoryTest() : history(std::make_unique<UpstreamHistory>()) {}

    // The sample of the step `back` steps before now's (0: now's).
    std::optional<LagSample> Back(int64_t now, size_t back) const {
        auto samples = ReadLags(*history, now);
        return samples[kHistorySteps - 1 - back];
    }

    std::unique_ptr<UpstreamHistory> history;  // zeroed, as a fresh zone
};

TEST_F(HistoryTest, AnEmptyHistoryHasNoSample) {
    auto samples = ReadLags(*history, At(1000, 7));
    ASSERT_EQ(samples.size(), kHistorySteps);
    for (const auto& s : samples) {
        EXPECT_FALSE(s);
    }
    EXPECT_TRUE(NeedsCountMark(*history, At(1000)));
    EXPECT_FALSE(RatesSince(*history, At(1000), 5, 1));
}

TEST_F(HistoryTest, AStepKeepsTheHighestOfEachLag) {
    RecordLags(*history, At(100, 0), 3, 40);
    RecordLags(*history, At(100, 400), 9, 2);
    RecordLags(*history, At(100, 14999), 1, 1);
    auto s = Back(At(100, 14999), 0);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->step, 100);
    EXPECT_EQ(s->slot_lag, 9u);
    EXPECT_EQ(s->ingestion_lag, 40u);
}

TEST_F(HistoryTest, ANewStepStartsAfreshAndTheOldOneStays) {
    RecordLags(*history, At(100), 50, 60);
    RecordLags(*history, At(101, 10), 2, 3);
    auto now = Back(At(101, 20), 0);
    auto before = Back(At(101, 20), 1);
    ASSERT_TRUE(now && before);
    EXPECT_EQ(now->slot_lag, 2u);
    EXPECT_EQ(now->ingestion_lag, 3u);
    EXPECT_EQ(before->slot_lag, 50u);
    EXPECT_EQ(before->ingestion_lag, 60u);
}

TEST_F(HistoryTest, StepsNoTickReachedAreGaps) {
    RecordLags(*history, At(200), 1, 1);
    RecordLags(*history, At(203), 4, 4);
    auto samples = ReadLags(*history, At(203));
    EXPECT_TRUE(samples[kHistorySteps - 1]);
    EXPECT_FALSE(samples[kHistorySteps - 2]);
    EXPECT_FALSE(samples[kHistorySteps - 3]);
    ASSERT_TRUE(samples[kHistorySteps - 4]);
    EXPECT_EQ(samples[kHistorySteps - 4]->step, 200);
}

// A word one lap old sits where now's would: it is not shown as now's.
TEST_F(HistoryTest, ASampleOlderThanFifteenMinutesIsGone) {
    RecordLags(*history, At(300), 7, 7);
    EXPECT_TRUE(Back(At(300 + kHistorySteps - 1), kHistorySteps - 1));
    for (const auto& s : ReadLags(*history, At(300 + kHistorySteps))) {
        EXPECT_FALSE(s);
    }
    // and a write in the new lap replaces it rather than raising it
    RecordLags(*history, At(300 + kHistorySteps), 1, 2);
    auto s = Back(At(300 + kHistorySteps), 0);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->slot_lag, 1u);
    EXPECT_EQ(s->ingestion_lag, 2u);
}

TEST_F(HistoryTest, StepsBeforeTheClockStartedAreGaps) {
    RecordLags(*history, At(0, 5), 1, 0);   // a fake clock at 5 ms
    auto samples = ReadLags(*history, At(0, 5));
    ASSERT_TRUE(samples.back());
    EXPECT_EQ(samples.back()->step, 0);
    EXPECT_FALSE(samples.front());
}

TEST_F(HistoryTest, HugeLagsSaturate) {
    RecordLags(*history, At(400), uint64_t{1} << 40, kHistoryLagMax + 1);
    auto s = Back(At(400), 0);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->slot_lag, kHistoryLagMax);
    EXPECT_EQ(s->ingestion_lag, kHistoryLagMax);
}

TEST_F(HistoryTest, TheFirstMarkOfAStepWins) {
    EXPECT_TRUE(NeedsCountMark(*history, At(500, 100)));
    MarkCounts(*history, At(500, 100), 10, 1);
    EXPECT_FALSE(NeedsCountMark(*history, At(500, 900)));
    MarkCounts(*history, At(500, 900), 99, 99);   // ignored
    auto rates = RatesSince(*history, At(500, 10100), 60, 6);
    ASSERT_TRUE(rates);
    EXPECT_EQ(rates->window_ms, 10000);
    EXPECT_DOUBLE_EQ(rates->requests_per_s, 5.0);
    EXPECT_DOUBLE_EQ(rates->errors_per_s, 0.5);
    EXPECT_TRUE(NeedsCountMark(*history, At(501)));
}

TEST_F(HistoryTest, RatesAreOverTheOldestMarkOfTheLastMinute) {
    for (int64_t step = 600; step <= 606; step++) {
        MarkCounts(*history, At(step, 400), uint64_t(step - 600) * 150, 0);
    }
    // marks of steps 602..606 are kept; 602's is the oldest
    auto rates = RatesSince(*history, At(606, 400), 900, 0);
    ASSERT_TRUE(rates);
    EXPECT_EQ(rates->window_ms, 4 * kHistoryStepMs);
    EXPECT_DOUBLE_EQ(rates->requests_per_s, 600.0 / 60.0);
}

TEST_F(HistoryTest, NoRateOverLessThanFiveSeconds) {
    MarkCounts(*history, At(700, 1000), 0, 0);
    EXPECT_FALSE(RatesSince(*history, At(700, 1000 + kMinRateWindowMs - 1),
                            100, 0));
    EXPECT_TRUE(RatesSince(*history, At(700, 1000 + kMinRateWindowMs), 100, 0));
}

TEST_F(HistoryTest, ACounterPastTheMarksWidthStillGivesItsRate) {
    uint64_t before = (uint64_t{1} << 26) - 10;  // wraps in the mark
    MarkCounts(*history, At(800), before, before);
    auto rates = RatesSince(*history, At(800, 10000), before + 30, before);
    ASSERT_TRUE(rates);
    EXPECT_DOUBLE_EQ(rates->requests_per_s, 3.0);
    EXPECT_DOUBLE_EQ(rates->errors_per_s, 0.0);
}

TEST(UpstreamHistoryRecord, ARecordGivenToAnotherIdStartsEmpty) {
    TestNetwork net(1);
    UpstreamHistory& history = net.network.host(0).history;
    RecordLags(history, At(900), 5, 5);
    MarkCounts(history, At(900), 5, 5);
    net.network.host(0).slot_polls_failing = 1;
    net.network.host(0).ws_drain_until_ms = 5000;
    net.network.record(0).Reset("another");
    for (const auto& s : ReadLags(history, At(900))) {
        EXPECT_FALSE(s);
    }
    EXPECT_TRUE(NeedsCountMark(history, At(900)));
    // nor the last one's failing polls, nor its drain
    EXPECT_TRUE(net.network.SlotsCurrent(0));
    EXPECT_EQ(net.network.DrainUntil(0), 0);
}

// Every upstream answers as a node at `processed` (shred 2 ahead) but
// the stalled one, whose replay stopped at `stalled_at`.
HttpResult NodeAnswer(const FakeTransport::Pending& p, uint64_t processed,
                      const std::string& stalled_url, uint64_t stalled_at) {
    bool stalled = p.url == stalled_url;
    std::string kind = FakeTransport::Kind(p.body);
    HttpResult r;
    r.http_status = 200;
    uint64_t replayed = stalled ? stalled_at : processed;
    if (kind == "getHealth") {
        r.body = Result("\"ok\"");
    } else if (kind == "getMaxShredInsertSlot") {
        r.body = Result(std::to_string(processed + 2));
    } else if (kind == "getSlot_finalized") {
        r.body = Result(std::to_string(replayed - 32));
    } else {
        r.body = Result(std::to_string(replayed));
    }
    return r;
}

TEST(UpstreamHistoryPoller, TheLeaseHolderChartsAStalledNode) {
    TestNetwork net(3);
    FakeClock clock;
    clock.mono = At(2000);
    FakeTransport transport;
    NetworkPoller poller(net.network, transport, clock,
                         [](int, const std::string&) {}, 101);
    std::string stalled = net.network.upstream(2).poll.url;
    uint64_t processed = 5000;
    // 30 s of 400 ms ticks, a slot per tick; up-2 stops at 5000
    for (int tick = 0; tick < 75; tick++) {
        clock.Advance(400);
        processed += 1;
        poller.Tick();
        transport.AnswerEach([&](const FakeTransport::Pending& p) {
            return NodeAnswer(p, processed, stalled, 5000);
        });
    }
    int64_t now = clock.mono;
    auto current = ReadLags(net.network.host(0).history, now);
    auto stuck = ReadLags(net.network.host(2).history, now);
    ASSERT_TRUE(current.back() && stuck.back());
    EXPECT_EQ(current.back()->slot_lag, 0u);
    EXPECT_EQ(current.back()->ingestion_lag, 2u);
    // the lag the tick before last saw: a slot behind the answers
    EXPECT_GE(stuck.back()->slot_lag, processed - 5000 - 2);
    EXPECT_GE(stuck.back()->ingestion_lag, processed - 5000);
    // earlier steps were smaller: the lag grew
    auto previous = stuck[kHistorySteps - 2];
    ASSERT_TRUE(previous);
    EXPECT_LT(previous->slot_lag, stuck.back()->slot_lag);
    // the marks were taken, so a rate shows once 5 s have passed
    EXPECT_FALSE(NeedsCountMark(net.network.host(1).history, now));
    EXPECT_TRUE(RatesSince(net.network.host(1).history, now + kMinRateWindowMs,
                           0, 0));
}

}  // namespace
}  // namespace solgate
