#include "status/status_render.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string_view>
#include <utility>

#include "blocks/block_service.h"
#include "rpc/cluster.h"
#include "json/json_writer.h"
#include "slots/state_poller.h"

namespace solgate {
namespace {

// --- shared by both views -------------------------------------------------

std::vector<const Network*> BoundNetworks(
    const std::vector<const Network*>& networks) {
    std::vector<const Network*> bound;
    for (const Network* network : networks) {
        if (network != nullptr && network->bound()) {
            bound.push_back(network);
        }
    }
    return bound;
}

uint64_t Load(const std::atomic<uint64_t>& value) {
    return value.load(std::memory_order_relaxed);
}

// A cold upstream (nothing polled yet) counts as healthy.
bool Healthy(const Network& network, size_t i) {
    return network.slots().Health(i) != HealthOutcome::kFailed &&
           IngestionLag(network, i) <= kMaxShredInsertSlotLag &&
           network.slots().Genesis(i) != GenesisCheck::kDiffers;
}

// --- JSON of GET /solgate/state ---------------------------------------------

// "2026-11-30T05:04:28.123Z"
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

// Writes one JSON object member by member, commas included.
class JsonObject {
public:
    explicit JsonObject(std::string& out) : out_(out) { out_.push_back('{'); }

    // Writes the key; the caller appends the value to the returned text.
    std::string& Key(std::string_view key) {
        if (!first_) {
            out_.push_back(',');
        }
        first_ = false;
        AppendJsonString(out_, key);
        out_.push_back(':');
        return out_;
    }

    void Uint(std::string_view key, uint64_t value) {
        Key(key) += std::to_string(value);
    }
    void Int(std::string_view key, int64_t value) {
        Key(key) += std::to_string(value);
    }
    void Bool(std::string_view key, bool value) {
        Key(key) += value ? "true" : "false";
    }
    void String(std::string_view key, std::string_view value) {
        AppendJsonString(Key(key), value);
    }
    void Null(std::string_view key) { Key(key) += "null"; }

    void Close() { out_.push_back('}'); }

private:
    std::string& out_;
    bool first_ = true;
};

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
        o.Uint(PollMethodName(static_cast<PollMethod>(m)), Load(counts[m]));
    }
    o.Close();
}

void AppendUpstream(std::string& out, const Network& network, size_t i,
                    int64_t now_mono_ms) {
    const SlotStore& views = network.slots();
    const UpstreamRecord& record = network.record(i);
    JsonObject o(out);
    o.String("id", network.upstream(i).id);
    o.Uint("processed_slot", views.View(i, kSlotProcessed));
    o.Uint("finalized_slot", views.View(i, kSlotFinalized));
    o.Uint("shred_insert_slot", views.View(i, kSlotShred));
    o.Uint("ingestion_lag_slots", IngestionLag(network, i));
    o.String("health", HealthName(views.Health(i)));
    o.Bool("healthy", Healthy(network, i));
    o.String("genesis", GenesisName(views.Genesis(i)));
    AppendCordon(o.Key("cordon"), network, i);
    AppendLease(o.Key("lease"), network, i, now_mono_ms);
    AppendTrafficAges(o.Key("traffic_seen_ms_ago"), network, i, now_mono_ms);
    AppendPollCounts(o.Key("polls"), record.polls);
    AppendPollCounts(o.Key("poll_errors"), record.poll_errors);
    o.Uint("large_rollbacks", Load(record.large_rollbacks));
    o.Uint("cordon_events", Load(record.cordon_events));
    o.Uint("gate_skipped_ticks", Load(record.gate_skipped_ticks));
    o.Uint("harvested", Load(record.harvested));
    o.Close();
}

void AppendUpstreams(std::string& out, const Network& network,
                     int64_t now_mono_ms) {
    out.push_back('[');
    for (size_t i = 0; i < network.size(); i++) {
        if (i > 0) {
            out.push_back(',');
        }
        AppendUpstream(out, network, i, now_mono_ms);
    }
    out.push_back(']');
}

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

