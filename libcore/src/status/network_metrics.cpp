#include "status/network_metrics.h"

#include <algorithm>
#include <array>
#include <atomic>

#include "pubsub/ws_counts.h"
#include "routing/request_metrics.h"
#include "routing/routed_request.h"
#include "slots/state_poller.h"
#include "status/prometheus_text.h"
#include "status/status_common.h"

namespace solgate {
namespace {

// One sample per upstream: {network, upstream} = value(network, i).
SampleWriter PerUpstream(uint64_t (*value)(const Network&, size_t)) {
    return [value](std::string& out, std::string_view name,
                   const Network& network, int64_t) {
        for (size_t i = 0; i < network.size(); i++) {
            AppendSample(out, name,
                         {{"network", network.name()},
                          {"upstream", network.upstream(i).id}},
                         value(network, i));
        }
    };
}

// {network, upstream} = the upstream's view of one slot axis.
template <SlotAxis axis>
uint64_t UpstreamSlot(const Network& network, size_t i) {
    return network.slots().View(i, axis);
}

// {network, upstream} = one of this host's counters of the upstream.
template <std::atomic<uint64_t> UpstreamHostRecord::*counter>
uint64_t RecordCounter(const Network& network, size_t i) {
    return ReadCounter(network.host(i).*counter);
}

uint64_t HealthyValue(const Network& network, size_t i) {
    return UpstreamHealthy(network, i) ? 1 : 0;
}

// {network, upstream} = its lag, for the upstreams whose slots are
// current: a node that is down has none (its last slot would make one
// that grows until it is back).
void AppendSlotLagSamples(std::string& out, std::string_view name,
                          const Network& network, int64_t) {
    for (size_t i = 0; i < network.size(); i++) {
        if (network.SlotsCurrent(i)) {
            AppendSample(out, name,
                         {{"network", network.name()},
                          {"upstream", network.upstream(i).id}},
                         network.SlotLagInNetwork(i));
        }
    }
}

uint64_t LaggingValue(const Network& network, size_t i) {
    return network.LaggingInNetwork(i) ? 1 : 0;
}

uint64_t WeightValue(const Network& network, size_t i) {
    return network.upstream(i).routing.weight;
}

// {network, upstream} = 1 while passive health keeps it out, else 0.
void AppendEjectedSamples(std::string& out, std::string_view name,
                          const Network& network, int64_t now_ms) {
    for (size_t i = 0; i < network.size(); i++) {
        AppendSample(out, name,
                     {{"network", network.name()},
                      {"upstream", network.upstream(i).id}},
                     Ejected(network.host(i), now_ms) ? 1 : 0);
    }
}

// {network, upstream, method, outcome} = client requests; upstream "" for
// answers Solgate gave itself. Keys of upstreams no longer configured
// (a reload) are left out.
void AppendRequestSamples(std::string& out, std::string_view name,
                          const Network& network, int64_t) {
    std::array<const std::string*, kMaxUpstreams + 1> id_of{};
    static const std::string kNone;
    for (size_t i = 0; i < network.size(); i++) {
        id_of[network.RecordIndex(i)] = &network.upstream(i).id;
    }
    id_of[kNoUpstreamSlot] = &kNone;
    ForEachRequestCount(
        network.counters().requests,
        [&](size_t slot, size_t method, RequestOutcome outcome, uint64_t n) {
            if (slot > kMaxUpstreams || id_of[slot] == nullptr) {
                return;
            }
            AppendSample(out, name,
                         {{"network", network.name()},
                          {"upstream", *id_of[slot]},
                          {"method", SolanaMethodName(method)},
                          {"outcome", RequestOutcomeName(outcome)}},
                         n);
        });
}

// The latency histogram per {network, upstream, class}: _bucket{le},
// _sum (seconds), _count.
void AppendDurationSamples(std::string& out, std::string_view name,
                           const Network& network, int64_t) {
    std::string bucket = std::string(name) + "_bucket";
    std::string sum = std::string(name) + "_sum";
    std::string count = std::string(name) + "_count";
    for (size_t i = 0; i < network.size(); i++) {
        const UpstreamHostRecord& host = network.host(i);
        for (size_t c = 0; c < kMethodClasses; c++) {
            uint64_t n = host.latency_count[c].load(std::memory_order_relaxed);
            if (n == 0) {
                continue;  // only classes the upstream served
            }
            std::string_view cls = MethodClassName(static_cast<MethodClass>(c));
            uint64_t cumulative = 0;
            for (size_t b = 0; b < kLatencyBuckets; b++) {
                cumulative +=
                    host.latency_buckets[c][b].load(std::memory_order_relaxed);
                std::string le = SecondsText(int64_t(kLatencyBucketMs[b]));
                AppendSample(out, bucket,
                             {{"network", network.name()},
                              {"upstream", network.upstream(i).id},
                              {"class", cls}, {"le", le}},
                             cumulative);
            }
            AppendSample(out, bucket,
                         {{"network", network.name()},
                          {"upstream", network.upstream(i).id},
                          {"class", cls}, {"le", "+Inf"}},
                         n);
            AppendSampleText(
                out, sum,
                {{"network", network.name()},
                 {"upstream", network.upstream(i).id}, {"class", cls}},
                SecondsText(int64_t(
                    host.latency_sum_ms[c].load(std::memory_order_relaxed))));
            AppendSample(out, count,
                         {{"network", network.name()},
                          {"upstream", network.upstream(i).id},
                          {"class", cls}},
                         n);
        }
    }
}

// {network, upstream, cause} = attempts failed over.
void AppendFailoverSamples(std::string& out, std::string_view name,
                           const Network& network, int64_t) {
    for (size_t i = 0; i < network.size(); i++) {
        for (size_t c = 1; c < kAttemptCauses; c++) {   // 0 is "ok"
            AppendSample(out, name,
                         {{"network", network.name()},
                          {"upstream", network.upstream(i).id},
                          {"cause", AttemptCauseName(static_cast<AttemptCause>(c))}},
                         ReadCounter(network.host(i).failovers[c]));
        }
    }
}

void AppendBroadcastSamples(std::string& out, std::string_view name,
                            const Network& network, int64_t) {
    for (size_t i = 0; i < network.size(); i++) {
        for (size_t k = 0; k < 2; k++) {
            AppendSample(out, name,
                         {{"network", network.name()},
                          {"upstream", network.upstream(i).id},
                          {"outcome", k == 0 ? "ok" : "failed"}},
                         ReadCounter(network.host(i).broadcasts[k]));
        }
    }
}

// The solgate_ws_* families: only upstreams with ws= take subscriptions.
void AppendWsOpenSamples(std::string& out, std::string_view name,
                         const Network& network, int64_t) {
    for (size_t i = 0; i < network.size(); i++) {
        if (network.upstream(i).pubsub.url.empty()) {
            continue;
        }
        int64_t open = network.host(i).ws_open.load(std::memory_order_relaxed);
        AppendSample(out, name,
                     {{"network", network.name()},
                      {"upstream", network.upstream(i).id}},
                     open > 0 ? static_cast<uint64_t>(open) : 0);
    }
}

void AppendWsOpenedSamples(std::string& out, std::string_view name,
                           const Network& network, int64_t) {
    for (size_t i = 0; i < network.size(); i++) {
        if (!network.upstream(i).pubsub.url.empty()) {
            AppendSample(out, name,
                         {{"network", network.name()},
                          {"upstream", network.upstream(i).id}},
                         ReadCounter(network.host(i).ws_opened));
        }
    }
}

void AppendWsClosedSamples(std::string& out, std::string_view name,
                           const Network& network, int64_t) {
    for (size_t i = 0; i < network.size(); i++) {
        if (network.upstream(i).pubsub.url.empty()) {
            continue;
        }
        for (size_t end = 0; end < kWsEnds; end++) {
            AppendSample(out, name,
                         {{"network", network.name()},
                          {"upstream", network.upstream(i).id},
                          {"cause", WsEndName(end)}},
                         ReadCounter(network.host(i).ws_closed[end]));
        }
    }
}

void AppendWsBytesSamples(std::string& out, std::string_view name,
                          const Network& network, int64_t) {
    for (size_t i = 0; i < network.size(); i++) {
        if (network.upstream(i).pubsub.url.empty()) {
            continue;
        }
        const UpstreamHostRecord& record = network.host(i);
        for (auto [direction, counter] :
             {std::pair{"to_client", &record.ws_bytes_to_client},
              std::pair{"from_client", &record.ws_bytes_from_client}}) {
            AppendSample(out, name,
                         {{"network", network.name()},
                          {"upstream", network.upstream(i).id},
                          {"direction", direction}},
                         ReadCounter(*counter));
        }
    }
}

void AppendRetrySamples(std::string& out, std::string_view name,
                        const Network& network, int64_t) {
    for (size_t r = 1; r < kRetryReasons; r++) {   // 0 is "none"
        auto reason = static_cast<RoutedRequest::Retry>(r);
        AppendSample(out, name,
                     {{"network", network.name()},
                      {"reason", RoutedRequest::RetryName(reason)}},
                     ReadCounter(network.counters().retries[r]));
    }
}

void AppendConsensusSamples(std::string& out, std::string_view name,
                            const Network& network, int64_t) {
    for (size_t k = 0; k < kConsensusOutcomes; k++) {
        AppendSample(out, name,
                     {{"network", network.name()},
                      {"outcome",
                       ConsensusOutcomeName(static_cast<ConsensusOutcome>(k))}},
                     ReadCounter(network.counters().consensus[k]));
    }
}

void AppendUncountedSamples(std::string& out, std::string_view name,
                            const Network& network, int64_t) {
    AppendSample(out, name, {{"network", network.name()}},
                 ReadCounter(network.counters().requests.dropped));
}

// {network, upstream} = the EWMA of its polls' round trips, in seconds.
void AppendLatencySamples(std::string& out, std::string_view name,
                          const Network& network, int64_t) {
    for (size_t i = 0; i < network.size(); i++) {
        AppendSampleText(out, name,
                         {{"network", network.name()},
                          {"upstream", network.upstream(i).id}},
                         SecondsText(network.host(i).latency_ewma_us.load(
                                         std::memory_order_relaxed) /
                                     1000));
    }
}

// One sample per upstream and poll method, from one counter array.
SampleWriter PerPollMethod(
    const std::atomic<uint64_t> (UpstreamHostRecord::*counts)[kPollMethodCount]) {
    return [counts](std::string& out, std::string_view name,
                    const Network& network, int64_t) {
        for (size_t i = 0; i < network.size(); i++) {
            const UpstreamHostRecord& record = network.host(i);
            for (size_t m = 0; m < kPollMethodCount; m++) {
                auto method = static_cast<PollMethod>(m);
                AppendSample(out, name,
                             {{"network", network.name()},
                              {"upstream", network.upstream(i).id},
                              {"method", PollMethodName(method)}},
                             ReadCounter((record.*counts)[m]));
            }
        }
    };
}

// Value 1 with the cordon's cause when cordoned, else reason="" value 0.
// The cause, not the reason's text: an operator's words and the poller's
// (a lag in slots, a node's error page) would make a series per text.
void AppendCordonedSamples(std::string& out, std::string_view name,
                           const Network& network, int64_t) {
    for (size_t i = 0; i < network.size(); i++) {
        bool cordoned = network.Cordoned(i);
        std::string_view reason =
            cordoned ? CordonCauseName(network.cordons().Cordon(i).cause)
                     : std::string_view();
        AppendSample(out, name,
                     {{"network", network.name()},
                      {"upstream", network.upstream(i).id},
                      {"reason", reason}},
                     cordoned ? 1 : 0);
    }
}

// One sample per network: {network} = one of this host's counters.
// fleet mode only: 1 while this host's poller reaches the fleet's Redis
void AppendSharedStateUp(std::string& out, std::string_view name,
                         const Network& network, int64_t) {
    uint64_t link = ReadCounter(network.counters().fleet_link);
    if (link != kFleetLinkNone) {
        AppendSample(out, name, {{"network", network.name()}},
                     link == kFleetLinkUp ? 1 : 0);
    }
}

// fleet mode only: the store's round trips, _bucket{le}, _sum, _count
void AppendStoreRoundTrips(std::string& out, std::string_view name,
                           const Network& network, int64_t) {
    const NetworkHostCounters& c = network.counters();
    if (ReadCounter(c.fleet_link) == kFleetLinkNone) {
        return;
    }
    std::string bucket = std::string(name) + "_bucket";
    uint64_t cumulative = 0;
    for (size_t b = 0; b < kRoundTripBuckets; b++) {
        cumulative += ReadCounter(c.store_round_trips[b]);
        AppendSample(out, bucket,
                     {{"network", network.name()},
                      {"le", MicrosecondsText(kRoundTripBucketUs[b])}},
                     cumulative);
    }
    uint64_t n = ReadCounter(c.store_round_trip_count);
    AppendSample(out, bucket, {{"network", network.name()}, {"le", "+Inf"}},
                 n);
    AppendSampleText(out, std::string(name) + "_sum",
                     {{"network", network.name()}},
                     MicrosecondsText(ReadCounter(c.store_round_trip_sum_us)));
    AppendSample(out, std::string(name) + "_count",
                 {{"network", network.name()}}, n);
}

SampleWriter PerNetwork(std::atomic<uint64_t> NetworkHostCounters::*counter) {
    return [counter](std::string& out, std::string_view name,
                     const Network& network, int64_t) {
        AppendSample(out, name, {{"network", network.name()}},
                     ReadCounter(network.counters().*counter));
    };
}

using LaneGauges = LaneAxisMemory::Gauges;

// One sample per lane ("all" and the groups requests formed) and axis:
// {network, lane, axis} = value(gauges).
SampleWriter PerLaneAxis(std::string (*value)(const LaneGauges&, int64_t)) {
    return [value](std::string& out, std::string_view name,
                   const Network& network, int64_t now_ms) {
        for (const LaneInfo& lane : network.tips().Lanes()) {
            for (size_t a = 0; a < kAxisCount; a++) {
                auto axis = static_cast<LaneAxis>(a);
                AppendSampleText(
                    out, name,
                    {{"network", network.name()},
                     {"lane", lane.name},
                     // the name is not unique: two groups may share it
                     {"lane_key", lane.key},
                     {"axis", LaneAxisName(axis)}},
                    value(network.tips().Axis(lane.id, axis).Read(), now_ms));
            }
        }
    };
}

std::string LaneServed(const LaneGauges& axis, int64_t) {
    return std::to_string(axis.served);
}

std::string LaneLag(const LaneGauges& axis, int64_t) {
    return std::to_string(axis.max_head > axis.served
                              ? axis.max_head - axis.served
                              : 0);
}

// "0" while the lane's tip never moved.
std::string LaneAdvanceAge(const LaneGauges& axis, int64_t now_ms) {
    if (axis.anchor_ms == 0) {
        return "0";
    }
    return SecondsText(std::max<int64_t>(0, now_ms - axis.anchor_ms));
}

void AppendIndexedTipSamples(std::string& out, std::string_view name,
                             const Network& network, int64_t) {
    AppendSample(out, name, {{"network", network.name()}},
                 network.CurrentTips().indexed);
}

}  // namespace

const std::vector<MetricFamily>& NetworkFamilies() {
    static const std::vector<MetricFamily> kFamilies{
        {"solgate_upstream_latest_slot", "gauge",
         "Latest slot of the upstream's processed view (a slot number, not a "
         "block height).",
         PerUpstream(UpstreamSlot<kSlotProcessed>)},
        {"solgate_upstream_finalized_slot", "gauge",
         "Latest slot of the upstream's finalized view.",
         PerUpstream(UpstreamSlot<kSlotFinalized>)},
        {"solgate_upstream_shred_insert_slot", "gauge",
         "Highest slot the upstream inserted shreds for "
         "(getMaxShredInsertSlot).",
         PerUpstream(UpstreamSlot<kSlotShred>)},
        {"solgate_upstream_ingestion_lag_slots", "gauge",
         "Shred-insert slot minus processed slot of the upstream (0 when "
         "unknown).",
         PerUpstream(IngestionLag)},
        {"solgate_upstream_healthy", "gauge",
         "1 unless getHealth failed, the ingestion lag exceeds its "
         "threshold or the genesis hash differs; else 0.",
         PerUpstream(HealthyValue)},
        {"solgate_upstream_slot_lag_slots", "gauge",
         "Slots the upstream's last observed processed slot trails the "
         "network's reference (the upper median of its upstreams); none "
         "while its slot polls fail.",
         AppendSlotLagSamples},
        {"solgate_upstream_lagging", "gauge",
         "1 while the upstream trails by more than max_slot_lag (no client "
         "traffic while another is current), else 0.",
         PerUpstream(LaggingValue)},
        {"solgate_upstream_ejected", "gauge",
         "1 while failed attempts (max_fails) or a 429's Retry-After keep the "
         "upstream out of rotation on this host, else 0.",
         AppendEjectedSamples},
        {"solgate_upstream_ejections_total", "counter",
         "Times failed attempts or a Retry-After took the upstream out of "
         "rotation on this host.",
         PerUpstream(RecordCounter<&UpstreamHostRecord::ejections>)},
        {"solgate_upstream_latency_ewma_seconds", "gauge",
         "Moving average of the state poller's round trips to the upstream "
         "(routing prefers faster upstreams).",
         AppendLatencySamples},
        {"solgate_upstream_weight", "gauge",
         "The upstream's configured weight=.",
         PerUpstream(WeightValue)},
        {"solgate_upstream_cordoned", "gauge",
         "1 with the cause (unhealthy, shred_lag, genesis, operator) when the "
         "upstream is out of rotation, else 0; the reason's text is on the "
         "status page and in the state endpoint.",
         AppendCordonedSamples},
        {"solgate_upstream_cordon_events_total", "counter",
         "Times the upstream was cordoned, by the state poller or an operator.",
         PerUpstream(RecordCounter<&UpstreamHostRecord::cordon_events>)},
        {"solgate_upstream_large_rollbacks_total", "counter",
         "Backward slot jumps beyond the tolerance accepted from the upstream.",
         PerUpstream(RecordCounter<&UpstreamHostRecord::large_rollbacks>)},
        {"solgate_upstream_poll_requests_total", "counter",
         "State poller requests sent to the upstream, by method.",
         PerPollMethod(&UpstreamHostRecord::polls)},
        {"solgate_upstream_poll_errors_total", "counter",
         "State poller requests to the upstream that failed, by method.",
         PerPollMethod(&UpstreamHostRecord::poll_errors)},
        {"solgate_upstream_traffic_gate_skips_total", "counter",
         "Poll ticks that skipped getSlot because live traffic was fresh.",
         PerUpstream(RecordCounter<&UpstreamHostRecord::gate_skipped_ticks>)},
        {"solgate_upstream_context_slot_harvests_total", "counter",
         "context.slot values taken from the upstream's live responses.",
         PerUpstream(RecordCounter<&UpstreamHostRecord::harvested>)},
        {"solgate_requests_total", "counter",
         "Client requests by the upstream that answered last (\"\" for "
         "Solgate's own answers), method (a Solana method, \"batch\" or "
         "\"other\") and outcome (ok, rpc_error, client_error, http_error, local, "
         "client_closed, cut).",
         AppendRequestSamples},
        {"solgate_request_duration_seconds", "histogram",
         "Client request time, by the upstream that answered and method "
         "class (read, heavy, write).",
         AppendDurationSamples},
        {"solgate_failovers_total", "counter",
         "Attempts on the upstream that failed and were retried elsewhere, "
         "by cause (transport, timeout, http_429, http_5xx, node_behind, "
         "min_context_slot: the client's, not counted as the node's error).",
         AppendFailoverSamples},
        {"solgate_upstream_cut_answers_total", "counter",
         "Answers from the upstream that ended before their end (the "
         "connection closed or timed out mid-answer, too late to fail "
         "over); each counts as a failed attempt (max_fails).",
         PerUpstream(RecordCounter<&UpstreamHostRecord::cut_answers>)},
        {"solgate_broadcast_attempts_total", "counter",
         "broadcast attempts sent to the upstream, by outcome (ok: a "
         "result; failed: an error, an HTTP failure or no answer).",
         AppendBroadcastSamples},
        {"solgate_ws_connections", "gauge",
         "WebSocket subscription connections open on the upstream (ws=), "
         "this host.",
         AppendWsOpenSamples},
        {"solgate_ws_connections_total", "counter",
         "WebSocket subscription connections the upstream accepted.",
         AppendWsOpenedSamples},
        {"solgate_ws_closed_total", "counter",
         "WebSocket subscription connections that ended, by cause (closed: "
         "by the client, the node or ws_idle_timeout; cordoned, lagging, "
         "drained: moved off the node with close 1012).",
         AppendWsClosedSamples},
        {"solgate_ws_bytes_total", "counter",
         "Bytes WebSocket subscription connections carried, by direction "
         "(to_client, from_client), counted as each connection ends.",
         AppendWsBytesSamples},
        {"solgate_retries_total", "counter",
         "Calls asked of another upstream because one lacked the data, by "
         "reason (missing_data, skipped_slot): retry_missing_data.",
         AppendRetrySamples},
        {"solgate_consensus_total", "counter",
         "consensus decisions, by outcome (agreed; dispute: too few "
         "matching answers; low_participants: too few answers; failed: "
         "none).",
         AppendConsensusSamples},
        {"solgate_hedges_sent_total", "counter",
         "hedge attempts sent because the first had not answered in time.",
         PerNetwork(&NetworkHostCounters::hedges_sent)},
        {"solgate_hedges_won_total", "counter",
         "hedge attempts whose answer the client got.",
         PerNetwork(&NetworkHostCounters::hedges_won)},
        {"solgate_requests_uncounted_total", "counter",
         "Requests solgate_requests_total could not count (its table of "
         "4096 label sets is full).",
         AppendUncountedSamples},
        {"solgate_shared_state_up", "gauge",
         "Fleet mode: 1 while this host reaches the fleet's Redis "
         "(solgate_shared_state), 0 while it runs on its own state.",
         AppendSharedStateUp},
        {"solgate_shared_state_round_trip_seconds", "histogram",
         "Fleet mode: round trips of this host's commands to the fleet's "
         "Redis (every network of the host shows them all).",
         AppendStoreRoundTrips},
        {"solgate_network_getslot_corrections_total", "counter",
         "getSlot answers from upstreams rewritten to the served tip.",
         PerNetwork(&NetworkHostCounters::getslot_corrections)},
        {"solgate_network_guard_rejections_total", "counter",
         "getBlock calls answered locally because no upstream indexed the slot "
         "yet.",
         PerNetwork(&NetworkHostCounters::guard_rejections)},
        {"solgate_network_all_cordoned_total", "counter",
         "Upstream picks made while every upstream was cordoned (all taken "
         "back into rotation).",
         PerNetwork(&NetworkHostCounters::all_cordoned_fallbacks)},
        {"solgate_network_served_tip_slot", "gauge",
         "Served tip slot per lane (\"all\" is the network-wide one) and "
         "commitment axis.",
         PerLaneAxis(LaneServed)},
        {"solgate_network_served_tip_lag_slots", "gauge",
         "How far the lane's served tip is below its highest upstream head.",
         PerLaneAxis(LaneLag)},
        {"solgate_network_served_tip_advance_age_seconds", "gauge",
         "Seconds since the lane's served tip last moved forward.",
         PerLaneAxis(LaneAdvanceAge)},
        {"solgate_network_indexed_tip_slot", "gauge",
         "Highest shred-insert slot among the network's upstreams.",
         AppendIndexedTipSamples},
    };
    return kFamilies;
}

}  // namespace solgate
