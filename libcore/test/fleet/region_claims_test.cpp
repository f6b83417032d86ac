// The region claims' keys and the parsing of the claim script's answers
// (the scripts themselves run in t/100-fleet.t against redis-server).
#include "fleet/region_claims.h"

#include <gtest/gtest.h>

#include "support/script_store.h"

namespace solgate {
namespace {

using testing::ScriptStore;

TEST(RegionClaimsTest, EveryKeyOfARegionCarriesItsHashTag) {
    ScriptStore store;
    FleetRegionClaims claims(store, "sg:", "mainnet", "us-east", "host-a",
                             {"free", "arch"});
    RegionAsk ask;
    ask.plan = 1;
    ask.slot = 250;
    ask.variant = "getBlock/json/full/r1/v0";
    ask.keys = {"k1"};
    ask.wall_ms = 1767225600000;   // 2026-01-01
    RegionClaim got;
    got.kind = RegionClaim::kMine;
    claims.Claim(ask, 1000, [&got](RegionClaim c) { got = c; });
    store.Answer(std::nullopt);   // the store did not answer
    EXPECT_EQ(got.kind, RegionClaim::kDown);
    ASSERT_EQ(store.last_keys.size(), 4u);
    EXPECT_EQ(store.last_keys[0],
              "sg:{mainnet:us-east}:lt:getBlock/json/full/r1/v0:250");
    EXPECT_EQ(store.last_keys[1], store.last_keys[0] + ":w");
    EXPECT_EQ(store.last_keys[2], "sg:{mainnet:us-east}:allow:2026-01");
    EXPECT_EQ(store.last_keys[3], "sg:{mainnet:us-east}:pace:arch");
}

TEST(RegionClaimsTest, ParsesTheClaimScriptsAnswers) {
    RegionClaim c;
    ASSERT_TRUE(ParseRegionClaim({"mine", "host-a", "0", "1", "1", "2", "2",
                                  "0", "3"},
                                 3, &c));
    EXPECT_EQ(c.kind, RegionClaim::kMine);
    EXPECT_EQ(c.holder, "host-a");
    EXPECT_EQ(c.counted, (std::vector<bool>{true, false, false}));
    EXPECT_EQ(c.used, (std::vector<uint64_t>{1, 2, 3}));

    ASSERT_TRUE(ParseRegionClaim({"wait", "", "40"}, 2, &c));
    EXPECT_EQ(c.kind, RegionClaim::kWait);
    EXPECT_EQ(c.wait_ms, 40);
    ASSERT_TRUE(ParseRegionClaim({"elsewhere", "host-b", "0", "1", "1"}, 1,
                                 &c));
    EXPECT_EQ(c.kind, RegionClaim::kElsewhere);
    EXPECT_EQ(c.holder, "host-b");

    EXPECT_FALSE(ParseRegionClaim({"mine", "h", "0", "1"}, 1, &c));
    EXPECT_FALSE(ParseRegionClaim({"maybe", "h", "0"}, 0, &c));
    EXPECT_FALSE(ParseRegionClaim({"mine", "h", "0", "3", "1"}, 1, &c));
    EXPECT_FALSE(ParseRegionClaim({"mine", "h", "0", "1", "-1"}, 1, &c));
    EXPECT_FALSE(ParseRegionClaim({}, 0, &c));
}

}  // namespace
}  // namespace solgate