void AppendNetworkCounters(std::string& out, const NetworkShared& shared) {
    JsonObject o(out);
    o.Uint("getslot_corrections", Load(shared.getslot_corrections));
    o.Uint("guard_rejections", Load(shared.guard_rejections));
    o.Uint("all_cordoned_fallbacks", Load(shared.all_cordoned_fallbacks));
    o.Close();
}

void AppendSources(std::string& out,
                   const std::atomic<uint64_t> (&served)[kSourceCount]) {
    JsonObject o(out);
    for (int s = 0; s < kSourceCount; s++) {
        o.Uint(BlockSourceName(s), Load(served[s]));
    }
    o.Close();
}

// An API key as the state shows it: keys are secrets, so beyond 8 bytes
// only the first and last 4 are shown ("abcd...wxyz"), enough to tell
// keys apart.
std::string MaskedKey(const std::string& key) {
    if (key.size() <= 8) {
        return key;
    }
    return key.substr(0, 4) + "..." + key.substr(key.size() - 4);
}

// Per-key figures live here, never as metric labels (cardinality).
void AppendBlockKeys(std::string& out, const BlocksView& blocks,
                     int64_t now_wall_ms) {
    out.push_back('[');
    bool first = true;
    for (const KeyFigures& figures : blocks.Keys(now_wall_ms)) {
        const KeySnapshot& key = figures.snapshot;
        if (!first) {
            out.push_back(',');
        }
        first = false;
        JsonObject o(out);
        o.String("key", MaskedKey(key.key));
        const auto& plans = blocks.conf().plans();
        o.String("plan", key.plan_index < plans.size()
                             ? std::string_view(plans[key.plan_index].name)
                             : std::string_view());
        o.Uint("requests", key.requests);
        o.Uint("rate_limited", key.limited);
        if (figures.allowance_used && figures.repeat_count) {
            o.Uint("allowance_used", *figures.allowance_used);
            o.Uint("repeat_count", *figures.repeat_count);
        }
        JsonObject served(o.Key("served"));
        for (int s = 0; s < kSourceCount; s++) {
            served.Uint(BlockSourceName(s), key.served[s]);
        }
        served.Close();
        o.Close();
    }
    out.push_back(']');
}

void AppendQueues(std::string& out, const BlocksView& blocks,
                  int64_t now_mono_ms) {
    out.push_back('[');
    bool first = true;
    const auto& plans = blocks.conf().plans();
    for (size_t p = 0; p < plans.size(); p++) {
        std::optional<QueueStats> queue = blocks.Queue(p, now_mono_ms);
        if (!queue) {
            continue;
        }
        if (!first) {
            out.push_back(',');
        }
        first = false;
        const QueueStats& stats = *queue;
        JsonObject o(out);
        o.String("plan", plans[p].name);
        o.Uint("depth", stats.depth);
        o.Uint("in_flight", stats.in_flight);
        o.Int("oldest_wait_ms", stats.oldest_wait_ms);
        o.Uint("retrieved", stats.retrieved);
        o.Uint("failed", stats.failed);
        o.Uint("dropped", stats.dropped);
        o.Uint("queue_full", stats.queue_full);
        o.Uint("allowance_refusals",
               Load(blocks.counters().allowance_refusals[p]));
        o.Close();
    }
    out.push_back(']');
}

