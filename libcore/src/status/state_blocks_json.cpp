#include "status/state_blocks_json.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "base/digest.h"
#include "status/json_object.h"
#include "status/status_common.h"

namespace solgate {
namespace {

void AppendSources(std::string& out,
                   const std::atomic<uint64_t> (&served)[kSourceCount]) {
    JsonObject o(out);
    for (int s = 0; s < kSourceCount; s++) {
        o.Uint(BlockSourceName(s), ReadCounter(served[s]));
    }
    o.Close();
}

// The plan's name; "" for an index past the configured plans.
std::string_view PlanName(const BlocksView& blocks, size_t plan) {
    const auto& plans = blocks.conf().plans();
    return plan < plans.size() ? std::string_view(plans[plan].name)
                               : std::string_view();
}

void AppendKey(std::string& out, const BlocksView& blocks,
               const KeyFigures& figures) {
    const KeySnapshot& key = figures.snapshot;
    JsonObject o(out);
    o.String("key", MaskedKey(key.key));
    o.String("key_sha256", Sha256Hex(key.key, 8));   // to tell keys apart
    o.String("plan", PlanName(blocks, key.plan_index));
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

void AppendKeys(std::string& out, const BlocksView& blocks,
                int64_t now_wall_ms) {
    JsonArray keys(out);
    for (const KeyFigures& figures : blocks.Keys(now_wall_ms)) {
        AppendKey(keys.Next(), blocks, figures);
    }
    keys.Close();
}

void AppendQueue(std::string& out, const BlocksView& blocks, size_t plan,
                 const QueueStats& stats) {
    JsonObject o(out);
    o.String("plan", blocks.conf().plans()[plan].name);
    o.Uint("depth", stats.depth);
    o.Uint("in_flight", stats.in_flight);
    o.Int("oldest_wait_ms", stats.oldest_wait_ms);
    o.Uint("retrieved", stats.retrieved);
    o.Uint("failed", stats.failed);
    o.Uint("dropped", stats.dropped);
    o.Uint("queue_full", stats.queue_full);
    o.Uint("allowance_refusals",
           ReadCounter(blocks.counters().allowance_refusals[plan]));
    o.Close();
}

// One object per plan that has a long-term storage queue.
void AppendQueues(std::string& out, const BlocksView& blocks,
                  int64_t now_mono_ms) {
    JsonArray queues(out);
    for (size_t p = 0; p < blocks.conf().plans().size(); p++) {
        if (std::optional<QueueStats> stats = blocks.Queue(p, now_mono_ms)) {
            AppendQueue(queues.Next(), blocks, p, *stats);
        }
    }
    queues.Close();
}

// The cache's totals only while it is open in this process.
void AppendCache(std::string& out, const BlocksView& blocks) {
    const BlockServiceConf& conf = blocks.conf();
    const BlocksHostCounters& shared = blocks.counters();
    JsonObject cache(out);
    cache.String("dir", conf.cache_dir());
    cache.Uint("max_size", conf.max_bytes());
    if (std::optional<BlockStore::Totals> totals = blocks.CacheTotals()) {
        cache.Uint("bytes", totals->bytes);
        cache.Uint("entries", totals->entries);
        cache.Uint("evictions", totals->evictions);
    }
    cache.Uint("stored", ReadCounter(shared.stored));
    cache.Uint("store_failures", ReadCounter(shared.store_failures));
    cache.Close();
}

void AppendPeers(std::string& out, const BlocksView& blocks) {
    const std::vector<BlockPeer>& peers = blocks.conf().peers();
    const BlocksHostCounters& shared = blocks.counters();
    JsonArray list(out);
    for (size_t p = 0; p < peers.size(); p++) {
        JsonObject peer(list.Next());
        peer.String("name", peers[p].name);
        peer.String("url", peers[p].url);
        if (peers[p].connect_to.size() > 2) {
            // the upstream block's server the poller asks ("::ADDRESS")
            peer.String("server", peers[p].connect_to.substr(2));
        }
        peer.Uint("fetches", ReadCounter(shared.peer_fetches[p]));
        peer.Uint("failures", ReadCounter(shared.peer_failures[p]));
        peer.Uint("copies", ReadCounter(shared.peer_copies[p]));
        peer.Close();
    }
    list.Close();
}

}  // namespace

void AppendBlocksState(std::string& out, const BlocksView& blocks,
                       int64_t now_mono_ms, int64_t now_wall_ms) {
    const BlocksHostCounters& shared = blocks.counters();
    JsonObject o(out);
    o.String("region", blocks.conf().region());
    if (std::optional<uint64_t> first = blocks.FirstAvailableBlock()) {
        o.Uint("first_available_block", *first);
    } else {
        o.Null("first_available_block");
    }
    AppendCache(o.Key("cache"), blocks);
    AppendSources(o.Key("served"), shared.served);
    o.Uint("tier_answers", ReadCounter(shared.tier_answers));
    o.Uint("lock_waits", ReadCounter(shared.lock_waits));
    o.Uint("lock_timeouts", ReadCounter(shared.lock_timeouts));
    o.Uint("unauthorized", ReadCounter(shared.unauthorized));
    o.Uint("peer_requests", ReadCounter(shared.peer_requests));
    o.Uint("key_table_full", blocks.KeyTableFull());
    AppendPeers(o.Key("peers"), blocks);
    std::vector<std::string> long_term;
    for (const LongTermEndpoint& endpoint : blocks.conf().long_term()) {
        long_term.push_back(LongTermName(endpoint));
    }
    AppendStringArray(o.Key("long_term_storage"), long_term);
    AppendQueues(o.Key("queues"), blocks, now_mono_ms);
    AppendKeys(o.Key("keys"), blocks, now_wall_ms);
    o.Close();
}

// At most a quarter of the key at each end (4 characters at most), so no
// key, however short, is shown whole.
std::string MaskedKey(const std::string& key) {
    size_t shown = std::min<size_t>(key.size() / 4, 4);
    return key.substr(0, shown) + "..." + key.substr(key.size() - shown);
}

}  // namespace solgate
