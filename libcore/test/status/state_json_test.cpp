// The JSON document of GET /solgate/state (state_json.h): key order,
// settings, upstream figures, cordons, leases and unbound networks.
#include <gtest/gtest.h>
#include <yajl/yajl_tree.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "support/fakes.h"
#include "slots/state_poller.h"
#include "status/state_blocks_json.h"
#include "status/state_json.h"
#include "status/status_page.h"
#include "status/status_fixtures.h"

namespace solgate {
namespace {

using testing::CordonByOperator;
using testing::CordonByPollerForLag;
using testing::kNowMono;
using testing::kNowWall;
using testing::Mainnet;
using testing::NamedNetwork;
using testing::TestNetwork;

class Json {
public:
    explicit Json(const std::string& text) {
        char error[256] = {0};
        root_ = yajl_tree_parse(text.c_str(), error, sizeof(error));
        error_ = error;
    }
    ~Json() { yajl_tree_free(root_); }
    Json(const Json&) = delete;
    Json& operator=(const Json&) = delete;

    yajl_val root() const { return root_; }
    const std::string& error() const { return error_; }

private:
    yajl_val root_ = nullptr;
    std::string error_;
};

yajl_val At(yajl_val value, std::initializer_list<const char*> keys) {
    std::vector<const char*> path(keys);
    path.push_back(nullptr);
    return yajl_tree_get(value, path.data(), yajl_t_any);
}

yajl_val Index(yajl_val array, size_t i) {
    if (!YAJL_IS_ARRAY(array) || i >= array->u.array.len) {
        return nullptr;
    }
    return array->u.array.values[i];
}

long long Int(yajl_val value) {
    EXPECT_TRUE(YAJL_IS_INTEGER(value));
    return YAJL_IS_INTEGER(value) ? YAJL_GET_INTEGER(value) : -1;
}

std::string Str(yajl_val value) {
    EXPECT_TRUE(YAJL_IS_STRING(value));
    return YAJL_IS_STRING(value) ? YAJL_GET_STRING(value) : "";
}

std::vector<std::string> Keys(yajl_val object) {
    std::vector<std::string> keys;
    if (YAJL_IS_OBJECT(object)) {
        for (size_t i = 0; i < object->u.object.len; i++) {
            keys.push_back(object->u.object.keys[i]);
        }
    }
    return keys;
}

yajl_val NetworkAt(const Json& json, size_t n) {
    return Index(At(json.root(), {"networks"}), n);
}

yajl_val UpstreamAt(const Json& json, size_t n, size_t u) {
    return Index(At(NetworkAt(json, n), {"upstreams"}), u);
}


TEST(StatusRenderState, NetworkSettingsAndKeyOrder) {
    TestNetwork net(1, Mainnet());
    Json json(RenderState({&net.network}, kNowMono, kNowWall));
    ASSERT_NE(json.root(), nullptr) << json.error();

    EXPECT_EQ(Keys(json.root()),
              (std::vector<std::string>{"networks", "generated_at"}));
    EXPECT_EQ(Str(At(json.root(), {"generated_at"})),
              "2023-11-14T22:13:20.123Z");

    yajl_val n = NetworkAt(json, 0);
    EXPECT_EQ(Keys(n), (std::vector<std::string>{
                           "name", "cluster", "commitment",
                           "state_poller_debounce_ms", "max_finalized_slot_lag",
                           "max_slot_lag", "use_upstream_from_client",
                           "enforce_block_availability", "retry_missing_data",
                           "max_batch_size", "broadcast", "consensus",
                           "hedge", "tips", "guard_margin",
                           "counters", "shared_state", "upstreams"}));
    EXPECT_EQ(Str(At(n, {"name"})), "mainnet");
    EXPECT_EQ(Str(At(n, {"cluster"})), "mainnet-beta");
    EXPECT_TRUE(YAJL_IS_NULL(At(n, {"commitment"})));
    EXPECT_EQ(Int(At(n, {"state_poller_debounce_ms"})), 400);
    EXPECT_EQ(Int(At(n, {"max_finalized_slot_lag"})), 100);
    EXPECT_TRUE(YAJL_IS_TRUE(At(n, {"enforce_block_availability"})));
    EXPECT_EQ(Int(At(n, {"guard_margin"})), 3);
    EXPECT_EQ(Keys(At(n, {"tips"})),
              (std::vector<std::string>{"processed", "finalized", "indexed"}));
    EXPECT_EQ(Keys(At(n, {"counters"})),
              (std::vector<std::string>{"getslot_corrections",
                                        "guard_rejections",
                                        "all_cordoned_fallbacks"}));
    EXPECT_EQ(Keys(UpstreamAt(json, 0, 0)),
              (std::vector<std::string>{
                  "id", "processed_slot", "finalized_slot", "shred_insert_slot",
                  "ingestion_lag_slots", "observed_processed_slot",
                  "slot_lag_slots", "slots_current", "lagging", "weight",
                  "debounce_ms", "backup", "latency_ewma_us", "failure_share_pct", "ejected_for_ms",
                  "ejections", "drain_for_ms", "ws_open", "health", "healthy",
                  "genesis",
                  "cordon", "lease", "polled_by", "traffic_seen_ms_ago", "polls",
                  "poll_errors", "large_rollbacks", "cordon_events",
                  "gate_skipped_ticks", "harvested"}));
}

TEST(StatusRenderState, CommitmentAndCustomSettings) {
    NetworkSettings s;
    s.default_commitment = SG_COMMITMENT_FINALIZED;
    s.debounce_ms = 800;
    s.max_finalized_slot_lag = 0;
    s.enforce_block_availability = false;
    NamedNetwork net("local", 1, s);
    Json json(RenderState({&net.network}, kNowMono, kNowWall));
    ASSERT_NE(json.root(), nullptr) << json.error();

    yajl_val n = NetworkAt(json, 0);
    EXPECT_EQ(Str(At(n, {"name"})), "local");
    EXPECT_EQ(Str(At(n, {"cluster"})), "custom");
    EXPECT_EQ(Str(At(n, {"commitment"})), "finalized");
    EXPECT_EQ(Int(At(n, {"state_poller_debounce_ms"})), 800);
    EXPECT_EQ(Int(At(n, {"max_finalized_slot_lag"})), 0);
    EXPECT_TRUE(YAJL_IS_FALSE(At(n, {"enforce_block_availability"})));
    EXPECT_EQ(Int(At(n, {"guard_margin"})), 4);
}

// An operator's drain shows, with its time left, and the subscriptions
// an upstream holds on this host.
TEST(StatusRenderState, ADrainAndTheSubscriptionsShow) {
    TestNetwork net(2, Mainnet());
    net.network.DrainSubscribers(1, kNowMono - 5000, 30000);
    net.network.host(1).ws_open = 7;
    Json json(RenderState({&net.network}, kNowMono, kNowWall));
    ASSERT_NE(json.root(), nullptr) << json.error();
    EXPECT_EQ(Int(At(UpstreamAt(json, 0, 1), {"drain_for_ms"})), 25000);
    EXPECT_EQ(Int(At(UpstreamAt(json, 0, 1), {"ws_open"})), 7);
    EXPECT_EQ(Int(At(UpstreamAt(json, 0, 0), {"drain_for_ms"})), 0);

    std::string page = RenderStatusPage({&net.network}, kNowMono, kNowWall);
    EXPECT_NE(page.find("draining 25 s"), std::string::npos) << page;
    EXPECT_EQ(page.find("draining", page.find("data-upstream=\"up-0\"")),
              page.find("draining 25 s"))
        << "up-0 is not drained";
}

// A node whose slot polls fail: no lag made of its last slot; and no
// "polled by" outside a fleet, whatever a fleet of an earlier configuration
// left in the zone.
TEST(StatusRenderState, NoLagWhilePollsFailNoPolledByWithoutAFleet) {
    TestNetwork net(2, Mainnet());
    for (size_t i = 0; i < 2; i++) {
        net.network.record(i).processed = 2000;
        net.network.record(i).observed_processed = i == 0 ? 2000 : 1500;
    }
    net.network.host(1).slot_polls_failing = 1;
    net.network.host(0).polled_by.Write("gw-b");
    Json json(RenderState({&net.network}, kNowMono, kNowWall));
    ASSERT_NE(json.root(), nullptr) << json.error();
    EXPECT_TRUE(YAJL_IS_NULL(At(UpstreamAt(json, 0, 1), {"slot_lag_slots"})));
    EXPECT_TRUE(YAJL_IS_FALSE(At(UpstreamAt(json, 0, 1), {"slots_current"})));
    EXPECT_TRUE(YAJL_IS_NULL(At(UpstreamAt(json, 0, 0), {"polled_by"})));
    net.shared->counters.fleet_link = kFleetLinkUp;
    Json fleet(RenderState({&net.network}, kNowMono, kNowWall));
    EXPECT_EQ(Str(At(UpstreamAt(fleet, 0, 0), {"polled_by"})), "gw-b");
    EXPECT_EQ(Str(At(NetworkAt(fleet, 0), {"shared_state"})), "up");
    EXPECT_TRUE(YAJL_IS_NULL(At(NetworkAt(json, 0), {"shared_state"})));
}

TEST(StatusRenderState, ColdUpstream) {
    TestNetwork net(1, Mainnet());
    Json json(RenderState({&net.network}, kNowMono, kNowWall));
    ASSERT_NE(json.root(), nullptr) << json.error();

    yajl_val u = UpstreamAt(json, 0, 0);
    EXPECT_EQ(Str(At(u, {"id"})), "up-0");
    EXPECT_EQ(Int(At(u, {"processed_slot"})), 0);
    EXPECT_EQ(Int(At(u, {"finalized_slot"})), 0);
    EXPECT_EQ(Int(At(u, {"shred_insert_slot"})), 0);
    EXPECT_EQ(Int(At(u, {"ingestion_lag_slots"})), 0);
    EXPECT_EQ(Str(At(u, {"health"})), "unknown");
    EXPECT_TRUE(YAJL_IS_TRUE(At(u, {"healthy"})));
    EXPECT_EQ(Str(At(u, {"genesis"})), "unchecked");
    EXPECT_TRUE(YAJL_IS_NULL(At(u, {"cordon"})));
    EXPECT_TRUE(YAJL_IS_NULL(At(u, {"lease"})));
    EXPECT_TRUE(YAJL_IS_NULL(At(u, {"traffic_seen_ms_ago", "processed"})));
    EXPECT_TRUE(YAJL_IS_NULL(At(u, {"traffic_seen_ms_ago", "finalized"})));
    EXPECT_EQ(Keys(At(u, {"polls"})),
              (std::vector<std::string>{"getHealth", "getSlot_processed",
                                        "getSlot_finalized",
                                        "getMaxShredInsertSlot",
                                        "getGenesisHash",
                                        "getFirstAvailableBlock"}));
    EXPECT_EQ(Keys(At(u, {"poll_errors"})), Keys(At(u, {"polls"})));
    EXPECT_EQ(Int(At(u, {"polls", "getHealth"})), 0);
    EXPECT_EQ(Int(At(u, {"harvested"})), 0);

    yajl_val n = NetworkAt(json, 0);
    EXPECT_EQ(Int(At(n, {"tips", "processed"})), 0);
    EXPECT_EQ(Int(At(n, {"counters", "guard_rejections"})), 0);
}

TEST(StatusRenderState, PollerCordonedLaggingUpstream) {
    TestNetwork net(2, Mainnet());
    UpstreamRecord& slot = net.network.record(1);
    slot.processed = 100;
    slot.finalized = 68;
    slot.shred = 350;
    slot.health = static_cast<uint32_t>(HealthOutcome::kOk);
    slot.genesis = static_cast<uint32_t>(GenesisCheck::kMatches);
    CordonByPollerForLag(slot, 250, kNowWall - 60000);
    slot.host.cordon_events = 1;

    Json json(RenderState({&net.network}, kNowMono, kNowWall));
    ASSERT_NE(json.root(), nullptr) << json.error();

    yajl_val u = UpstreamAt(json, 0, 1);
    EXPECT_EQ(Str(At(u, {"id"})), "up-1");
    EXPECT_EQ(Int(At(u, {"processed_slot"})), 100);
    EXPECT_EQ(Int(At(u, {"finalized_slot"})), 68);
    EXPECT_EQ(Int(At(u, {"shred_insert_slot"})), 350);
    EXPECT_EQ(Int(At(u, {"ingestion_lag_slots"})), 250);
    EXPECT_EQ(Str(At(u, {"health"})), "ok");
    EXPECT_TRUE(YAJL_IS_FALSE(At(u, {"healthy"})));
    EXPECT_EQ(Str(At(u, {"genesis"})), "matches");
    EXPECT_EQ(Keys(At(u, {"cordon"})),
              (std::vector<std::string>{"by", "reason", "since"}));
    EXPECT_EQ(Str(At(u, {"cordon", "by"})), "poller");
    EXPECT_EQ(Str(At(u, {"cordon", "reason"})), CordonReason(net.network, 1));
    EXPECT_NE(Str(At(u, {"cordon", "reason"})).find("shred-insert lag 250"),
              std::string::npos);
    EXPECT_EQ(Str(At(u, {"cordon", "since"})), "2023-11-14T22:12:20.123Z");
    EXPECT_EQ(Int(At(u, {"cordon_events"})), 1);

    // The other upstream is untouched and healthy.
    EXPECT_TRUE(YAJL_IS_NULL(At(UpstreamAt(json, 0, 0), {"cordon"})));
    EXPECT_TRUE(YAJL_IS_TRUE(At(UpstreamAt(json, 0, 0), {"healthy"})));
}

TEST(StatusRenderState, UnhealthyOrForeignUpstreamIsNotHealthy) {
    TestNetwork net(2, Mainnet());
    net.network.record(0).health = static_cast<uint32_t>(HealthOutcome::kFailed);
    net.network.record(1).genesis = static_cast<uint32_t>(GenesisCheck::kDiffers);
    Json json(RenderState({&net.network}, kNowMono, kNowWall));
    ASSERT_NE(json.root(), nullptr) << json.error();

    EXPECT_EQ(Str(At(UpstreamAt(json, 0, 0), {"health"})), "failed");
    EXPECT_TRUE(YAJL_IS_FALSE(At(UpstreamAt(json, 0, 0), {"healthy"})));
    EXPECT_EQ(Str(At(UpstreamAt(json, 0, 1), {"genesis"})), "differs");
    EXPECT_TRUE(YAJL_IS_FALSE(At(UpstreamAt(json, 0, 1), {"healthy"})));
}

TEST(StatusRenderState, OperatorCordonedUpstream) {
    TestNetwork net(1, Mainnet());
    const std::string note = "disk swap \"sdb\" \\ ticket 42\nback at noon";
    CordonByOperator(net.network.record(0), note, 1764479068123);

    Json json(RenderState({&net.network}, kNowMono, kNowWall));
    ASSERT_NE(json.root(), nullptr) << json.error();

    yajl_val u = UpstreamAt(json, 0, 0);
    EXPECT_EQ(Str(At(u, {"cordon", "by"})), "operator");
    EXPECT_EQ(Str(At(u, {"cordon", "reason"})), note);
    EXPECT_EQ(Str(At(u, {"cordon", "since"})), "2025-11-30T05:04:28.123Z");
    EXPECT_TRUE(YAJL_IS_TRUE(At(u, {"healthy"})));
}

TEST(StatusRenderState, LeaseShownWhileHeldNullOnceExpired) {
    TestNetwork net(2, Mainnet());
    net.network.record(0).lease = Lease{4242, kNowMono + 1500}.Pack();
    net.network.record(1).lease = Lease{4243, kNowMono - 1}.Pack();

    Json held(RenderState({&net.network}, kNowMono, kNowWall));
    ASSERT_NE(held.root(), nullptr) << held.error();
    yajl_val lease = At(UpstreamAt(held, 0, 0), {"lease"});
    EXPECT_EQ(Keys(lease), (std::vector<std::string>{"pid", "expires_in_ms"}));
    EXPECT_EQ(Int(At(lease, {"pid"})), 4242);
    EXPECT_EQ(Int(At(lease, {"expires_in_ms"})), 1500);
    EXPECT_TRUE(YAJL_IS_NULL(At(UpstreamAt(held, 0, 1), {"lease"})));

    Json expired(RenderState({&net.network}, kNowMono + 1500, kNowWall));
    ASSERT_NE(expired.root(), nullptr) << expired.error();
    EXPECT_TRUE(YAJL_IS_NULL(At(UpstreamAt(expired, 0, 0), {"lease"})));
}

TEST(StatusRenderState, TrafficAgesCountersAndTips) {
    TestNetwork net(3, Mainnet());
    for (size_t i = 0; i < 3; i++) {
        net.network.record(i).processed = 1000 + i;
        net.network.record(i).finalized = 960 + i;
        net.network.record(i).shred = 1010 + i;
    }
    UpstreamRecord& slot = net.network.record(0);
    slot.processed_seen_ms = kNowMono - 250;
    slot.host.polls[kPollGetHealth] = 7;
    slot.host.polls[kPollGetGenesisHash] = 1;
    slot.host.poll_errors[kPollGetSlotFinalized] = 2;
    slot.host.large_rollbacks = 3;
    slot.host.gate_skipped_ticks = 11;
    slot.host.harvested = 19;
    net.shared->counters.getslot_corrections = 5;
    net.shared->counters.guard_rejections = 6;
    net.shared->counters.all_cordoned_fallbacks = 7;

    Json json(RenderState({&net.network}, kNowMono, kNowWall));
    ASSERT_NE(json.root(), nullptr) << json.error();

    yajl_val u = UpstreamAt(json, 0, 0);
    EXPECT_EQ(Int(At(u, {"traffic_seen_ms_ago", "processed"})), 250);
    EXPECT_TRUE(YAJL_IS_NULL(At(u, {"traffic_seen_ms_ago", "finalized"})));
    EXPECT_EQ(Int(At(u, {"polls", "getHealth"})), 7);
    EXPECT_EQ(Int(At(u, {"polls", "getGenesisHash"})), 1);
    EXPECT_EQ(Int(At(u, {"poll_errors", "getSlot_finalized"})), 2);
    EXPECT_EQ(Int(At(u, {"poll_errors", "getHealth"})), 0);
    EXPECT_EQ(Int(At(u, {"large_rollbacks"})), 3);
    EXPECT_EQ(Int(At(u, {"gate_skipped_ticks"})), 11);
    EXPECT_EQ(Int(At(u, {"harvested"})), 19);
    EXPECT_EQ(Int(At(u, {"ingestion_lag_slots"})), 10);

    yajl_val n = NetworkAt(json, 0);
    EXPECT_EQ(Int(At(n, {"tips", "processed"})), 1001);
    EXPECT_EQ(Int(At(n, {"tips", "finalized"})), 961);
    EXPECT_EQ(Int(At(n, {"tips", "indexed"})), 1012);
    EXPECT_EQ(Int(At(n, {"counters", "getslot_corrections"})), 5);
    EXPECT_EQ(Int(At(n, {"counters", "guard_rejections"})), 6);
    EXPECT_EQ(Int(At(n, {"counters", "all_cordoned_fallbacks"})), 7);
}

TEST(StatusRenderState, SkipsUnboundNetworks) {
    TestNetwork net(1, Mainnet());
    Network unbound("devnet", NetworkSettings{});
    unbound.AddUpstream({"lonely", {"http://10.0.2.1/", "", "", ""}});

    Json json(RenderState({&unbound, &net.network}, kNowMono, kNowWall));
    ASSERT_NE(json.root(), nullptr) << json.error();
    yajl_val networks = At(json.root(), {"networks"});
    ASSERT_TRUE(YAJL_IS_ARRAY(networks));
    EXPECT_EQ(networks->u.array.len, 1u);
    EXPECT_EQ(Str(At(NetworkAt(json, 0), {"name"})), "mainnet");

    Json empty(RenderState({}, kNowMono, kNowWall));
    ASSERT_NE(empty.root(), nullptr) << empty.error();
    EXPECT_EQ(At(empty.root(), {"networks"})->u.array.len, 0u);
}

TEST(StatusRenderState, UtcTimesToTheMillisecond) {
    EXPECT_EQ(FormatUtc(0), "1970-01-01T00:00:00.000Z");
    EXPECT_EQ(FormatUtc(kNowWall), "2023-11-14T22:13:20.123Z");
    EXPECT_EQ(FormatUtc(-1), "1969-12-31T23:59:59.999Z");
}

TEST(StatusRenderState, KeysBeyondEightBytesAreMasked) {
    EXPECT_EQ(MaskedKey(""), "...");
    EXPECT_EQ(MaskedKey("abc"), "...");
    EXPECT_EQ(MaskedKey("short"), "s...t");
    EXPECT_EQ(MaskedKey("12345678"), "12...78");
    EXPECT_EQ(MaskedKey("123456789"), "12...89");
    EXPECT_EQ(MaskedKey("0123456789abcdef"), "0123...cdef");
}

}  // namespace
}  // namespace solgate