void AppendBlocks(std::string& out, const BlocksView& blocks,
                  int64_t now_mono_ms, int64_t now_wall_ms) {
    const BlockServiceConf& conf = blocks.conf();
    const BlocksShared& shared = blocks.counters();
    JsonObject o(out);
    o.String("region", conf.region());
    if (auto first = blocks.FirstAvailableBlock()) {
        o.Uint("first_available_block", *first);
    } else {
        o.Null("first_available_block");
    }
    JsonObject cache(o.Key("cache"));
    cache.String("dir", conf.cache_dir());
    cache.Uint("max_size", conf.max_bytes());
    if (std::optional<BlockStore::Totals> totals = blocks.CacheTotals()) {
        cache.Uint("bytes", totals->bytes);
        cache.Uint("entries", totals->entries);
        cache.Uint("evictions", totals->evictions);
    }
    cache.Uint("stored", Load(shared.stored));
    cache.Uint("store_failures", Load(shared.store_failures));
    cache.Close();
    AppendSources(o.Key("served"), shared.served);
    o.Uint("tier_answers", Load(shared.tier_answers));
    o.Uint("unauthorized", Load(shared.unauthorized));
    o.Uint("peer_requests", Load(shared.peer_requests));
    o.Uint("key_table_full", Load(shared.keys.table_full));
    o.Key("peers").push_back('[');
    for (size_t p = 0; p < conf.peers().size(); p++) {
        if (p > 0) {
            out.push_back(',');
        }
        JsonObject peer(out);
        peer.String("name", conf.peers()[p].name);
        peer.String("url", conf.peers()[p].url);
        peer.Uint("fetches", Load(shared.peer_fetches[p]));
        peer.Uint("failures", Load(shared.peer_failures[p]));
        peer.Uint("copies", Load(shared.peer_copies[p]));
        peer.Close();
    }
    out.push_back(']');
    o.Key("long_term_storage").push_back('[');
    for (size_t i = 0; i < conf.long_term_urls().size(); i++) {
        if (i > 0) {
            out.push_back(',');
        }
        AppendJsonString(out, conf.long_term_urls()[i]);
    }
    out.push_back(']');
    AppendQueues(o.Key("queues"), blocks, now_mono_ms);
    AppendBlockKeys(o.Key("keys"), blocks, now_wall_ms);
    o.Close();
}

void AppendNetwork(std::string& out, const Network& network,
                   int64_t now_mono_ms, int64_t now_wall_ms) {
    const NetworkSettings& settings = network.settings();
    JsonObject o(out);
    o.String("name", network.name());
    o.String("cluster", ClusterName(settings.cluster));
    AppendCommitment(o, settings.default_commitment);
    o.Uint("state_poller_debounce_ms", settings.debounce_ms);
    o.Int("max_finalized_slot_lag", settings.max_finalized_slot_lag);
    o.Bool("enforce_block_availability", settings.enforce_block_availability);
    AppendTips(o.Key("tips"), network.CurrentTips());
    o.Uint("guard_margin", network.GuardMargin());
    AppendNetworkCounters(o.Key("counters"), network.counters());
    AppendUpstreams(o.Key("upstreams"), network, now_mono_ms);
    if (network.blocks() != nullptr && network.blocks()->bound()) {
        AppendBlocks(o.Key("blocks"), network.blocks()->view(), now_mono_ms,
                     now_wall_ms);
    }
    o.Close();
}

// --- Prometheus metrics -----------------------------------------------------

using Label = std::pair<std::string_view, std::string_view>;

// Label values escape backslash, double quote and newline.
void AppendLabelValue(std::string& out, std::string_view value) {
    for (char c : value) {
        switch (c) {
        case '\\': out += "\\\\"; break;
        case '"':  out += "\\\""; break;
        case '\n': out += "\\n"; break;
        default:   out.push_back(c);
        }
    }
}

void AppendSampleText(std::string& out, std::string_view name,
                      std::initializer_list<Label> labels,
                      std::string_view value) {
    out += name;
    out.push_back('{');
    bool first = true;
    for (const auto& [key, text] : labels) {
        if (!first) {
            out.push_back(',');
        }
        first = false;
        out += key;
        out += "=\"";
        AppendLabelValue(out, text);
        out.push_back('"');
    }
    out += "} ";
    out += value;
    out.push_back('\n');
}

void AppendSample(std::string& out, std::string_view name,
                  std::initializer_list<Label> labels, uint64_t value) {
    AppendSampleText(out, name, labels, std::to_string(value));
}

using SampleWriter =
    std::function<void(std::string& out, std::string_view name,
                       const Network& network, int64_t now_ms)>;

