#include "status/blocks_metrics.h"

#include <atomic>
#include <optional>

#include "blocks/blocks_view.h"
#include "status/prometheus_text.h"
#include "status/status_common.h"

namespace solgate {
namespace {

// Appends the samples of family `name` from one Cube Runner; `network` is
// the value of the network label.
using BlocksWriter =
    std::function<void(std::string& out, std::string_view name,
                       std::string_view network, const BlocksView& blocks,
                       int64_t now_ms)>;

// A writer for networks whose Cube Runner is bound; no samples otherwise.
SampleWriter PerBlocks(BlocksWriter write) {
    return [write](std::string& out, std::string_view name,
                   const Network& network, int64_t now_ms) {
        if (const BlocksView* blocks = BoundBlocks(network)) {
            write(out, name, network.name(), *blocks, now_ms);
        }
    };
}

// {network} = one shared counter.
SampleWriter BlocksCounter(std::atomic<uint64_t> BlocksHostCounters::*counter) {
    return PerBlocks([counter](std::string& out, std::string_view name,
                               std::string_view network,
                               const BlocksView& blocks, int64_t) {
        AppendSample(out, name, {{"network", network}},
                     ReadCounter(blocks.counters().*counter));
    });
}

// {network} = one of the cache's totals, while it is open here.
SampleWriter BlocksCache(uint64_t BlockStore::Totals::*field) {
    return PerBlocks([field](std::string& out, std::string_view name,
                             std::string_view network,
                             const BlocksView& blocks, int64_t) {
        if (std::optional<BlockStore::Totals> totals = blocks.CacheTotals()) {
            AppendSample(out, name, {{"network", network}}, (*totals).*field);
        }
    });
}

// {network, source} for every source a block is served from.
void AppendServedBySource(std::string& out, std::string_view name,
                          std::string_view network, const BlocksView& blocks,
                          int64_t) {
    for (int s = 0; s < kSourceCount; s++) {
        AppendSample(out, name,
                     {{"network", network}, {"source", BlockSourceName(s)}},
                     ReadCounter(blocks.counters().served[s]));
    }
}

// {network, peer} for every configured peer, from one counter array.
SampleWriter BlocksPerPeer(
    std::atomic<uint64_t> (BlocksHostCounters::*counts)[kMaxBlockPeers]) {
    return PerBlocks([counts](std::string& out, std::string_view name,
                              std::string_view network,
                              const BlocksView& blocks, int64_t) {
        const auto& peers = blocks.conf().peers();
        for (size_t p = 0; p < peers.size(); p++) {
            AppendSample(out, name,
                         {{"network", network}, {"peer", peers[p].name}},
                         ReadCounter((blocks.counters().*counts)[p]));
        }
    });
}

// {network, plan} for every configured plan, from one counter array.
SampleWriter BlocksPerPlan(
    std::atomic<uint64_t> (BlocksHostCounters::*counts)[kMaxBlockPlans]) {
    return PerBlocks([counts](std::string& out, std::string_view name,
                              std::string_view network,
                              const BlocksView& blocks, int64_t) {
        const auto& plans = blocks.conf().plans();
        for (size_t p = 0; p < plans.size(); p++) {
            AppendSample(out, name,
                         {{"network", network}, {"plan", plans[p].name}},
                         ReadCounter((blocks.counters().*counts)[p]));
        }
    });
}

// {network, plan} = value(stats) for every plan with a long-term storage
// queue.
SampleWriter PerQueue(std::string (*value)(const QueueStats&)) {
    return PerBlocks([value](std::string& out, std::string_view name,
                             std::string_view network,
                             const BlocksView& blocks, int64_t now_ms) {
        const auto& plans = blocks.conf().plans();
        for (size_t p = 0; p < plans.size(); p++) {
            if (std::optional<QueueStats> stats = blocks.Queue(p, now_ms)) {
                AppendSampleText(out, name,
                                 {{"network", network},
                                  {"plan", plans[p].name}},
                                 value(*stats));
            }
        }
    });
}

// One count of the queue's statistics.
template <auto field>
std::string QueueCount(const QueueStats& stats) {
    return std::to_string(stats.*field);
}

std::string QueueOldestWait(const QueueStats& stats) {
    return SecondsText(stats.oldest_wait_ms);
}

}  // namespace

const std::vector<MetricFamily>& BlocksFamilies() {
    static const std::vector<MetricFamily> kFamilies{
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
         BlocksCounter(&BlocksHostCounters::store_failures)},
        {"solgate_blocks_tier_answers_total", "counter",
         "getBlock calls no source held (-32001 for the plan's tier).",
         BlocksCounter(&BlocksHostCounters::tier_answers)},
        {"solgate_blocks_lock_waits_total", "counter",
         "getBlock misses that waited for another request's fetch of the "
         "same block (cache_lock_timeout).",
         BlocksCounter(&BlocksHostCounters::lock_waits)},
        {"solgate_blocks_lock_timeouts_total", "counter",
         "Waits for another request's fetch that ran out "
         "(cache_lock_timeout), then fetched themselves.",
         BlocksCounter(&BlocksHostCounters::lock_timeouts)},
        {"solgate_blocks_unauthorized_total", "counter",
         "Cube Runner calls refused for a missing key or an unknown plan.",
         BlocksCounter(&BlocksHostCounters::unauthorized)},
        {"solgate_blocks_rate_limited_total", "counter",
         "getBlock calls refused by the plan's getblock_rate.",
         BlocksPerPlan(&BlocksHostCounters::rate_limited)},
        {"solgate_blocks_peer_fetches_total", "counter",
         "getBlock calls sent to another region's gateway.",
         BlocksPerPeer(&BlocksHostCounters::peer_fetches)},
        {"solgate_blocks_peer_failures_total", "counter",
         "Calls to another region that failed or found no block.",
         BlocksPerPeer(&BlocksHostCounters::peer_failures)},
        {"solgate_blocks_peer_copies_total", "counter",
         "Blocks copied in the background from another region's cache.",
         BlocksPerPeer(&BlocksHostCounters::peer_copies)},
        {"solgate_blocks_peer_requests_total", "counter",
         "Cache lookups answered for other regions.",
         BlocksCounter(&BlocksHostCounters::peer_requests)},
        {"solgate_blocks_queue_depth", "gauge",
         "Blocks queued for retrieval from long-term storage, per plan.",
         PerQueue(QueueCount<&QueueStats::depth>)},
        {"solgate_blocks_queue_in_flight", "gauge",
         "Retrievals from long-term storage in progress, per plan.",
         PerQueue(QueueCount<&QueueStats::in_flight>)},
        {"solgate_blocks_queue_oldest_wait_seconds", "gauge",
         "How long the oldest queued block has waited, per plan.",
         PerQueue(QueueOldestWait)},
        {"solgate_blocks_long_term_retrievals_total", "counter",
         "Blocks retrieved from long-term storage and cached, per plan.",
         PerQueue(QueueCount<&QueueStats::retrieved>)},
        {"solgate_blocks_long_term_failures_total", "counter",
         "Retrievals long-term storage did not return, per plan.",
         PerQueue(QueueCount<&QueueStats::failed>)},
        {"solgate_blocks_queue_dropped_total", "counter",
         "Queued blocks dropped after 150 s without a request, per plan.",
         PerQueue(QueueCount<&QueueStats::dropped>)},
        {"solgate_blocks_queue_full_total", "counter",
         "Blocks not queued because the plan's queue was full.",
         PerQueue(QueueCount<&QueueStats::queue_full>)},
        {"solgate_blocks_allowance_counted_total", "counter",
         "Retrievals counted against keys' monthly allowances (once per "
         "waiting key), per plan.",
         BlocksPerPlan(&BlocksHostCounters::allowance_counted)},
        {"solgate_blocks_allowance_refusals_total", "counter",
         "getBlock calls refused because the key's monthly allowance was "
         "spent, per plan.",
         BlocksPerPlan(&BlocksHostCounters::allowance_refusals)},
        {"solgate_blocks_repeats_total", "counter",
         "Retrievals for keys that had received the block within 24 h "
         "(repeat counts), per plan.",
         BlocksPerPlan(&BlocksHostCounters::repeats_counted)},
    };
    return kFamilies;
}

}  // namespace solgate
