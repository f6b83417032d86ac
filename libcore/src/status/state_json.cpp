#include "status/state_json.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "rpc/cluster.h"
#include "slots/state_poller.h"
#include "status/json_object.h"
#include "status/state_blocks_json.h"
#include "status/status_common.h"

namespace solgate {
namespace {

std::string_view HealthName(HealthOutcome health) {
    switch (health) {
    case HealthOutcome::kOk:     return "ok";
    case HealthOutcome::kFailed: return "failed";
    default:                     return "unknown";
    }
}

std::string_view GenesisName(GenesisCheck genesis) {
    switch (genesis) {
    case GenesisCheck::kMatches: return "matches";
    case GenesisCheck::kDiffers: return "differs";
    default:                     return "unchecked";
    }
}

std::string_view CordonOwnerName(CordonOwner owner) {
    switch (owner) {
    case CordonOwner::kPoller:   return "poller";
    case CordonOwner::kOperator: return "operator";
    default:                     return "unknown";
    }
}

// null when the upstream is in rotation.
void AppendCordon(std::string& out, const Network& network, size_t i) {
    CordonState cordon = network.cordons().Cordon(i);
    if (cordon.owner == CordonOwner::kNone) {
        out += "null";
        return;
    }
    JsonObject o(out);
    o.String("by", CordonOwnerName(cordon.owner));
    o.String("reason", CordonReason(network, i));
    o.String("since", FormatUtc(cordon.since_wall_ms));
    o.Close();
}

// null when no process holds the lease (pid 0, or expired).
void AppendLease(std::string& out, const Network& network, size_t i,
                 int64_t now_mono_ms) {
    Lease lease = network.leases().LeaseHolder(i);
    if (lease.pid == 0 || lease.expires_ms <= now_mono_ms) {
        out += "null";
        return;
    }
    JsonObject o(out);
    o.Uint("pid", lease.pid);
    o.Int("expires_in_ms", lease.expires_ms - now_mono_ms);
    o.Close();
}

// How long ago live traffic last fed a view; null when it never did.
void AppendAge(JsonObject& o, std::string_view key, int64_t seen,
               int64_t now_mono_ms) {
    if (seen == 0) {
        o.Null(key);
    } else {
        o.Int(key, std::max<int64_t>(0, now_mono_ms - seen));
    }
}

void AppendTrafficAges(std::string& out, const Network& network, size_t i,
                       int64_t now_mono_ms) {
    const SlotStore& views = network.slots();
    JsonObject o(out);
    AppendAge(o, "processed", views.TrafficSeenMs(i, kSlotProcessed),
              now_mono_ms);
    AppendAge(o, "finalized", views.TrafficSeenMs(i, kSlotFinalized),
              now_mono_ms);
    o.Close();
}

void AppendPollCounts(std::string& out,
                      const std::atomic<uint64_t> (&counts)[kPollMethodCount]) {
    JsonObject o(out);
    for (size_t m = 0; m < kPollMethodCount; m++) {
        o.Uint(PollMethodName(static_cast<PollMethod>(m)),
               ReadCounter(counts[m]));
    }
    o.Close();
}

void AppendUpstream(std::string& out, const Network& network, size_t i,
                    int64_t now_mono_ms) {
    const SlotStore& views = network.slots();
    const UpstreamHostRecord& record = network.host(i);
    JsonObject o(out);
    o.String("id", network.upstream(i).id);
    o.Uint("processed_slot", views.View(i, kSlotProcessed));
    o.Uint("finalized_slot", views.View(i, kSlotFinalized));
    o.Uint("shred_insert_slot", views.View(i, kSlotShred));
    o.Uint("ingestion_lag_slots", IngestionLag(network, i));
    o.Uint("observed_processed_slot", views.Observed(i));
    if (network.SlotsCurrent(i)) {
        o.Uint("slot_lag_slots", network.SlotLagInNetwork(i));
    } else {
        o.Null("slot_lag_slots");   // its last slots make no lag
    }
    o.Bool("slots_current", network.SlotsCurrent(i));
    o.Bool("lagging", network.LaggingInNetwork(i));
    o.Uint("weight", network.upstream(i).routing.weight);
    o.Uint("debounce_ms", network.DebounceOf(i));
    o.Bool("backup", network.upstream(i).routing.backup);
    o.Uint("latency_ewma_us", record.latency_ewma_us.load());
    o.Uint("failure_share_pct", record.failure_ewma.load() * 100 / 65536);
    int64_t ejected_until = record.ejected_until_ms.load();
    o.Int("ejected_for_ms", ejected_until > now_mono_ms
                                ? ejected_until - now_mono_ms
                                : 0);
    o.Uint("ejections", ReadCounter(record.ejections));
    // an operator's drain of its subscribers (0: none), and how many it
    // holds on this host (ws=)
    o.Int("drain_for_ms", network.DrainLeft(i, now_mono_ms));
    o.Int("ws_open", std::max<int64_t>(record.ws_open.load(), 0));
    o.String("health", HealthName(views.Health(i)));
    o.Bool("healthy", UpstreamHealthy(network, i));
    o.String("genesis", GenesisName(views.Genesis(i)));
    AppendCordon(o.Key("cordon"), network, i);
    AppendLease(o.Key("lease"), network, i, now_mono_ms);
    // fleet mode: the host that polls it, when another does
    std::string polled_by =
        ReadCounter(network.counters().fleet_link) != kFleetLinkNone
            ? record.polled_by.Read()
            : std::string();
    if (polled_by.empty()) {
        o.Null("polled_by");
    } else {
        o.String("polled_by", polled_by);
    }
    AppendTrafficAges(o.Key("traffic_seen_ms_ago"), network, i, now_mono_ms);
    AppendPollCounts(o.Key("polls"), record.polls);
    AppendPollCounts(o.Key("poll_errors"), record.poll_errors);
    o.Uint("large_rollbacks", ReadCounter(record.large_rollbacks));
    o.Uint("cordon_events", ReadCounter(record.cordon_events));
    o.Uint("gate_skipped_ticks", ReadCounter(record.gate_skipped_ticks));
    o.Uint("harvested", ReadCounter(record.harvested));
    o.Close();
}

void AppendUpstreams(std::string& out, const Network& network,
                     int64_t now_mono_ms) {
    JsonArray upstreams(out);
    for (size_t i = 0; i < network.size(); i++) {
        AppendUpstream(upstreams.Next(), network, i, now_mono_ms);
    }
    upstreams.Close();
}

// null when the network has no default commitment.
void AppendCommitment(JsonObject& o, sg_commitment_t commitment) {
    std::string_view name = CommitmentName(commitment);
    if (commitment == SG_COMMITMENT_NONE || name.empty()) {
        o.Null("commitment");
    } else {
        o.String("commitment", name);
    }
}

void AppendTips(std::string& out, const Tips& tips) {
    JsonObject o(out);
    o.Uint("processed", tips.processed);
    o.Uint("finalized", tips.finalized);
    o.Uint("indexed", tips.indexed);
    o.Close();
}

void AppendNetworkCounters(std::string& out, const NetworkHostCounters& shared) {
    JsonObject o(out);
    o.Uint("getslot_corrections", ReadCounter(shared.getslot_corrections));
    o.Uint("guard_rejections", ReadCounter(shared.guard_rejections));
    o.Uint("all_cordoned_fallbacks",
           ReadCounter(shared.all_cordoned_fallbacks));
    o.Close();
}

// broadcast, consensus and hedge as configured (no methods: off).
void AppendPolicies(JsonObject& o, const NetworkSettings& settings) {
    JsonObject broadcast(o.Key("broadcast"));
    AppendStringArray(broadcast.Key("methods"), settings.broadcast.methods);
    broadcast.Uint("to", settings.broadcast.to);
    broadcast.Close();
    JsonObject consensus(o.Key("consensus"));
    AppendStringArray(consensus.Key("methods"), settings.consensus.methods);
    consensus.Uint("participants", settings.consensus.participants);
    consensus.Uint("agreement", settings.consensus.agreement);
    consensus.String("dispute", settings.consensus.dispute ==
                                        conf::Consensus::Dispute::kMostCommon
                                    ? "most_common"
                                    : "error");
    consensus.Close();
    JsonObject hedge(o.Key("hedge"));
    AppendStringArray(hedge.Key("methods"), settings.hedge.methods);
    hedge.Uint("after_ms", settings.hedge.after_ms);
    hedge.Uint("max", settings.hedge.max);
    hedge.Close();
}

// "blocks" only for a network whose Cube Runner is bound.
void AppendNetwork(std::string& out, const Network& network,
                   int64_t now_mono_ms, int64_t now_wall_ms) {
    const NetworkSettings& settings = network.settings();
    JsonObject o(out);
    o.String("name", network.name());
    o.String("cluster", ClusterName(settings.cluster));
    AppendCommitment(o, settings.default_commitment);
    o.Uint("state_poller_debounce_ms", settings.debounce_ms);
    o.Int("max_finalized_slot_lag", settings.max_finalized_slot_lag);
    o.Uint("max_slot_lag", settings.max_slot_lag);
    o.Bool("use_upstream_from_client", settings.use_upstream_from_client);
    o.Bool("enforce_block_availability", settings.enforce_block_availability);
    JsonObject retry(o.Key("retry_missing_data"));
    retry.Bool("on", settings.retry_missing_data.on);
    retry.Uint("attempts", settings.retry_missing_data.attempts);
    retry.Uint("delay_ms", settings.retry_missing_data.delay_ms);
    retry.Close();
    o.Uint("max_batch_size", settings.max_batch_size);
    AppendPolicies(o, settings);
    AppendTips(o.Key("tips"), network.CurrentTips());
    o.Uint("guard_margin", network.GuardMargin());
    AppendNetworkCounters(o.Key("counters"), network.counters());
    // fleet mode: whether this host reaches the fleet's store
    switch (ReadCounter(network.counters().fleet_link)) {
    case kFleetLinkUp:
        o.String("shared_state", "up");
        break;
    case kFleetLinkDown:
        o.String("shared_state", "down");
        break;
    default:
        o.Null("shared_state");
        break;
    }
    AppendUpstreams(o.Key("upstreams"), network, now_mono_ms);
    if (const BlocksView* blocks = BoundBlocks(network)) {
        AppendBlocksState(o.Key("blocks"), *blocks, now_mono_ms, now_wall_ms);
    }
    o.Close();
}

}  // namespace

std::string FormatUtc(int64_t wall_ms) {
    int64_t seconds = wall_ms / 1000;
    int64_t millis = wall_ms % 1000;
    if (millis < 0) {
        seconds -= 1;
        millis += 1000;
    }
    time_t t = static_cast<time_t>(seconds);
    struct tm utc {};
    if (gmtime_r(&t, &utc) == nullptr) {
        return "";
    }
    char text[64];
    std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
                  utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                  utc.tm_min, utc.tm_sec, static_cast<int>(millis));
    return text;
}

std::string RenderState(const std::vector<const Network*>& networks,
                        int64_t now_mono_ms, int64_t now_wall_ms) {
    std::string out;
    JsonObject document(out);
    JsonArray list(document.Key("networks"));
    for (const Network* network : BoundNetworks(networks)) {
        AppendNetwork(list.Next(), *network, now_mono_ms, now_wall_ms);
    }
    list.Close();
    document.String("generated_at", FormatUtc(now_wall_ms));
    document.Close();
    return out;
}

}  // namespace solgate