struct Family {
    std::string_view name;
    std::string_view type;
    std::string_view help;
    SampleWriter samples;
};

void AppendFamily(std::string& out, const Family& family,
                  const std::vector<const Network*>& networks,
                  int64_t now_ms) {
    out += "# HELP ";
    out += family.name;
    out.push_back(' ');
    out += family.help;
    out += "\n# TYPE ";
    out += family.name;
    out.push_back(' ');
    out += family.type;
    out.push_back('\n');
    for (const Network* network : networks) {
        family.samples(out, family.name, *network, now_ms);
    }
}

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

// One sample per upstream and poll method, from one counter array.
SampleWriter PerPollMethod(
    const std::atomic<uint64_t> (UpstreamRecord::*counts)[kPollMethodCount]) {
    return [counts](std::string& out, std::string_view name,
                    const Network& network, int64_t) {
        for (size_t i = 0; i < network.size(); i++) {
            const UpstreamRecord& record = network.record(i);
            for (size_t m = 0; m < kPollMethodCount; m++) {
                auto method = static_cast<PollMethod>(m);
                AppendSample(out, name,
                             {{"network", network.name()},
                              {"upstream", network.upstream(i).id},
                              {"method", PollMethodName(method)}},
                             Load((record.*counts)[m]));
            }
        }
    };
}

// One sample per network: {network} = value(shared table).
SampleWriter PerNetwork(uint64_t (*value)(const NetworkShared&)) {
    return [value](std::string& out, std::string_view name,
                   const Network& network, int64_t) {
        AppendSample(out, name, {{"network", network.name()}},
                     value(network.counters()));
    };
}

// Cube Runner's samples, for networks that have it.
SampleWriter PerBlocks(
    std::function<void(std::string&, std::string_view, const Network&,
                       const BlocksView&)> write) {
    return [write](std::string& out, std::string_view name,
                   const Network& network, int64_t) {
        const BlockService* blocks = network.blocks();
        if (blocks != nullptr && blocks->bound()) {
            write(out, name, network, blocks->view());
        }
    };
}

SampleWriter BlocksCounter(std::atomic<uint64_t> BlocksShared::*counter) {
    return PerBlocks([counter](std::string& out, std::string_view name,
                               const Network& network,
                               const BlocksView& blocks) {
        AppendSample(out, name, {{"network", network.name()}},
                     Load(blocks.counters().*counter));
    });
}

SampleWriter BlocksPerPeer(
    std::atomic<uint64_t> (BlocksShared::*counts)[kMaxBlockPeers]) {
    return PerBlocks([counts](std::string& out, std::string_view name,
                              const Network& network,
                              const BlocksView& blocks) {
        const auto& peers = blocks.conf().peers();
        for (size_t p = 0; p < peers.size(); p++) {
            AppendSample(out, name,
                         {{"network", network.name()},
                          {"peer", peers[p].name}},
                         Load((blocks.counters().*counts)[p]));
        }
    });
}

SampleWriter BlocksCache(uint64_t BlockStore::Totals::*field) {
    return PerBlocks([field](std::string& out, std::string_view name,
                             const Network& network,
                             const BlocksView& blocks) {
        if (std::optional<BlockStore::Totals> totals = blocks.CacheTotals()) {
            AppendSample(out, name, {{"network", network.name()}},
                         (*totals).*field);
        }
    });
}

void AppendServedBySource(std::string& out, std::string_view name,
                          const Network& network,
                          const BlocksView& blocks) {
    for (int s = 0; s < kSourceCount; s++) {
        AppendSample(out, name,
                     {{"network", network.name()},
                      {"source", BlockSourceName(s)}},
                     Load(blocks.counters().served[s]));
    }
}

