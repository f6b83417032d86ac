// The complete state JSON and metrics text of two small fixed networks,
// byte for byte: one with every figure set to its own value and a Cube
// Runner, one cold. A key, a label, a family or a value that moves,
// changes or goes missing fails here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "blocks/block_cache.h"
#include "support/blocks_zone.h"
#include "support/fakes.h"
#include "routing/request_metrics.h"
#include "slots/state_poller.h"
#include "status/status_fixtures.h"
#include "status/metrics_text.h"
#include "status/state_json.h"

namespace solgate {
namespace {

using testing::Accept;
using testing::CordonByOperator;
using testing::kNowMono;
using testing::kNowWall;
using testing::Mainnet;
using testing::NamedNetwork;
using testing::TestNetwork;

// Every field of the two upstreams and the network set to its own value.
void FillUpstreams(Network& network, NetworkShared& shared) {
    UpstreamRecord& a = network.record(0);
    a.processed = 1000;
    a.finalized = 968;
    a.shred = 1004;
    a.health = static_cast<uint32_t>(HealthOutcome::kOk);
    a.genesis = static_cast<uint32_t>(GenesisCheck::kMatches);
    a.lease = Lease{4242, kNowMono + 1500}.Pack();
    a.processed_seen_ms = kNowMono - 250;
    a.finalized_seen_ms = kNowMono - 750;
    for (size_t m = 0; m < kPollMethodCount; m++) {
        a.host.polls[m] = 10 + m;
        a.host.poll_errors[m] = m;
    }
    a.host.large_rollbacks = 2;
    a.host.cordon_events = 3;
    a.host.gate_skipped_ticks = 4;
    a.host.harvested = 5;
    a.host.latency_ewma_us = 1500;
    a.host.failure_ewma = 6554;   // 10%
    a.host.ejected_until_ms = kNowMono + 2500;
    a.host.ejections = 6;
    a.observed_processed = 990;
    a.host.failovers[static_cast<size_t>(AttemptCause::kRateLimited)] = 2;
    ObserveLatency(a.host, MethodClass::kRead, 7);
    ObserveLatency(a.host, MethodClass::kRead, 300);
    a.first_available_plus1 = 4001;

    UpstreamRecord& b = network.record(1);
    b.processed = 990;
    b.finalized = 960;
    b.shred = 1002;
    b.health = static_cast<uint32_t>(HealthOutcome::kFailed);
    b.genesis = static_cast<uint32_t>(GenesisCheck::kDiffers);
    CordonByOperator(b, "disk \"sdb\" \\ swap\nback at noon",
                     kNowWall - 60000);
    b.host.cordon_events = 1;
    b.observed_processed = 960;   // 40 behind: lagging

    for (int k = 0; k < 3; k++) {
        CountRequest(shared.counters.requests, network.RecordIndex(0),
                     SolanaMethodIndex("getBalance"), RequestOutcome::kOk);
    }
    CountRequest(shared.counters.requests, kNoUpstreamSlot,
                 SolanaMethodIndex("getGenesisHash"), RequestOutcome::kLocal);
    shared.counters.getslot_corrections = 6;
    shared.counters.guard_rejections = 7;
    shared.counters.all_cordoned_fallbacks = 8;
    network.RefreshLanes(kNowMono - 1500);
}

BlockConfBuilder CubeRunner() {
    BlockConfBuilder b;
    Accept(b.Region("us"));
    Accept(b.MaxSize(1 << 20));
    Accept(b.PeerToken("a-peer-token-of-16+"));
    Accept(b.Peer("eu", "http://eu.example/", true));
    Accept(b.LongTermStorage("http://lts.example/"));
    return b;
}

// Two blocks in the cache, as a background copy stores them.
void FillCache(BlockCache& cache) {
    for (uint64_t slot : {3990, 3991}) {
        BlockCall call;
        call.slot = slot;
        call.variant = "getBlock/json/full/r1/v0";
        std::string body = R"({"jsonrpc":"2.0","result":{"blockHeight":)" +
                           std::to_string(slot) +
                           R"(,"transactions":[]},"id":1})";
        std::string why;
        EXPECT_TRUE(StoreAnswer(cache, call, body, kNowWall, &why)) << why;
    }
}

// Counters of the Cube Runner, each its own value; two keys; for
// blade_runner (plan 2, the first queue) one block being retrieved and
// one queued.
void FillBlocks(BlocksShared& s) {
    for (int i = 0; i < kSourceCount; i++) {
        s.counters.served[i] = 20 + i;
    }
    s.counters.tier_answers = 30;
    s.counters.lock_waits = 28;
    s.counters.lock_timeouts = 29;
    s.counters.unauthorized = 31;
    s.counters.peer_requests = 32;
    s.counters.stored = 33;
    s.counters.store_failures = 34;
    s.counters.peer_fetches[0] = 35;
    s.counters.peer_failures[0] = 36;
    s.counters.peer_copies[0] = 37;
    for (size_t p = 0; p < 4; p++) {
        s.counters.rate_limited[p] = 40 + p;
        s.counters.allowance_refusals[p] = 50 + p;
        s.counters.allowance_counted[p] = 60 + p;
        s.counters.repeats_counted[p] = 70 + p;
    }
    KeyEntry* key = FindOrAddKey(&s.keys, "a-key-of-some-length", 2, kNowWall);
    ASSERT_NE(key, nullptr);
    key->requests = 9;
    key->limited = 1;
    key->served[kSourceCache] = 8;
    ASSERT_NE(FindOrAddKey(&s.keys, "short", 0, kNowWall), nullptr);
    s.keys.table_full = 38;

    RetrievalQueueShared* q = QueueAt(&s, 0);
    for (uint64_t slot : {4000, 4001}) {
        EXPECT_EQ(RequestBlock(q, 0, slot, "getBlock/json/full/r1/v0",
                               kNowMono - 2500, 100, 1.0, RepeatFn())
                      .outcome,
                  QueueOutcome::kQueued);
    }
    EXPECT_TRUE(NextRetrieval(q, kNowMono - 2000, 1.0, 1, 0, RepeatFn()));
    q->retrieved = 80;
    q->failed = 81;
    q->dropped = 82;
    q->queue_full = 83;
}

// The state of both networks, in one line; "@CACHE@" is the cache
// directory of the test's Cube Runner.
const char kStateJson[] =
    R"({"networks":[{"name":"mainnet","cluster":"mainnet-beta",)"
    R"("commitment":null,"state_poller_debounce_ms":400,)"
    R"("max_finalized_slot_lag":100,"max_slot_lag":20,)"
    R"("use_upstream_from_client":true,"enforce_block_availability":true,)"
    R"("retry_missing_data":{"on":true,"attempts":2,"delay_ms":150},)"
    R"("max_batch_size":100,)"
    R"("broadcast":{"methods":[],"to":0},"consensus":{"methods":[],)"
    R"("participants":3,"agreement":2,"dispute":"error"},)"
    R"("hedge":{"methods":[],"after_ms":100,"max":1},)"
    R"("tips":{"processed":990,"finalized":960,"indexed":1004},)"
    R"("guard_margin":3,"counters":{"getslot_corrections":6,)"
    R"("guard_rejections":7,"all_cordoned_fallbacks":8},"shared_state":null,)"
    R"("upstreams":[{"id":"up-0","processed_slot":1000,)"
    R"("finalized_slot":968,"shred_insert_slot":1004,)"
    R"("ingestion_lag_slots":4,"observed_processed_slot":990,)"
    R"("slot_lag_slots":10,"slots_current":true,"lagging":false,"weight":1,)"
    R"("debounce_ms":400,)"
    R"("backup":false,"latency_ewma_us":1500,"failure_share_pct":10,)"
    R"("ejected_for_ms":2500,"ejections":6,"drain_for_ms":0,"ws_open":0,)"
    R"("health":"ok","healthy":true,)"
    R"("genesis":"matches","cordon":null,"lease":{"pid":4242,)"
    R"("expires_in_ms":1500},"polled_by":null,)"
    R"("traffic_seen_ms_ago":{"processed":250,)"
    R"("finalized":750},"polls":{"getHealth":10,"getSlot_processed":11,)"
    R"("getSlot_finalized":12,"getMaxShredInsertSlot":13,)"
    R"("getGenesisHash":14,"getFirstAvailableBlock":15},)"
    R"("poll_errors":{"getHealth":0,"getSlot_processed":1,)"
    R"("getSlot_finalized":2,"getMaxShredInsertSlot":3,)"
    R"("getGenesisHash":4,"getFirstAvailableBlock":5},)"
    R"("large_rollbacks":2,"cordon_events":3,"gate_skipped_ticks":4,)"
    R"("harvested":5},{"id":"up-1","processed_slot":990,)"
    R"("finalized_slot":960,"shred_insert_slot":1002,)"
    R"("ingestion_lag_slots":12,"observed_processed_slot":960,)"
    R"("slot_lag_slots":40,"slots_current":true,"lagging":true,"weight":1,)"
    R"("debounce_ms":400,)"
    R"("backup":false,"latency_ewma_us":0,"failure_share_pct":0,)"
    R"("ejected_for_ms":0,"ejections":0,"drain_for_ms":0,"ws_open":0,)"
    R"("health":"failed",)"
    R"("healthy":false,"genesis":"differs","cordon":{"by":"operator",)"
    R"("reason":"disk \"sdb\" \\ swap\nback at noon",)"
    R"("since":"2023-11-14T22:12:20.123Z"},"lease":null,"polled_by":null,)"
    R"("traffic_seen_ms_ago":{"processed":null,"finalized":null},)"
    R"("polls":{"getHealth":0,"getSlot_processed":0,)"
    R"("getSlot_finalized":0,"getMaxShredInsertSlot":0,)"
    R"("getGenesisHash":0,"getFirstAvailableBlock":0},)"
    R"("poll_errors":{"getHealth":0,"getSlot_processed":0,)"
    R"("getSlot_finalized":0,"getMaxShredInsertSlot":0,)"
    R"("getGenesisHash":0,"getFirstAvailableBlock":0},)"
    R"("large_rollbacks":0,"cordon_events":1,"gate_skipped_ticks":0,)"
    R"("harvested":0}],"blocks":{"region":"us",)"
    R"("first_available_block":4000,"cache":{"dir":"@CACHE@",)"
    R"("max_size":1048576,"bytes":144,"entries":2,"evictions":0,)"
    R"("stored":33,"store_failures":34},"served":{"cache":20,"ledger":21,)"
    R"("region":22,"long_term":23},"tier_answers":30,"lock_waits":28,)"
    R"("lock_timeouts":29,"unauthorized":31,)"
    R"("peer_requests":32,"key_table_full":38,"peers":[{"name":"eu",)"
    R"("url":"http://eu.example/","fetches":35,"failures":36,)"
    R"("copies":37}],"long_term_storage":["http://lts.example/"],)"
    R"("queues":[{"plan":"blade_runner","depth":1,"in_flight":1,)"
    R"("oldest_wait_ms":2500,"retrieved":80,"failed":81,"dropped":82,)"
    R"("queue_full":83,"allowance_refusals":52},{"plan":"nexus",)"
    R"("depth":0,"in_flight":0,"oldest_wait_ms":0,"retrieved":0,)"
    R"("failed":0,"dropped":0,"queue_full":0,"allowance_refusals":53}],)"
    R"("keys":[{"key":"s...t","key_sha256":"f9b0078b5df596d2",)"
    R"("plan":"free","requests":0,)"
    R"("rate_limited":0,"allowance_used":0,"repeat_count":0,)"
    R"("served":{"cache":0,"ledger":0,"region":0,"long_term":0}},)"
    R"({"key":"a-ke...ngth","key_sha256":"7602afe257e4bd46",)"
    R"("plan":"blade_runner","requests":9,)"
    R"("rate_limited":1,"allowance_used":0,"repeat_count":0,)"
    R"("served":{"cache":8,"ledger":0,"region":0,"long_term":0}}]}},)"
    R"({"name":"devnet","cluster":"custom","commitment":null,)"
    R"("state_poller_debounce_ms":400,"max_finalized_slot_lag":100,)"
    R"("max_slot_lag":20,"use_upstream_from_client":true,)"
    R"("enforce_block_availability":true,)"
    R"("retry_missing_data":{"on":true,"attempts":2,"delay_ms":150},)"
    R"("max_batch_size":100,)"
    R"("broadcast":{"methods":[],"to":0},"consensus":{"methods":[],)"
    R"("participants":3,"agreement":2,"dispute":"error"},)"
    R"("hedge":{"methods":[],"after_ms":100,"max":1},)"
    R"("tips":{"processed":0,)"
    R"("finalized":0,"indexed":0},"guard_margin":3,)"
    R"("counters":{"getslot_corrections":0,"guard_rejections":0,)"
    R"("all_cordoned_fallbacks":0},"shared_state":null,)"
    R"("upstreams":[{"id":"up-0",)"
    R"("processed_slot":0,"finalized_slot":0,"shred_insert_slot":0,)"
    R"("ingestion_lag_slots":0,"observed_processed_slot":0,)"
    R"("slot_lag_slots":0,"slots_current":true,"lagging":false,"weight":1,)"
    R"("debounce_ms":400,)"
    R"("backup":false,"latency_ewma_us":0,"failure_share_pct":0,)"
    R"("ejected_for_ms":0,"ejections":0,"drain_for_ms":0,"ws_open":0,)"
    R"("health":"unknown",)"
    R"("healthy":true,"genesis":"unchecked","cordon":null,"lease":null,)"
    R"("polled_by":null,)"
    R"("traffic_seen_ms_ago":{"processed":null,"finalized":null},)"
    R"("polls":{"getHealth":0,"getSlot_processed":0,)"
    R"("getSlot_finalized":0,"getMaxShredInsertSlot":0,)"
    R"("getGenesisHash":0,"getFirstAvailableBlock":0},)"
    R"("poll_errors":{"getHealth":0,"getSlot_processed":0,)"
    R"("getSlot_finalized":0,"getMaxShredInsertSlot":0,)"
    R"("getGenesisHash":0,"getFirstAvailableBlock":0},)"
    R"("large_rollbacks":0,"cordon_events":0,"gate_skipped_ticks":0,)"
    R"("harvested":0}]}],"generated_at":"2023-11-14T22:13:20.123Z"})";

// The metrics of both networks: every family, once, in its order.
const char kMetricsText[] = R"metrics(# HELP solgate_upstream_latest_slot Latest slot of the upstream's processed view (a slot number, not a block height).
# TYPE solgate_upstream_latest_slot gauge
solgate_upstream_latest_slot{network="mainnet",upstream="up-0"} 1000
solgate_upstream_latest_slot{network="mainnet",upstream="up-1"} 990
solgate_upstream_latest_slot{network="devnet",upstream="up-0"} 0
# HELP solgate_upstream_finalized_slot Latest slot of the upstream's finalized view.
# TYPE solgate_upstream_finalized_slot gauge
solgate_upstream_finalized_slot{network="mainnet",upstream="up-0"} 968
solgate_upstream_finalized_slot{network="mainnet",upstream="up-1"} 960
solgate_upstream_finalized_slot{network="devnet",upstream="up-0"} 0
# HELP solgate_upstream_shred_insert_slot Highest slot the upstream inserted shreds for (getMaxShredInsertSlot).
# TYPE solgate_upstream_shred_insert_slot gauge
solgate_upstream_shred_insert_slot{network="mainnet",upstream="up-0"} 1004
solgate_upstream_shred_insert_slot{network="mainnet",upstream="up-1"} 1002
solgate_upstream_shred_insert_slot{network="devnet",upstream="up-0"} 0
# HELP solgate_upstream_ingestion_lag_slots Shred-insert slot minus processed slot of the upstream (0 when unknown).
# TYPE solgate_upstream_ingestion_lag_slots gauge
solgate_upstream_ingestion_lag_slots{network="mainnet",upstream="up-0"} 4
solgate_upstream_ingestion_lag_slots{network="mainnet",upstream="up-1"} 12
solgate_upstream_ingestion_lag_slots{network="devnet",upstream="up-0"} 0
# HELP solgate_upstream_healthy 1 unless getHealth failed, the ingestion lag exceeds its threshold or the genesis hash differs; else 0.
# TYPE solgate_upstream_healthy gauge
solgate_upstream_healthy{network="mainnet",upstream="up-0"} 1
solgate_upstream_healthy{network="mainnet",upstream="up-1"} 0
solgate_upstream_healthy{network="devnet",upstream="up-0"} 1
# HELP solgate_upstream_slot_lag_slots Slots the upstream's last observed processed slot trails the network's reference (the upper median of its upstreams); none while its slot polls fail.
# TYPE solgate_upstream_slot_lag_slots gauge
solgate_upstream_slot_lag_slots{network="mainnet",upstream="up-0"} 10
solgate_upstream_slot_lag_slots{network="mainnet",upstream="up-1"} 40
solgate_upstream_slot_lag_slots{network="devnet",upstream="up-0"} 0
# HELP solgate_upstream_lagging 1 while the upstream trails by more than max_slot_lag (no client traffic while another is current), else 0.
# TYPE solgate_upstream_lagging gauge
solgate_upstream_lagging{network="mainnet",upstream="up-0"} 0
solgate_upstream_lagging{network="mainnet",upstream="up-1"} 1
solgate_upstream_lagging{network="devnet",upstream="up-0"} 0
# HELP solgate_upstream_ejected 1 while failed attempts (max_fails) or a 429's Retry-After keep the upstream out of rotation on this host, else 0.
# TYPE solgate_upstream_ejected gauge
solgate_upstream_ejected{network="mainnet",upstream="up-0"} 1
solgate_upstream_ejected{network="mainnet",upstream="up-1"} 0
solgate_upstream_ejected{network="devnet",upstream="up-0"} 0
# HELP solgate_upstream_ejections_total Times failed attempts or a Retry-After took the upstream out of rotation on this host.
# TYPE solgate_upstream_ejections_total counter
solgate_upstream_ejections_total{network="mainnet",upstream="up-0"} 6
solgate_upstream_ejections_total{network="mainnet",upstream="up-1"} 0
solgate_upstream_ejections_total{network="devnet",upstream="up-0"} 0
# HELP solgate_upstream_latency_ewma_seconds Moving average of the state poller's round trips to the upstream (routing prefers faster upstreams).
# TYPE solgate_upstream_latency_ewma_seconds gauge
solgate_upstream_latency_ewma_seconds{network="mainnet",upstream="up-0"} 0.001
solgate_upstream_latency_ewma_seconds{network="mainnet",upstream="up-1"} 0.000
solgate_upstream_latency_ewma_seconds{network="devnet",upstream="up-0"} 0.000
# HELP solgate_upstream_weight The upstream's configured weight=.
# TYPE solgate_upstream_weight gauge
solgate_upstream_weight{network="mainnet",upstream="up-0"} 1
solgate_upstream_weight{network="mainnet",upstream="up-1"} 1
solgate_upstream_weight{network="devnet",upstream="up-0"} 1
# HELP solgate_upstream_cordoned 1 with the cause (unhealthy, shred_lag, genesis, operator) when the upstream is out of rotation, else 0; the reason's text is on the status page and in the state endpoint.
# TYPE solgate_upstream_cordoned gauge
solgate_upstream_cordoned{network="mainnet",upstream="up-0",reason=""} 0
solgate_upstream_cordoned{network="mainnet",upstream="up-1",reason="operator"} 1
solgate_upstream_cordoned{network="devnet",upstream="up-0",reason=""} 0
# HELP solgate_upstream_cordon_events_total Times the upstream was cordoned, by the state poller or an operator.
# TYPE solgate_upstream_cordon_events_total counter
solgate_upstream_cordon_events_total{network="mainnet",upstream="up-0"} 3
solgate_upstream_cordon_events_total{network="mainnet",upstream="up-1"} 1
solgate_upstream_cordon_events_total{network="devnet",upstream="up-0"} 0
# HELP solgate_upstream_large_rollbacks_total Backward slot jumps beyond the tolerance accepted from the upstream.
# TYPE solgate_upstream_large_rollbacks_total counter
solgate_upstream_large_rollbacks_total{network="mainnet",upstream="up-0"} 2
solgate_upstream_large_rollbacks_total{network="mainnet",upstream="up-1"} 0
solgate_upstream_large_rollbacks_total{network="devnet",upstream="up-0"} 0
# HELP solgate_upstream_poll_requests_total State poller requests sent to the upstream, by method.
# TYPE solgate_upstream_poll_requests_total counter
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-0",method="getHealth"} 10
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-0",method="getSlot_processed"} 11
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-0",method="getSlot_finalized"} 12
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-0",method="getMaxShredInsertSlot"} 13
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-0",method="getGenesisHash"} 14
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-0",method="getFirstAvailableBlock"} 15
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-1",method="getHealth"} 0
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-1",method="getSlot_processed"} 0
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-1",method="getSlot_finalized"} 0
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-1",method="getMaxShredInsertSlot"} 0
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-1",method="getGenesisHash"} 0
solgate_upstream_poll_requests_total{network="mainnet",upstream="up-1",method="getFirstAvailableBlock"} 0
solgate_upstream_poll_requests_total{network="devnet",upstream="up-0",method="getHealth"} 0
solgate_upstream_poll_requests_total{network="devnet",upstream="up-0",method="getSlot_processed"} 0
solgate_upstream_poll_requests_total{network="devnet",upstream="up-0",method="getSlot_finalized"} 0
solgate_upstream_poll_requests_total{network="devnet",upstream="up-0",method="getMaxShredInsertSlot"} 0
solgate_upstream_poll_requests_total{network="devnet",upstream="up-0",method="getGenesisHash"} 0
solgate_upstream_poll_requests_total{network="devnet",upstream="up-0",method="getFirstAvailableBlock"} 0
# HELP solgate_upstream_poll_errors_total State poller requests to the upstream that failed, by method.
# TYPE solgate_upstream_poll_errors_total counter
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-0",method="getHealth"} 0
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-0",method="getSlot_processed"} 1
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-0",method="getSlot_finalized"} 2
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-0",method="getMaxShredInsertSlot"} 3
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-0",method="getGenesisHash"} 4
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-0",method="getFirstAvailableBlock"} 5
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-1",method="getHealth"} 0
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-1",method="getSlot_processed"} 0
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-1",method="getSlot_finalized"} 0
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-1",method="getMaxShredInsertSlot"} 0
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-1",method="getGenesisHash"} 0
solgate_upstream_poll_errors_total{network="mainnet",upstream="up-1",method="getFirstAvailableBlock"} 0
solgate_upstream_poll_errors_total{network="devnet",upstream="up-0",method="getHealth"} 0
solgate_upstream_poll_errors_total{network="devnet",upstream="up-0",method="getSlot_processed"} 0
solgate_upstream_poll_errors_total{network="devnet",upstream="up-0",method="getSlot_finalized"} 0
solgate_upstream_poll_errors_total{network="devnet",upstream="up-0",method="getMaxShredInsertSlot"} 0
solgate_upstream_poll_errors_total{network="devnet",upstream="up-0",method="getGenesisHash"} 0
solgate_upstream_poll_errors_total{network="devnet",upstream="up-0",method="getFirstAvailableBlock"} 0
# HELP solgate_upstream_traffic_gate_skips_total Poll ticks that skipped getSlot because live traffic was fresh.
# TYPE solgate_upstream_traffic_gate_skips_total counter
solgate_upstream_traffic_gate_skips_total{network="mainnet",upstream="up-0"} 4
solgate_upstream_traffic_gate_skips_total{network="mainnet",upstream="up-1"} 0
solgate_upstream_traffic_gate_skips_total{network="devnet",upstream="up-0"} 0
# HELP solgate_upstream_context_slot_harvests_total context.slot values taken from the upstream's live responses.
# TYPE solgate_upstream_context_slot_harvests_total counter
solgate_upstream_context_slot_harvests_total{network="mainnet",upstream="up-0"} 5
solgate_upstream_context_slot_harvests_total{network="mainnet",upstream="up-1"} 0
solgate_upstream_context_slot_harvests_total{network="devnet",upstream="up-0"} 0
# HELP solgate_requests_total Client requests by the upstream that answered last ("" for Solgate's own answers), method (a Solana method, "batch" or "other") and outcome (ok, rpc_error, client_error, http_error, local, client_closed, cut).
# TYPE solgate_requests_total counter
solgate_requests_total{network="mainnet",upstream="",method="getGenesisHash",outcome="local"} 1
solgate_requests_total{network="mainnet",upstream="up-0",method="getBalance",outcome="ok"} 3
# HELP solgate_request_duration_seconds Client request time, by the upstream that answered and method class (read, heavy, write).
# TYPE solgate_request_duration_seconds histogram
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="0.005"} 0
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="0.010"} 1
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="0.025"} 1
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="0.050"} 1
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="0.100"} 1
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="0.250"} 1
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="0.500"} 2
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="1.000"} 2
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="2.500"} 2
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="5.000"} 2
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="10.000"} 2
solgate_request_duration_seconds_bucket{network="mainnet",upstream="up-0",class="read",le="+Inf"} 2
solgate_request_duration_seconds_sum{network="mainnet",upstream="up-0",class="read"} 0.307
solgate_request_duration_seconds_count{network="mainnet",upstream="up-0",class="read"} 2
# HELP solgate_failovers_total Attempts on the upstream that failed and were retried elsewhere, by cause (transport, timeout, http_429, http_5xx, node_behind, min_context_slot: the client's, not counted as the node's error).
# TYPE solgate_failovers_total counter
solgate_failovers_total{network="mainnet",upstream="up-0",cause="transport"} 0
solgate_failovers_total{network="mainnet",upstream="up-0",cause="timeout"} 0
solgate_failovers_total{network="mainnet",upstream="up-0",cause="http_429"} 2
solgate_failovers_total{network="mainnet",upstream="up-0",cause="http_5xx"} 0
solgate_failovers_total{network="mainnet",upstream="up-0",cause="node_behind"} 0
solgate_failovers_total{network="mainnet",upstream="up-0",cause="min_context_slot"} 0
solgate_failovers_total{network="mainnet",upstream="up-1",cause="transport"} 0
solgate_failovers_total{network="mainnet",upstream="up-1",cause="timeout"} 0
solgate_failovers_total{network="mainnet",upstream="up-1",cause="http_429"} 0
solgate_failovers_total{network="mainnet",upstream="up-1",cause="http_5xx"} 0
solgate_failovers_total{network="mainnet",upstream="up-1",cause="node_behind"} 0
solgate_failovers_total{network="mainnet",upstream="up-1",cause="min_context_slot"} 0
solgate_failovers_total{network="devnet",upstream="up-0",cause="transport"} 0
solgate_failovers_total{network="devnet",upstream="up-0",cause="timeout"} 0
solgate_failovers_total{network="devnet",upstream="up-0",cause="http_429"} 0
solgate_failovers_total{network="devnet",upstream="up-0",cause="http_5xx"} 0
solgate_failovers_total{network="devnet",upstream="up-0",cause="node_behind"} 0
solgate_failovers_total{network="devnet",upstream="up-0",cause="min_context_slot"} 0
# HELP solgate_upstream_cut_answers_total Answers from the upstream that ended before their end (the connection closed or timed out mid-answer, too late to fail over); each counts as a failed attempt (max_fails).
# TYPE solgate_upstream_cut_answers_total counter
solgate_upstream_cut_answers_total{network="mainnet",upstream="up-0"} 0
solgate_upstream_cut_answers_total{network="mainnet",upstream="up-1"} 0
solgate_upstream_cut_answers_total{network="devnet",upstream="up-0"} 0
# HELP solgate_broadcast_attempts_total broadcast attempts sent to the upstream, by outcome (ok: a result; failed: an error, an HTTP failure or no answer).
# TYPE solgate_broadcast_attempts_total counter
solgate_broadcast_attempts_total{network="mainnet",upstream="up-0",outcome="ok"} 0
solgate_broadcast_attempts_total{network="mainnet",upstream="up-0",outcome="failed"} 0
solgate_broadcast_attempts_total{network="mainnet",upstream="up-1",outcome="ok"} 0
solgate_broadcast_attempts_total{network="mainnet",upstream="up-1",outcome="failed"} 0
solgate_broadcast_attempts_total{network="devnet",upstream="up-0",outcome="ok"} 0
solgate_broadcast_attempts_total{network="devnet",upstream="up-0",outcome="failed"} 0
# HELP solgate_ws_connections WebSocket subscription connections open on the upstream (ws=), this host.
# TYPE solgate_ws_connections gauge
# HELP solgate_ws_connections_total WebSocket subscription connections the upstream accepted.
# TYPE solgate_ws_connections_total counter
# HELP solgate_ws_closed_total WebSocket subscription connections that ended, by cause (closed: by the client, the node or ws_idle_timeout; cordoned, lagging, drained: moved off the node with close 1012).
# TYPE solgate_ws_closed_total counter
# HELP solgate_ws_bytes_total Bytes WebSocket subscription connections carried, by direction (to_client, from_client), counted as each connection ends.
# TYPE solgate_ws_bytes_total counter
# HELP solgate_retries_total Calls asked of another upstream because one lacked the data, by reason (missing_data, skipped_slot): retry_missing_data.
# TYPE solgate_retries_total counter
solgate_retries_total{network="mainnet",reason="missing_data"} 0
solgate_retries_total{network="mainnet",reason="skipped_slot"} 0
solgate_retries_total{network="devnet",reason="missing_data"} 0
solgate_retries_total{network="devnet",reason="skipped_slot"} 0
# HELP solgate_consensus_total consensus decisions, by outcome (agreed; dispute: too few matching answers; low_participants: too few answers; failed: none).
# TYPE solgate_consensus_total counter
solgate_consensus_total{network="mainnet",outcome="agreed"} 0
solgate_consensus_total{network="mainnet",outcome="dispute"} 0
solgate_consensus_total{network="mainnet",outcome="low_participants"} 0
solgate_consensus_total{network="mainnet",outcome="failed"} 0
solgate_consensus_total{network="devnet",outcome="agreed"} 0
solgate_consensus_total{network="devnet",outcome="dispute"} 0
solgate_consensus_total{network="devnet",outcome="low_participants"} 0
solgate_consensus_total{network="devnet",outcome="failed"} 0
# HELP solgate_hedges_sent_total hedge attempts sent because the first had not answered in time.
# TYPE solgate_hedges_sent_total counter
solgate_hedges_sent_total{network="mainnet"} 0
solgate_hedges_sent_total{network="devnet"} 0
# HELP solgate_hedges_won_total hedge attempts whose answer the client got.
# TYPE solgate_hedges_won_total counter
solgate_hedges_won_total{network="mainnet"} 0
solgate_hedges_won_total{network="devnet"} 0
# HELP solgate_requests_uncounted_total Requests solgate_requests_total could not count (its table of 4096 label sets is full).
# TYPE solgate_requests_uncounted_total counter
solgate_requests_uncounted_total{network="mainnet"} 0
solgate_requests_uncounted_total{network="devnet"} 0
# HELP solgate_shared_state_up Fleet mode: 1 while this host reaches the fleet's Redis (solgate_shared_state), 0 while it runs on its own state.
# TYPE solgate_shared_state_up gauge
# HELP solgate_shared_state_round_trip_seconds Fleet mode: round trips of this host's commands to the fleet's Redis (every network of the host shows them all).
# TYPE solgate_shared_state_round_trip_seconds histogram
# HELP solgate_network_getslot_corrections_total getSlot answers from upstreams rewritten to the served tip.
# TYPE solgate_network_getslot_corrections_total counter
solgate_network_getslot_corrections_total{network="mainnet"} 6
solgate_network_getslot_corrections_total{network="devnet"} 0
# HELP solgate_network_guard_rejections_total getBlock calls answered locally because no upstream indexed the slot yet.
# TYPE solgate_network_guard_rejections_total counter
solgate_network_guard_rejections_total{network="mainnet"} 7
solgate_network_guard_rejections_total{network="devnet"} 0
# HELP solgate_network_all_cordoned_total Upstream picks made while every upstream was cordoned (all taken back into rotation).
# TYPE solgate_network_all_cordoned_total counter
solgate_network_all_cordoned_total{network="mainnet"} 8
solgate_network_all_cordoned_total{network="devnet"} 0
# HELP solgate_network_served_tip_slot Served tip slot per lane ("all" is the network-wide one) and commitment axis.
# TYPE solgate_network_served_tip_slot gauge
solgate_network_served_tip_slot{network="mainnet",lane="all",lane_key="all",axis="processed"} 990
solgate_network_served_tip_slot{network="mainnet",lane="all",lane_key="all",axis="finalized"} 960
solgate_network_served_tip_slot{network="devnet",lane="all",lane_key="all",axis="processed"} 0
solgate_network_served_tip_slot{network="devnet",lane="all",lane_key="all",axis="finalized"} 0
# HELP solgate_network_served_tip_lag_slots How far the lane's served tip is below its highest upstream head.
# TYPE solgate_network_served_tip_lag_slots gauge
solgate_network_served_tip_lag_slots{network="mainnet",lane="all",lane_key="all",axis="processed"} 10
solgate_network_served_tip_lag_slots{network="mainnet",lane="all",lane_key="all",axis="finalized"} 8
solgate_network_served_tip_lag_slots{network="devnet",lane="all",lane_key="all",axis="processed"} 0
solgate_network_served_tip_lag_slots{network="devnet",lane="all",lane_key="all",axis="finalized"} 0
# HELP solgate_network_served_tip_advance_age_seconds Seconds since the lane's served tip last moved forward.
# TYPE solgate_network_served_tip_advance_age_seconds gauge
solgate_network_served_tip_advance_age_seconds{network="mainnet",lane="all",lane_key="all",axis="processed"} 1.500
solgate_network_served_tip_advance_age_seconds{network="mainnet",lane="all",lane_key="all",axis="finalized"} 1.500
solgate_network_served_tip_advance_age_seconds{network="devnet",lane="all",lane_key="all",axis="processed"} 0
solgate_network_served_tip_advance_age_seconds{network="devnet",lane="all",lane_key="all",axis="finalized"} 0
# HELP solgate_network_indexed_tip_slot Highest shred-insert slot among the network's upstreams.
# TYPE solgate_network_indexed_tip_slot gauge
solgate_network_indexed_tip_slot{network="mainnet"} 1004
solgate_network_indexed_tip_slot{network="devnet"} 0
# HELP solgate_blocks_served_total getBlock answers by the source that held the block.
# TYPE solgate_blocks_served_total counter
solgate_blocks_served_total{network="mainnet",source="cache"} 20
solgate_blocks_served_total{network="mainnet",source="ledger"} 21
solgate_blocks_served_total{network="mainnet",source="region"} 22
solgate_blocks_served_total{network="mainnet",source="long_term"} 23
# HELP solgate_blocks_cache_bytes Bytes of blocks in the region cache.
# TYPE solgate_blocks_cache_bytes gauge
solgate_blocks_cache_bytes{network="mainnet"} 144
# HELP solgate_blocks_cache_entries Blocks (and skipped slots) in the region cache.
# TYPE solgate_blocks_cache_entries gauge
solgate_blocks_cache_entries{network="mainnet"} 2
# HELP solgate_blocks_cache_evictions_total Entries evicted from the region cache to make room.
# TYPE solgate_blocks_cache_evictions_total counter
solgate_blocks_cache_evictions_total{network="mainnet"} 0
# HELP solgate_blocks_cache_store_failures_total Answers that could not be written to the region cache.
# TYPE solgate_blocks_cache_store_failures_total counter
solgate_blocks_cache_store_failures_total{network="mainnet"} 34
# HELP solgate_blocks_tier_answers_total getBlock calls no source held (-32001 for the plan's tier).
# TYPE solgate_blocks_tier_answers_total counter
solgate_blocks_tier_answers_total{network="mainnet"} 30
# HELP solgate_blocks_lock_waits_total getBlock misses that waited for another request's fetch of the same block (cache_lock_timeout).
# TYPE solgate_blocks_lock_waits_total counter
solgate_blocks_lock_waits_total{network="mainnet"} 28
# HELP solgate_blocks_lock_timeouts_total Waits for another request's fetch that ran out (cache_lock_timeout), then fetched themselves.
# TYPE solgate_blocks_lock_timeouts_total counter
solgate_blocks_lock_timeouts_total{network="mainnet"} 29
# HELP solgate_blocks_unauthorized_total Cube Runner calls refused for a missing key or an unknown plan.
# TYPE solgate_blocks_unauthorized_total counter
solgate_blocks_unauthorized_total{network="mainnet"} 31
# HELP solgate_blocks_rate_limited_total getBlock calls refused by the plan's getblock_rate.
# TYPE solgate_blocks_rate_limited_total counter
solgate_blocks_rate_limited_total{network="mainnet",plan="free"} 40
solgate_blocks_rate_limited_total{network="mainnet",plan="operator"} 41
solgate_blocks_rate_limited_total{network="mainnet",plan="blade_runner"} 42
solgate_blocks_rate_limited_total{network="mainnet",plan="nexus"} 43
# HELP solgate_blocks_peer_fetches_total getBlock calls sent to another region's gateway.
# TYPE solgate_blocks_peer_fetches_total counter
solgate_blocks_peer_fetches_total{network="mainnet",peer="eu"} 35
# HELP solgate_blocks_peer_failures_total Calls to another region that failed or found no block.
# TYPE solgate_blocks_peer_failures_total counter
solgate_blocks_peer_failures_total{network="mainnet",peer="eu"} 36
# HELP solgate_blocks_peer_copies_total Blocks copied in the background from another region's cache.
# TYPE solgate_blocks_peer_copies_total counter
solgate_blocks_peer_copies_total{network="mainnet",peer="eu"} 37
# HELP solgate_blocks_peer_requests_total Cache lookups answered for other regions.
# TYPE solgate_blocks_peer_requests_total counter
solgate_blocks_peer_requests_total{network="mainnet"} 32
# HELP solgate_blocks_queue_depth Blocks queued for retrieval from long-term storage, per plan.
# TYPE solgate_blocks_queue_depth gauge
solgate_blocks_queue_depth{network="mainnet",plan="blade_runner"} 1
solgate_blocks_queue_depth{network="mainnet",plan="nexus"} 0
# HELP solgate_blocks_queue_in_flight Retrievals from long-term storage in progress, per plan.
# TYPE solgate_blocks_queue_in_flight gauge
solgate_blocks_queue_in_flight{network="mainnet",plan="blade_runner"} 1
solgate_blocks_queue_in_flight{network="mainnet",plan="nexus"} 0
# HELP solgate_blocks_queue_oldest_wait_seconds How long the oldest queued block has waited, per plan.
# TYPE solgate_blocks_queue_oldest_wait_seconds gauge
solgate_blocks_queue_oldest_wait_seconds{network="mainnet",plan="blade_runner"} 2.500
solgate_blocks_queue_oldest_wait_seconds{network="mainnet",plan="nexus"} 0.000
# HELP solgate_blocks_long_term_retrievals_total Blocks retrieved from long-term storage and cached, per plan.
# TYPE solgate_blocks_long_term_retrievals_total counter
solgate_blocks_long_term_retrievals_total{network="mainnet",plan="blade_runner"} 80
solgate_blocks_long_term_retrievals_total{network="mainnet",plan="nexus"} 0
# HELP solgate_blocks_long_term_failures_total Retrievals long-term storage did not return, per plan.
# TYPE solgate_blocks_long_term_failures_total counter
solgate_blocks_long_term_failures_total{network="mainnet",plan="blade_runner"} 81
solgate_blocks_long_term_failures_total{network="mainnet",plan="nexus"} 0
# HELP solgate_blocks_queue_dropped_total Queued blocks dropped after 150 s without a request, per plan.
# TYPE solgate_blocks_queue_dropped_total counter
solgate_blocks_queue_dropped_total{network="mainnet",plan="blade_runner"} 82
solgate_blocks_queue_dropped_total{network="mainnet",plan="nexus"} 0
# HELP solgate_blocks_queue_full_total Blocks not queued because the plan's queue was full.
# TYPE solgate_blocks_queue_full_total counter
solgate_blocks_queue_full_total{network="mainnet",plan="blade_runner"} 83
solgate_blocks_queue_full_total{network="mainnet",plan="nexus"} 0
# HELP solgate_blocks_allowance_counted_total Retrievals counted against keys' monthly allowances (once per waiting key), per plan.
# TYPE solgate_blocks_allowance_counted_total counter
solgate_blocks_allowance_counted_total{network="mainnet",plan="free"} 60
solgate_blocks_allowance_counted_total{network="mainnet",plan="operator"} 61
solgate_blocks_allowance_counted_total{network="mainnet",plan="blade_runner"} 62
solgate_blocks_allowance_counted_total{network="mainnet",plan="nexus"} 63
# HELP solgate_blocks_allowance_refusals_total getBlock calls refused because the key's monthly allowance was spent, per plan.
# TYPE solgate_blocks_allowance_refusals_total counter
solgate_blocks_allowance_refusals_total{network="mainnet",plan="free"} 50
solgate_blocks_allowance_refusals_total{network="mainnet",plan="operator"} 51
solgate_blocks_allowance_refusals_total{network="mainnet",plan="blade_runner"} 52
solgate_blocks_allowance_refusals_total{network="mainnet",plan="nexus"} 53
# HELP solgate_blocks_repeats_total Retrievals for keys that had received the block within 24 h (repeat counts), per plan.
# TYPE solgate_blocks_repeats_total counter
solgate_blocks_repeats_total{network="mainnet",plan="free"} 70
solgate_blocks_repeats_total{network="mainnet",plan="operator"} 71
solgate_blocks_repeats_total{network="mainnet",plan="blade_runner"} 72
solgate_blocks_repeats_total{network="mainnet",plan="nexus"} 73
)metrics";

