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

TEST(RegionClaimsTest, AFinishDeclaresTheAllowancesItMayGiveBack) {
    ScriptStore store;
    FleetRegionClaims claims(store, "sg:", "mainnet", "us-east", "host-a",
                             {"arch"});
    RegionAsk ask;
    ask.slot = 250;
    ask.variant = "getBlock/json/full/r1/v0";
    ask.keys = {"k1"};
    ask.wall_ms = 1767225600000 + 3600 * 1000;   // 2026-01-01 01:00
    claims.Finish(ask, false, [](std::optional<RegionRetrievals::Finished>) {
    });
    // a count made before midnight went to December's, one by a host whose
    // clock is ahead may go to the next month's: their keys are passed
    // (Redis Cluster wants every key a script touches among its KEYS)
    ASSERT_EQ(store.last_keys.size(), 5u);
    EXPECT_EQ(store.last_keys[2], "sg:{mainnet:us-east}:allow:2026-01");
    EXPECT_EQ(store.last_keys[3], "sg:{mainnet:us-east}:allow:2025-12");
    EXPECT_EQ(store.last_keys[4], "sg:{mainnet:us-east}:allow:2026-01");
    EXPECT_EQ(store.last_args[3], "2025-12");
    EXPECT_EQ(store.last_args[4], "2026-01");
    EXPECT_EQ(store.last_args[7], "2026-01");
}

TEST(RegionClaimsTest, ParsesTheClaimScriptsAnswers) {
    RegionClaim c;
    ASSERT_TRUE(ParseRegionClaim({"mine", "host-a", "0", "1", "1", "2", "2",
                                  "0", "3"},
                                 3, &c));
    EXPECT_EQ(c.kind, RegionClaim::kMine);
    EXPECT_EQ(c.holder, "host-a");
    EXPECT_EQ(c.counted, (std::vector<bool>{true, false, false}));
    EXPECT_EQ(c.in_claim, (std::vector<bool>{true, true, false}))
        << "2: counted for this block before";
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

TEST(RegionClaimsTest, AForwardedAskGoesThroughTheIntakeWhole) {
    RegionAsk ask;
    ask.slot = 250;
    ask.variant = "getBlock/json/full/r1/v0";
    ask.keys = {"k1", "key two"};
    RegionAsk back;
    ASSERT_TRUE(DecodeForwarded(EncodeForwarded(ask), 3, &back));
    EXPECT_EQ(back.plan, 3u);
    EXPECT_EQ(back.slot, 250u);
    EXPECT_EQ(back.variant, ask.variant);
    EXPECT_EQ(back.keys, ask.keys);
    EXPECT_FALSE(DecodeForwarded("250\ngetBlock/json/full/r1/v0", 0, &back))
        << "no key";
    EXPECT_FALSE(DecodeForwarded("x\nv\nk", 0, &back));
    EXPECT_FALSE(DecodeForwarded("", 0, &back));
}

TEST(RegionClaimsTest, ReceiptsGoOneSetPerKeyAndHour) {
    ScriptStore store;
    FleetRegionClaims claims(store, "sg:", "mainnet", "us-east", "host-a",
                             {"arch"});
    int64_t hour = 490000;
    int64_t at = hour * kHourMs;
    claims.NoteReceipts({{"k1", 250, at},
                         {"k2", 251, at + 10},
                         {"k1", 252, at + kHourMs - 1},
                         {"k1", 253, at + kHourMs}});
    EXPECT_EQ(store.evals, 1);
    EXPECT_EQ(store.last_keys,
              (FleetStore::Words{"sg:{mainnet:us-east}:rc:490000:k1",
                                 "sg:{mainnet:us-east}:rc:490000:k2",
                                 "sg:{mainnet:us-east}:rc:490001:k1"}));
    EXPECT_EQ(store.last_args,
              (FleetStore::Words{std::to_string(kRegionReceiptKeepMs), "2",
                                 "250", "252", "1", "251", "1", "253"}));

    // whether received: the 25 hours up to the ask, for each key
    RegionAsk ask;
    ask.slot = 250;
    ask.keys = {"k1", "k2"};
    ask.wall_ms = at + 5;
    std::optional<std::vector<bool>> got;
    claims.FindReceived(ask, [&got](std::optional<std::vector<bool>> r) {
        got = std::move(r);
    });
    ASSERT_EQ(store.last_keys.size(), 2u * kReceiptHours);
    EXPECT_EQ(store.last_keys[0], "sg:{mainnet:us-east}:rc:490000:k1");
    EXPECT_EQ(store.last_keys[24], "sg:{mainnet:us-east}:rc:489976:k1");
    EXPECT_EQ(store.last_keys[25], "sg:{mainnet:us-east}:rc:490000:k2");
    EXPECT_EQ(store.last_args, (FleetStore::Words{"250", "25"}));
    store.Answer(FleetStore::Words{"1", "0"});
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, (std::vector<bool>{true, false}));
    claims.FindReceived(ask, [&got](std::optional<std::vector<bool>> r) {
        got = std::move(r);
    });
    store.Answer(FleetStore::Words{"1"});   // not one answer per key
    EXPECT_FALSE(got.has_value());
}

TEST(RegionClaimsTest, ManyReceiptsAreSentInScriptsOfBoundedSize) {
    ScriptStore store;
    FleetRegionClaims claims(store, "sg:", "mainnet", "us-east", "host-a",
                             {"arch"});
    std::vector<RegionReceipt> receipts;
    for (uint64_t slot = 0; slot < 2500; slot++) {
        receipts.push_back({"k1", slot, 0});
    }
    claims.NoteReceipts(receipts);
    EXPECT_EQ(store.evals, 3);
    EXPECT_EQ(store.last_keys.size(), 1u);
    EXPECT_EQ(store.last_args[1], "500");
}

}  // namespace
}  // namespace solgate