// One sample per plan: {network, plan} = value(shared counter array).
SampleWriter BlocksPerPlan(
    std::atomic<uint64_t> (BlocksShared::*counts)[kMaxBlockPlans]) {
    return PerBlocks([counts](std::string& out, std::string_view name,
                              const Network& network,
                              const BlocksView& blocks) {
        const auto& plans = blocks.conf().plans();
        for (size_t p = 0; p < plans.size(); p++) {
            AppendSample(out, name,
                         {{"network", network.name()},
                          {"plan", plans[p].name}},
                         Load((blocks.counters().*counts)[p]));
        }
    });
}

// One sample per plan with a long-term storage queue.
SampleWriter PerQueue(std::string (*value)(const QueueStats&)) {
    return [value](std::string& out, std::string_view name,
                   const Network& network, int64_t now_ms) {
        const BlockService* blocks = network.blocks();
        if (blocks == nullptr || !blocks->bound()) {
            return;
        }
        const auto& plans = blocks->conf().plans();
        for (size_t p = 0; p < plans.size(); p++) {
            if (std::optional<QueueStats> stats =
                    blocks->view().Queue(p, now_ms)) {
                AppendSampleText(out, name,
                                 {{"network", network.name()},
                                  {"plan", plans[p].name}},
                                 value(*stats));
            }
        }
    };
}

std::string QueueDepth(const QueueStats& s) { return std::to_string(s.depth); }
std::string QueueInFlight(const QueueStats& s) {
    return std::to_string(s.in_flight);
}
std::string QueueOldestWait(const QueueStats& s) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.3f", s.oldest_wait_ms / 1000.0);
    return text;
}
std::string QueueRetrieved(const QueueStats& s) {
    return std::to_string(s.retrieved);
}
std::string QueueFailed(const QueueStats& s) {
    return std::to_string(s.failed);
}
std::string QueueDropped(const QueueStats& s) {
    return std::to_string(s.dropped);
}
std::string QueueFull(const QueueStats& s) {
    return std::to_string(s.queue_full);
}

