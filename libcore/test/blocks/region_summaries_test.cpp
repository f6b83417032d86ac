// What each region's cache holds: the other regions' summaries, trusted
// for kPeerSummaryTtlMs, and this region's own, rebuilt when the index
// moved and rendered for the other regions.
#include "blocks/region_summaries.h"

#include <gtest/gtest.h>

namespace solgate {
namespace {

constexpr int64_t kNow = 1'000'000;
const char kJsonV0[] = "getBlock/json/full/r1/v0";
const char kJsonLegacy[] = "getBlock/json/full/r1/v-";
const char kBase64[] = "getBlock/base64/full/r1/v0";

SlotRanges Ranges(const std::string& text) {
    return SlotRanges::Parse(text).value();
}

BlockStore::Entry Entry(const std::string& variant, uint64_t slot) {
    BlockStore::Entry e;
    e.variant = variant;
    e.slot = slot;
    return e;
}

TEST(PeerSummaries, HeldWhileFresh) {
    PeerSummaries s;
    s.Store(1, kNow, {{kJsonV0, Ranges("100-200")}});
    EXPECT_TRUE(s.Holds(1, kJsonV0, 150, kNow));
    EXPECT_TRUE(s.Holds(1, kJsonV0, 150, kNow + kPeerSummaryTtlMs));
    EXPECT_FALSE(s.Holds(1, kJsonV0, 150, kNow + kPeerSummaryTtlMs + 1));
    EXPECT_FALSE(s.Holds(1, kJsonV0, 201, kNow));
    EXPECT_FALSE(s.Holds(1, kBase64, 150, kNow));   // another variant
    EXPECT_FALSE(s.Holds(0, kJsonV0, 150, kNow));   // another peer
    ASSERT_EQ(s.Fresh(1, kNow).size(), 1u);
    EXPECT_EQ(s.Fresh(1, kNow)[0].second, Ranges("100-200"));
    EXPECT_TRUE(s.Fresh(1, kNow + kPeerSummaryTtlMs + 1).empty());
}

TEST(PeerSummaries, AFailedPeerHoldsNothing) {
    PeerSummaries s;
    s.Store(0, kNow, {{kJsonV0, Ranges("1-9")}});
    s.MarkFailed(0);
    EXPECT_FALSE(s.Holds(0, kJsonV0, 5, kNow));
    EXPECT_TRUE(s.Fresh(0, kNow).empty());
    s.Store(0, kNow + 1, {{kJsonV0, Ranges("1-9")}});
    EXPECT_TRUE(s.Holds(0, kJsonV0, 5, kNow + 1));
}

TEST(PeerSummaries, PeersBeyondTheLimitAreIgnored) {
    PeerSummaries s;
    s.Store(kMaxBlockPeers, kNow, {{kJsonV0, Ranges("1-9")}});
    s.MarkFailed(kMaxBlockPeers);
    EXPECT_FALSE(s.Holds(kMaxBlockPeers, kJsonV0, 5, kNow));
    EXPECT_TRUE(s.Fresh(kMaxBlockPeers, kNow).empty());
}

TEST(CacheSummary, RebuiltWhenTheIndexMovedOrEveryTtl) {
    CacheSummary s;
    EXPECT_FALSE(s.Stale(0, 1));   // nothing yet, nothing changed
    EXPECT_TRUE(s.Stale(1, 1));
    s.Rebuild({Entry(kBase64, 7), Entry(kJsonV0, 10), Entry(kJsonV0, 11),
               Entry(kJsonV0, 13)},
              5, kNow);
    EXPECT_FALSE(s.Stale(5, kNow + kPeerSummaryTtlMs - 1));
    EXPECT_TRUE(s.Stale(5, kNow + kPeerSummaryTtlMs));
    EXPECT_TRUE(s.Stale(6, kNow));
    RegionSummary ranges = s.Ranges();
    ASSERT_EQ(ranges.size(), 2u);
    EXPECT_EQ(ranges[0].first, kBase64);
    EXPECT_EQ(ranges[0].second, Ranges("7"));
    EXPECT_EQ(ranges[1].first, kJsonV0);
    EXPECT_EQ(ranges[1].second, Ranges("10-11,13"));
}

TEST(CacheSummary, RendersWhatAnotherRegionParses) {
    CacheSummary s;
    EXPECT_EQ(s.Render("us", "mainnet", 42),
              R"({"region":"us","network":"mainnet","generated_ms":42,)"
              R"("variants":{}})");
    s.Rebuild({Entry(kJsonV0, 4900), Entry(kJsonV0, 4901),
               Entry(kJsonLegacy, 3)},
              1, kNow);
    EXPECT_EQ(s.Render("us \"east\"", "main", 7),
              R"({"region":"us \"east\"","network":"main",)"
              R"("generated_ms":7,"variants":{)"
              R"("getBlock/json/full/r1/v0":"4900-4901",)"
              R"("getBlock/json/full/r1/v-":"3"}})");
}

TEST(CacheSummary, ExtendsTheLedgerWindowDownByPlainGetBlocksOnly) {
    CacheSummary s;
    EXPECT_EQ(s.ExtendDown(4000), 4000u);
    s.Rebuild({Entry(kBase64, 3990), Entry(kBase64, 3991),
               Entry(kBase64, 3992), Entry(kBase64, 3993),
               Entry(kBase64, 3994), Entry(kBase64, 3995),
               Entry(kBase64, 3996), Entry(kBase64, 3997),
               Entry(kBase64, 3998), Entry(kBase64, 3999),
               Entry(kJsonV0, 3990), Entry(kJsonV0, 3998),
               Entry(kJsonV0, 3999), Entry(kJsonLegacy, 3997),
               Entry(kJsonLegacy, 3998), Entry(kJsonLegacy, 3999)},
              1, kNow);
    // base64 does not count; the legacy json variant reaches lowest.
    EXPECT_EQ(s.ExtendDown(4000), 3997u);
    EXPECT_EQ(s.ExtendDown(3999), 3997u);
    EXPECT_EQ(s.ExtendDown(5000), 5000u);   // 4999 is not cached
    EXPECT_EQ(s.ExtendDown(0), 0u);
}

}  // namespace
}  // namespace solgate
