// The keys' rate buckets kept in step with the region: what a host tells
// the store each tick, and what it does with the answer (the script itself
// runs in t/100-fleet.t against redis-server).
#include "fleet/region_rates.h"

#include <gtest/gtest.h>

#include "support/blocks_zone.h"
#include "support/fakes.h"
#include "support/script_store.h"

namespace solgate {
namespace {

using testing::Accept;
using testing::ScriptStore;
using testing::TestNetwork;

BlockConfBuilder ASlowPlan() {
    BlockConfBuilder conf;
    Accept(conf.Region("us-east"));
    Accept(conf.PlanDefine("slow", {"tier=free", "getblock_rate=2r/s"}));
    Accept(conf.PlanDefine("bulk", {"tier=operator", "getblock_rate=0"}));
    return conf;
}

class RegionRatesTest : public ::testing::Test {
protected:
    RegionRatesTest()
        : net(1),
          rig(net.network, "solgate-rates", ASlowPlan()),
          zone(rig.service()->zone()),
          plan(static_cast<uint32_t>(
              testing::PlanIndex(rig.service()->conf(), "slow"))),
          rates(rig.service()->conf(), zone, store, "sg:", "mainnet", 7) {
        EXPECT_EQ(rig.error(), "");
    }

    // A getBlock call of the key at now_ms: allowed or not.
    bool Call(const std::string& key) {
        KeyId id = *zone.keys().FindOrAdd(key, plan, now_ms);
        return zone.keys().CheckRate(id, 2, now_ms * 1000).allowed;
    }

    TestNetwork net;
    testing::BlockServiceRig rig;
    SharedBlocks& zone;
    uint32_t plan;
    ScriptStore store;
    RegionRates rates;
    int64_t now_ms = 1000000;
};

TEST_F(RegionRatesTest, TellsTheRegionTheCallsAllowedHereSinceTheLastTick) {
    rates.Tick(now_ms);   // takes the lease: nothing to tell yet
    EXPECT_EQ(store.evals, 0);
    EXPECT_TRUE(Call("k1"));   // a key new since then: all its calls told
    EXPECT_TRUE(Call("k1"));
    EXPECT_FALSE(Call("k1"));   // the burst of 2 is spent: not told
    rates.Tick(now_ms);
    ASSERT_EQ(store.evals, 1);
    EXPECT_EQ(store.last_keys,
              (FleetStore::Words{"sg:{mainnet:us-east}:rate"}));
    EXPECT_EQ(store.last_args, (FleetStore::Words{"k1", "2", "500000"}));
    store.Answer(FleetStore::Words{"1000000"});
    // the next tick tells only what came since; an idle active key is
    // still asked about (other hosts may fill it)
    rates.Tick(now_ms);
    EXPECT_EQ(store.last_args, (FleetStore::Words{"k1", "0", "500000"}));
}

TEST_F(RegionRatesTest, TheRegionsBucketFillsTheHostsOwn) {
    rates.Tick(now_ms);
    Call("k1");   // one of the burst of 2 here
    rates.Tick(now_ms);
    // other hosts spent more: the region's bucket is 3 s ahead
    store.Answer(FleetStore::Words{"3000000"});
    EXPECT_FALSE(Call("k1")) << "refused here for the region's calls";
    now_ms += 2600;   // 3 s - a burst's tolerance (0.5 s) later
    EXPECT_TRUE(Call("k1"));
}

TEST_F(RegionRatesTest, NothingIsAskedWhileTheStoreIsDown) {
    rates.Tick(now_ms);
    Call("k1");
    store.up = false;
    rates.Tick(now_ms);
    EXPECT_EQ(store.evals, 0);
    EXPECT_TRUE(Call("k1")) << "the host's own limit holds";
}

TEST_F(RegionRatesTest, OnlyTheLeaseHolderTellsAndATakeOverTellsNoHistory) {
    RegionRates other(rig.service()->conf(), zone, store, "sg:", "mainnet", 8);
    rates.Tick(now_ms);   // pid 7 holds the lease now
    for (int i = 0; i < 2; i++) {
        Call("k1");
        now_ms += 1000;
    }
    rates.Tick(now_ms);
    store.Answer(FleetStore::Words{"0"});
    other.Tick(now_ms);
    EXPECT_EQ(store.evals, 1) << "pid 8 does not hold it";
    for (int i = 0; i < 40; i++) {
        now_ms += 1000;
        Call("k1");
    }
    zone.leases().ReleaseLease(kRateSyncLease, 7);
    other.Tick(now_ms);
    ASSERT_EQ(store.evals, 2);
    // 40 calls here since pid 7 last told: pid 8 tells none of them (it
    // cannot know what was told), only what comes from now on
    EXPECT_EQ(store.last_args[1], "0");
    store.Answer(FleetStore::Words{"0"});
    for (int i = 0; i < 40; i++) {
        now_ms += 10;
        Call("k1");
    }
    other.Tick(now_ms);
    // 40 more in 0.4 s: the one the full bucket allowed here is told
    ASSERT_EQ(store.evals, 3);
    EXPECT_EQ(store.last_args[1], "1");
}

TEST_F(RegionRatesTest, KeysWithoutALimitAreNotTold) {
    KeyId id = *zone.keys().FindOrAdd(
        "k-bulk", static_cast<uint32_t>(testing::PlanIndex(
                      rig.service()->conf(), "bulk")),
        now_ms);
    rates.Tick(now_ms);
    zone.keys().CheckRate(id, 0, now_ms * 1000);
    rates.Tick(now_ms);
    EXPECT_EQ(store.evals, 0);
}

}  // namespace
}  // namespace solgate
