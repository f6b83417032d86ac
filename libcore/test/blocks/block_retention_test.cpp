#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "blocks/block_retention.h"

namespace solgate {
namespace {

constexpr int64_t kMinute = 60 * 1000;
constexpr int64_t kHour = 60 * kMinute;

CachedBlockStat Block(uint64_t slot, int64_t stored_ms,
                      uint64_t bytes = 100) {
    CachedBlockStat b;
    b.slot = slot;
    b.bytes = bytes;
    b.stored_ms = stored_ms;
    b.score_ms = stored_ms;
    return b;
}

void Request(CachedBlockStat* b, int64_t now_ms,
             const RetentionPolicy& policy) {
    b->score = ScoreAfterRequest(b->score, b->score_ms, now_ms, policy);
    b->score_ms = std::max(b->score_ms, now_ms);
}

uint64_t Total(const std::vector<CachedBlockStat>& entries) {
    uint64_t total = 0;
    for (const CachedBlockStat& e : entries) {
        total += e.bytes;
    }
    return total;
}

bool Evicts(const EvictionPlan& plan, size_t index) {
    return std::find(plan.evict.begin(), plan.evict.end(), index) !=
           plan.evict.end();
}

// A region on the fake clock: stores blocks, evicting by the plan.
struct Region {
    RetentionPolicy policy;
    uint64_t max_bytes = 0;
    std::vector<CachedBlockStat> entries;
    std::vector<CachedBlockStat> evicted;  // with eviction time in score_ms