// Value 1 with the current reason when cordoned, else reason="" value 0.
void AppendCordonedSamples(std::string& out, std::string_view name,
                           const Network& network, int64_t) {
    for (size_t i = 0; i < network.size(); i++) {
        bool cordoned = network.Cordoned(i);
        std::string reason = cordoned ? CordonReason(network, i) : std::string();
        AppendSample(out, name,
                     {{"network", network.name()},
                      {"upstream", network.upstream(i).id},
                      {"reason", reason}},
                     cordoned ? 1 : 0);
    }
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

std::string LaneAdvanceAge(const LaneGauges& axis, int64_t now_ms) {
    int64_t anchor = axis.anchor_ms;
    if (anchor == 0) {
        return "0";
    }
    char text[32];
    snprintf(text, sizeof(text), "%.3f",
             static_cast<double>(std::max<int64_t>(0, now_ms - anchor)) / 1000);
    return text;
}

void AppendIndexedTipSamples(std::string& out, std::string_view name,
                             const Network& network, int64_t) {
    AppendSample(out, name, {{"network", network.name()}},
                 network.CurrentTips().indexed);
}

uint64_t ProcessedSlot(const Network& n, size_t i) {
    return n.slots().View(i, kSlotProcessed);
}
uint64_t FinalizedSlot(const Network& n, size_t i) {
    return n.slots().View(i, kSlotFinalized);
}
uint64_t ShredSlot(const Network& n, size_t i) {
    return n.slots().View(i, kSlotShred);
}
uint64_t HealthyValue(const Network& n, size_t i) {
    return Healthy(n, i) ? 1 : 0;
}
uint64_t CordonEvents(const Network& n, size_t i) {
    return Load(n.record(i).cordon_events);
}
uint64_t LargeRollbacks(const Network& n, size_t i) {
    return Load(n.record(i).large_rollbacks);
}
uint64_t GateSkippedTicks(const Network& n, size_t i) {
    return Load(n.record(i).gate_skipped_ticks);
}
uint64_t Harvested(const Network& n, size_t i) {
    return Load(n.record(i).harvested);
}

uint64_t GetSlotCorrections(const NetworkShared& n) {
    return Load(n.getslot_corrections);
}
uint64_t GuardRejections(const NetworkShared& n) {
    return Load(n.guard_rejections);
}
uint64_t AllCordonedFallbacks(const NetworkShared& n) {
    return Load(n.all_cordoned_fallbacks);
}

// Every family, in the order they are exposed.
const std::vector<Family>& Families() {
    static const std::vector<Family> kFamilies{
        {"solgate_upstream_latest_slot", "gauge",
         "Latest slot of the upstream's processed view (a slot number, not a "
         "block height).",
         PerUpstream(ProcessedSlot)},
        {"solgate_upstream_finalized_slot", "gauge",
         "Latest slot of the upstream's finalized view.",
         PerUpstream(FinalizedSlot)},
        {"solgate_upstream_shred_insert_slot", "gauge",
         "Highest slot the upstream inserted shreds for "
         "(getMaxShredInsertSlot).",
         PerUpstream(ShredSlot)},
        {"solgate_upstream_ingestion_lag_slots", "gauge",
         "Shred-insert slot minus processed slot of the upstream (0 when "
         "unknown).",
         PerUpstream(IngestionLag)},
        {"solgate_upstream_healthy", "gauge",
         "1 unless getHealth failed, the ingestion lag exceeds its "
         "threshold or the genesis hash differs; else 0.",
         PerUpstream(HealthyValue)},
        {"solgate_upstream_cordoned", "gauge",
         "1 with the reason when the upstream is out of rotation, else 0.",
         AppendCordonedSamples},
        {"solgate_upstream_cordon_events_total", "counter",
         "Times the upstream was cordoned, by the state poller or an operator.",
         PerUpstream(CordonEvents)},
        {"solgate_upstream_large_rollbacks_total", "counter",
         "Backward slot jumps beyond the tolerance accepted from the upstream.",
         PerUpstream(LargeRollbacks)},
        {"solgate_upstream_poll_requests_total", "counter",
         "State poller requests sent to the upstream, by method.",
         PerPollMethod(&UpstreamRecord::polls)},
        {"solgate_upstream_poll_errors_total", "counter",
         "State poller requests to the upstream that failed, by method.",
         PerPollMethod(&UpstreamRecord::poll_errors)},
        {"solgate_upstream_traffic_gate_skips_total", "counter",
         "Poll ticks that skipped getSlot because live traffic was fresh.",
         PerUpstream(GateSkippedTicks)},
        {"solgate_upstream_context_slot_harvests_total", "counter",
         "context.slot values taken from the upstream's live responses.",
         PerUpstream(Harvested)},
        {"solgate_network_getslot_corrections_total", "counter",
         "getSlot answers from upstreams rewritten to the served tip.",
         PerNetwork(GetSlotCorrections)},
        {"solgate_network_guard_rejections_total", "counter",
         "getBlock calls answered locally because no upstream indexed the slot "
         "yet.",
         PerNetwork(GuardRejections)},
        {"solgate_network_all_cordoned_total", "counter",
         "Upstream picks made while every upstream was cordoned (all taken "
         "back into rotation).",
         PerNetwork(AllCordonedFallbacks)},
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
        {"solgate_blocks_served_total", "counter",
         "getBlock answers by the source that held the block.",
         PerBlocks(AppendServedBySource)},
        {"solgate_blocks_cache_bytes", "gauge",
         "Bytes of blocks in the region cache.",
         BlocksCache(&BlockStore::Totals::bytes)},
        {"solgate_blocks_cache_entries", "gauge",
         "Blocks (and skipped slots) in the region cache.",
         BlocksCache(&BlockStore::Totals::entries)},
        {"solgate_blocks_cache_evictions_total", "counter",
         "Entries evicted from the region cache to make room.",
         BlocksCache(&BlockStore::Totals::evictions)},
        {"solgate_blocks_cache_store_failures_total", "counter",
         "Answers that could not be written to the region cache.",
         BlocksCounter(&BlocksShared::store_failures)},
        {"solgate_blocks_tier_answers_total", "counter",
         "getBlock calls no source held (-32001 for the plan's tier).",
         BlocksCounter(&BlocksShared::tier_answers)},
        {"solgate_blocks_unauthorized_total", "counter",
         "Cube Runner calls refused for a missing key or an unknown plan.",
         BlocksCounter(&BlocksShared::unauthorized)},
        {"solgate_blocks_rate_limited_total", "counter",
         "getBlock calls refused by the plan's getblock_rate.",
         BlocksPerPlan(&BlocksShared::rate_limited)},
        {"solgate_blocks_peer_fetches_total", "counter",
         "getBlock calls sent to another region's gateway.",
         BlocksPerPeer(&BlocksShared::peer_fetches)},
        {"solgate_blocks_peer_failures_total", "counter",
         "Calls to another region that failed or found no block.",
         BlocksPerPeer(&BlocksShared::peer_failures)},
        {"solgate_blocks_peer_copies_total", "counter",
         "Blocks copied in the background from another region's cache.",
         BlocksPerPeer(&BlocksShared::peer_copies)},
        {"solgate_blocks_peer_requests_total", "counter",
         "Cache lookups answered for other regions.",
         BlocksCounter(&BlocksShared::peer_requests)},
        {"solgate_blocks_queue_depth", "gauge",
         "Blocks queued for retrieval from long-term storage, per plan.",
         PerQueue(QueueDepth)},
        {"solgate_blocks_queue_in_flight", "gauge",
         "Retrievals from long-term storage in progress, per plan.",
         PerQueue(QueueInFlight)},
        {"solgate_blocks_queue_oldest_wait_seconds", "gauge",
         "How long the oldest queued block has waited, per plan.",
         PerQueue(QueueOldestWait)},
        {"solgate_blocks_long_term_retrievals_total", "counter",
         "Blocks retrieved from long-term storage and cached, per plan.",
         PerQueue(QueueRetrieved)},
        {"solgate_blocks_long_term_failures_total", "counter",
         "Retrievals long-term storage did not return, per plan.",
         PerQueue(QueueFailed)},
        {"solgate_blocks_queue_dropped_total", "counter",
         "Queued blocks dropped after 150 s without a request, per plan.",
         PerQueue(QueueDropped)},
        {"solgate_blocks_queue_full_total", "counter",
         "Blocks not queued because the plan's queue was full.",
         PerQueue(QueueFull)},
        {"solgate_blocks_allowance_counted_total", "counter",
         "Retrievals counted against keys' monthly allowances (once per "
         "waiting key), per plan.",
         BlocksPerPlan(&BlocksShared::allowance_counted)},
        {"solgate_blocks_allowance_refusals_total", "counter",
         "getBlock calls refused because the key's monthly allowance was "
         "spent, per plan.",
         BlocksPerPlan(&BlocksShared::allowance_refusals)},
        {"solgate_blocks_repeats_total", "counter",
         "Retrievals for keys that had received the block within 24 h "
         "(repeat counts), per plan.",
         BlocksPerPlan(&BlocksShared::repeats_counted)},
    };
    return kFamilies;
}

}  // namespace

std::string RenderState(const std::vector<const Network*>& networks,
                        int64_t now_mono_ms, int64_t now_wall_ms) {
    std::string out = "{\"networks\":[";
    bool first = true;
    for (const Network* network : BoundNetworks(networks)) {
        if (!first) {
            out.push_back(',');
        }
        first = false;
        AppendNetwork(out, *network, now_mono_ms, now_wall_ms);
    }
    out += "],\"generated_at\":";
    AppendJsonString(out, FormatUtc(now_wall_ms));
    out += "}";
    return out;
}

std::string RenderMetrics(const std::vector<const Network*>& networks,
                          int64_t now_mono_ms) {
    std::vector<const Network*> bound = BoundNetworks(networks);
    std::string out;
    for (const Family& family : Families()) {
        AppendFamily(out, family, bound, now_mono_ms);
    }
    return out;
}

}  // namespace solgate