class StatusGolden : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(rig_.error(), "");
        FillUpstreams(mainnet_.network, *mainnet_.shared);
        FillCache(rig_.service()->cache());
        FillBlocks(*rig_.shared());
    }

    // The text with every "@CACHE@" replaced by the rig's cache directory.
    std::string WithCacheDir(std::string text) const {
        const std::string& dir = rig_.service()->conf().cache_dir();
        for (size_t at; (at = text.find("@CACHE@")) != std::string::npos;) {
            text.replace(at, 7, dir);
        }
        return text;
    }

    // Both bound; devnet cold, with one upstream and no Cube Runner.
    std::vector<const Network*> Networks() const {
        return {&mainnet_.network, &devnet_.network};
    }

    TestNetwork mainnet_{2, Mainnet()};
    NamedNetwork devnet_{"devnet", 1};
    testing::BlockServiceRig rig_{mainnet_.network, "status_golden_test",
                                  CubeRunner()};
};

TEST_F(StatusGolden, StateJson) {
    EXPECT_EQ(RenderState(Networks(), kNowMono, kNowWall),
              WithCacheDir(kStateJson));
}

TEST_F(StatusGolden, MetricsText) {
    EXPECT_EQ(RenderMetrics(Networks(), kNowMono), kMetricsText);
}

}  // namespace
}  // namespace solgate