    bool Store(CachedBlockStat block, int64_t now_ms) {
        EvictionPlan plan = PlanEvictions(entries, Total(entries),
                                          block.bytes, max_bytes, now_ms,
                                          policy);
        std::vector<bool> gone(entries.size(), false);
        for (size_t i : plan.evict) {
            gone[i] = true;
            CachedBlockStat e = entries[i];
            e.score_ms = now_ms;
            evicted.push_back(e);
        }
        std::vector<CachedBlockStat> kept;
        for (size_t i = 0; i < entries.size(); i++) {
            if (!gone[i]) {
                kept.push_back(entries[i]);
            }
        }
        entries.swap(kept);
        EXPECT_EQ(plan.bytes_after, Total(entries));
        if (plan.fits) {
            entries.push_back(block);
        }
        return plan.fits;
    }
};

TEST(BlockRetention, DecayMath) {
    RetentionPolicy p;
    EXPECT_DOUBLE_EQ(DecayedScore(4, 0, 3 * kHour, p), 2.0);  // half-life
    EXPECT_DOUBLE_EQ(DecayedScore(4, 0, 6 * kHour, p), 1.0);
    EXPECT_DOUBLE_EQ(DecayedScore(4, kHour, 4 * kHour, p), 2.0);
    EXPECT_NEAR(DecayedScore(1, 0, 90 * kMinute, p), std::sqrt(0.5), 1e-12);
    EXPECT_DOUBLE_EQ(DecayedScore(4, 5 * kHour, 5 * kHour, p), 4.0);
    EXPECT_DOUBLE_EQ(DecayedScore(4, 5 * kHour, kHour, p), 4.0);  // no rewind
    EXPECT_DOUBLE_EQ(DecayedScore(-3, 0, kHour, p), 0.0);
    EXPECT_DOUBLE_EQ(DecayedScore(std::nan(""), 0, kHour, p), 0.0);
    EXPECT_DOUBLE_EQ(DecayedScore(3, INT64_MIN, INT64_MAX, p), 0.0);
    EXPECT_DOUBLE_EQ(ScoreAfterRequest(0, 0, kHour, p), 1.0);
    EXPECT_DOUBLE_EQ(ScoreAfterRequest(2, 0, 3 * kHour, p), 2.0);
    RetentionPolicy frozen;
    frozen.half_life_ms = 0;
    EXPECT_DOUBLE_EQ(DecayedScore(4, 0, 100 * kHour, frozen), 4.0);
}

TEST(BlockRetention, EffectiveSlot) {
    RetentionPolicy p;
    CachedBlockStat b = Block(1000, 0);
    EXPECT_EQ(EffectiveSlot(b, kHour, p), 1000u);
    b.score = 1;
    EXPECT_EQ(EffectiveSlot(b, 0, p), 10000u);
    EXPECT_EQ(EffectiveSlot(b, 3 * kHour, p), 5500u);   // one half-life
    b.slot = UINT64_MAX - 10;
    EXPECT_EQ(EffectiveSlot(b, 0, p), UINT64_MAX);      // saturates
    b.score = 1e300;
    EXPECT_EQ(EffectiveSlot(b, 0, p), UINT64_MAX);
}

TEST(BlockRetention, NothingEvictedUnderMax) {
    RetentionPolicy p;
    std::vector<CachedBlockStat> entries;
    for (uint64_t s = 0; s < 10; s++) {
        entries.push_back(Block(s, 0));
    }
    EvictionPlan plan = PlanEvictions(entries, 1000, 100, 1100,
                                      10 * kHour, p);
    EXPECT_TRUE(plan.evict.empty());
    EXPECT_TRUE(plan.fits);
    EXPECT_EQ(plan.bytes_after, 1000u);
    plan = PlanEvictions(entries, 1000, 0, 1000, 10 * kHour, p);
    EXPECT_TRUE(plan.evict.empty());
    EXPECT_TRUE(plan.fits);
    // One byte over: space is needed, the lowest slot leaves.
    plan = PlanEvictions(entries, 1000, 101, 1100, 10 * kHour, p);
    EXPECT_FALSE(plan.evict.empty());
    EXPECT_EQ(plan.evict[0], 0u);
    EXPECT_TRUE(plan.fits);
}

TEST(BlockRetention, FifteenMinuteHold) {
    RetentionPolicy p;
    std::vector<CachedBlockStat> entries = {Block(100, 0, 500)};
    // 14 minutes old: survives even though the region is over max.
    int64_t now = 14 * kMinute;
    EXPECT_TRUE(IsProtected(entries[0], now, p));
    EvictionPlan plan = PlanEvictions(entries, 500, 500, 800, now, p);
    EXPECT_TRUE(plan.evict.empty());
    EXPECT_FALSE(plan.fits);            // only protected entries remain
    EXPECT_EQ(plan.bytes_after, 500u);
    now = 15 * kMinute - 1;
    EXPECT_TRUE(IsProtected(entries[0], now, p));
    // At 15 minutes it can go.
    now = 15 * kMinute;
    EXPECT_FALSE(IsProtected(entries[0], now, p));
    plan = PlanEvictions(entries, 500, 500, 800, now, p);
    EXPECT_EQ(plan.evict, std::vector<size_t>{0});
    EXPECT_TRUE(plan.fits);
    EXPECT_EQ(plan.bytes_after, 0u);
    // Written "in the future" (clock skew) counts as young.
    EXPECT_TRUE(IsProtected(Block(1, 2 * kHour), kHour, p));

    // Mixed: the old one goes, the young one stays even if that is not
    // enough, and the plan says it does not fit.
    entries = {Block(1, 0, 300), Block(2, 50 * kMinute, 300)};
    now = 60 * kMinute;                 // ages 60 and 10 minutes
    plan = PlanEvictions(entries, 600, 600, 800, now, p);
    EXPECT_EQ(plan.evict, std::vector<size_t>{0});
    EXPECT_EQ(plan.bytes_after, 300u);
    EXPECT_FALSE(plan.fits);
}

TEST(BlockRetention, HoldOverSimulatedHours) {
    // Blocks of 1000 bytes arrive every minute into a 20-block region for
    // five hours: the region never evicts anything younger than 15
    // minutes, and never goes over max.
    Region r;
    r.max_bytes = 20 * 1000;
    uint64_t slot = 1000;
    for (int64_t now = 0; now < 5 * kHour; now += kMinute) {
        EXPECT_TRUE(r.Store(Block(slot, now, 1000), now));
        slot += 150;
        EXPECT_LE(Total(r.entries), r.max_bytes);
    }
    ASSERT_FALSE(r.evicted.empty());
    for (const CachedBlockStat& e : r.evicted) {
        EXPECT_GE(e.score_ms - e.stored_ms, 15 * kMinute);
    }
    // A 10-block region cannot make room while all 15 recent blocks are
    // held: stores start failing instead of evicting young blocks.
    Region small;
    small.max_bytes = 10 * 1000;
    int failed = 0;
    slot = 1000;
    for (int64_t now = 0; now < kHour; now += kMinute) {
        failed += small.Store(Block(slot++, now, 1000), now) ? 0 : 1;
    }
    EXPECT_GT(failed, 0);
    for (const CachedBlockStat& e : small.evicted) {
        EXPECT_GE(e.score_ms - e.stored_ms, 15 * kMinute);
    }
}

TEST(BlockRetention, LowerSlotsLeaveFirst) {
    RetentionPolicy p;
    // Written in one order, evicted by slot: a backfilled older slot
    // leaves before a newer one written earlier.
    std::vector<CachedBlockStat> entries = {
        Block(500, 0), Block(300, 20 * kMinute), Block(400, 10 * kMinute),
        Block(100, 30 * kMinute)};
    EvictionPlan plan = PlanEvictions(entries, 400, 200, 400, 2 * kHour, p);
    // 400 + 200 > 400: evict down to 0.95 * 400 = 380 - 200 = 180 bytes.
    EXPECT_EQ(plan.evict, (std::vector<size_t>{3, 1, 2}));
    EXPECT_EQ(plan.bytes_after, 100u);
    EXPECT_TRUE(plan.fits);

    // Over simulated hours: with no requests the survivors are always the
    // highest slots, and every eviction takes the lowest slot held.
    Region r;
    r.max_bytes = 100 * 1000;
    uint64_t slot = 5000;
    for (int64_t now = 0; now < 6 * kHour; now += kMinute) {
        uint64_t lowest = UINT64_MAX;
        for (const CachedBlockStat& e : r.entries) {
            lowest = std::min(lowest, e.slot);
        }
        size_t before = r.evicted.size();
        r.Store(Block(slot, now, 1000), now);
        slot += 150;
        if (r.evicted.size() > before) {
            EXPECT_EQ(r.evicted[before].slot, lowest);
            // 100 held + 1 incoming: evict to 95 000 bytes, i.e. 6 go.
            EXPECT_EQ(r.evicted.size() - before, 6u);
        }
        for (size_t i = before; i + 1 < r.evicted.size(); i++) {
            EXPECT_LT(r.evicted[i].slot, r.evicted[i + 1].slot);
        }
        for (const CachedBlockStat& gone : r.evicted) {
            for (const CachedBlockStat& held : r.entries) {
                EXPECT_LT(gone.slot, held.slot);
            }
        }
    }
    EXPECT_GT(r.evicted.size(), 100u);
}

TEST(BlockRetention, RequestedOutlivesSlightlyHigherSlot) {
    RetentionPolicy p;
    std::vector<CachedBlockStat> entries = {Block(1000, 0), Block(1500, 0),
                                            Block(30000, 0)};
    Request(&entries[0], 30 * kMinute, p);     // one request, slot 1000
    int64_t now = kHour;
    EXPECT_FALSE(IsProtected(entries[0], now, p));  // one request: not hot
    // 300 + 150 > 400: down to 380 - 150 = 230 bytes, one goes.
    EvictionPlan plan = PlanEvictions(entries, 300, 150, 400, now, p);
    EXPECT_EQ(plan.evict, std::vector<size_t>{1});  // 1500 goes first
    // ...but a request does not beat a much newer block: order is
    // 1500 (1500), 1000 (1000 + 8018), 30000.
    plan = PlanEvictions(entries, 300, 300, 300, now, p);
    EXPECT_EQ(plan.evict, (std::vector<size_t>{1, 0, 2}));

    // The bonus decays: one half-life after the request it is worth half
    // as much, and a block at 1000 + 5000 now outlives it.
    now = 30 * kMinute + 3 * kHour;
    EXPECT_EQ(EffectiveSlot(entries[0], now, p), 5500u);
    entries[1].slot = 6000;
    plan = PlanEvictions(entries, 300, 150, 400, now, p);
    EXPECT_EQ(plan.evict, std::vector<size_t>{0});
}

TEST(BlockRetention, HotBlockStaysWhileRequested) {
    RetentionPolicy p;
    // Slot 10 is the oldest block; everything else is newer and old
    // enough to evict, so only its score can keep it.
    std::vector<CachedBlockStat> entries = {Block(10, 0)};
    for (uint64_t s = 0; s < 9; s++) {
        entries.push_back(Block(100000 + s, 0));
    }
    CachedBlockStat& hot = entries[0];
    // Two requests 20 minutes apart are not "several".
    Request(&hot, 10 * kMinute, p);
    Request(&hot, 30 * kMinute, p);
    EXPECT_FALSE(IsProtected(hot, 30 * kMinute, p));
    // The third within the hour makes it hot.
    Request(&hot, 50 * kMinute, p);
    double expected = std::exp2(-40.0 / 180) + std::exp2(-20.0 / 180) + 1;
    EXPECT_NEAR(hot.score, expected, 1e-12);
    EXPECT_TRUE(IsProtected(hot, 50 * kMinute, p));
    EXPECT_TRUE(IsProtected(hot, kHour, p));

    // Requests keep coming once an hour for five hours: checked every 10
    // minutes, it is never evicted even when everything else goes.
    int64_t last_request = 50 * kMinute;
    for (int64_t now = kHour; now <= 6 * kHour; now += 10 * kMinute) {
        if (now - last_request >= kHour) {
            Request(&hot, now, p);
            last_request = now;
        }
        EXPECT_TRUE(IsProtected(hot, now, p)) << now / kMinute;
        EvictionPlan plan = PlanEvictions(entries, 1000, 1000, 1000, now, p);
        EXPECT_FALSE(Evicts(plan, 0)) << now / kMinute;
        EXPECT_EQ(plan.evict.size(), 9u);
        EXPECT_FALSE(plan.fits);
    }

    // Requests stop. The score s falls to hot_score after
    // half_life * log2(s / hot_score).
    double s = hot.score;
    ASSERT_GT(s, p.hot_score);
    int64_t crossing = last_request + static_cast<int64_t>(
        p.half_life_ms * std::log2(s / p.hot_score));
    EXPECT_GT(crossing - last_request, 2 * kHour);   // "a few hours"
    EXPECT_LT(crossing - last_request, 5 * kHour);
    EXPECT_TRUE(IsProtected(hot, crossing - 1000, p));
    EXPECT_FALSE(IsProtected(hot, crossing + 1000, p));
    EvictionPlan plan =
        PlanEvictions(entries, 1000, 100, 1000, crossing - 1000, p);
    EXPECT_FALSE(Evicts(plan, 0));
    plan = PlanEvictions(entries, 1000, 100, 1000, crossing + 1000, p);
    // Just cooled: effective slot 10 + 17999, still the lowest.
    EXPECT_EQ(plan.evict.front(), 0u);

    // Exactly three requests in one hour, then silence: hot for
    // 3 h * log2(s / 2) after the last, about 1.4 h.
    CachedBlockStat three = Block(10, 0);
    Request(&three, kHour, p);
    Request(&three, kHour + 20 * kMinute, p);
    Request(&three, kHour + 40 * kMinute, p);
    int64_t cool = kHour + 40 * kMinute + static_cast<int64_t>(
        p.half_life_ms * std::log2(three.score / 2));
    EXPECT_NEAR(static_cast<double>(cool - (kHour + 40 * kMinute)) / kHour,
                1.43, 0.01);
    EXPECT_TRUE(IsProtected(three, cool - 1000, p));
    EXPECT_FALSE(IsProtected(three, cool + 1000, p));
}

TEST(BlockRetention, EvictionStopsAtLowWatermark) {
    RetentionPolicy p;
    std::vector<CachedBlockStat> entries;
    for (uint64_t s = 0; s < 20; s++) {
        entries.push_back(Block(s, 0));     // 20 x 100 bytes
    }
    int64_t now = 10 * kHour;
    // 2000 + 100 > 2000: down to 1900 - 100 = 1800 bytes, two go.
    EvictionPlan plan = PlanEvictions(entries, 2000, 100, 2000, now, p);
    EXPECT_EQ(plan.evict, (std::vector<size_t>{0, 1}));
    EXPECT_EQ(plan.bytes_after, 1800u);
    EXPECT_TRUE(plan.fits);

    p.low_watermark = 1.0;                  // just enough
    plan = PlanEvictions(entries, 2000, 100, 2000, now, p);
    EXPECT_EQ(plan.evict, std::vector<size_t>{0});
    EXPECT_EQ(plan.bytes_after, 1900u);

    p.low_watermark = 0.5;                  // down to 1000 - 100 = 900
    plan = PlanEvictions(entries, 2000, 100, 2000, now, p);
    EXPECT_EQ(plan.evict.size(), 11u);
    EXPECT_EQ(plan.bytes_after, 900u);

    p.low_watermark = 7;                    // clamped to 1
    plan = PlanEvictions(entries, 2000, 100, 2000, now, p);
    EXPECT_EQ(plan.evict.size(), 1u);

    // total_bytes larger than the entries add up to: evicts them all and
    // still does not fit.
    p.low_watermark = 0.95;
    plan = PlanEvictions(entries, 5000, 100, 2000, now, p);
    EXPECT_EQ(plan.evict.size(), 20u);
    EXPECT_EQ(plan.bytes_after, 3000u);
    EXPECT_FALSE(plan.fits);
}

TEST(BlockRetention, TiesOlderWriteThenIndex) {
    RetentionPolicy p;
    std::vector<CachedBlockStat> entries = {
        Block(7, 2 * kHour), Block(7, kHour), Block(7, kHour),
        Block(6, 3 * kHour)};
    EvictionPlan plan = PlanEvictions(entries, 400, 400, 400, 5 * kHour, p);
    EXPECT_EQ(plan.evict, (std::vector<size_t>{3, 1, 2, 0}));
}

}  // namespace
}  // namespace solgate
