#include "status/status_render.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "blocks/block_service.h"
#include "slots/state_poller.h"

namespace solgate {
namespace {

// --- what the metrics read ------------------------------------------------

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
