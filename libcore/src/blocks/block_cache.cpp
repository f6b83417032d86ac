#include "blocks/block_cache.h"

#include <unistd.h>

#include "blocks/block_retention.h"
#include "blocks/blocks_shared.h"

namespace solgate {

BlockCache::BlockCache(const BlockServiceConf& conf, SharedBlocks& zone)
    : conf_(conf), zone_(zone) {}

BlockCache::~BlockCache() = default;

bool BlockCache::OpenStore(bool reconcile, std::string* error) {
    BlockStoreOptions options;
    options.cache_dir = conf_.cache_dir();
    options.state_dir = conf_.state_dir();
    store_ = BlockStore::Open(options, reconcile, error);
    opening_ = store_ ? store_->opening() : BlockStore::Opening{};
    return store_ != nullptr;
}

void BlockCache::Close() { store_.reset(); }

bool BlockCache::Lookup(uint64_t slot, std::string_view variant,
                        BlockRecord* record) const {
    return store_ && store_->Lookup(slot, variant, record);
}

std::string BlockCache::PathFor(uint64_t slot,
                                std::string_view variant) const {
    return store_ ? store_->PathFor(slot, variant) : std::string();
}

std::optional<BlockStore::Totals> BlockCache::Totals() const {
    if (!store_) {
        return std::nullopt;
    }
    return store_->GetTotals();
}

bool BlockCache::Entries(std::vector<BlockStore::Entry>* out) const {
    std::string error;
    return store_ && store_->List(out, &error);
}

uint64_t BlockCache::Version() const {
    BlockStore::Totals totals =
        store_ ? store_->GetTotals() : BlockStore::Totals{};
    uint64_t stored = zone_.bound() ? zone_.counters().stored.load() : 0;
    return totals.entries * 1000003u + totals.evictions + stored;
}

void BlockCache::Drop(uint64_t slot, const std::string& variant) {
    if (!store_) {
        return;
    }
    std::string error;   // the entry stays: the next request drops it
    store_->Remove({{slot, variant}}, &error);
}

void BlockCache::ApplyScores(const std::vector<ScoredRequest>& requests) {
    if (!store_ || requests.empty()) {
        return;
    }
    RecordLookup lookup = [this](uint64_t slot, const std::string& variant,
                                 BlockRecord* rec) {
        return store_->Lookup(slot, variant, rec);
    };
    std::string error;
    store_->UpdateScores(FoldScores(requests, lookup, conf_.retention()),
                         &error);
}

std::string BlockCache::NewTempPath() { return store_->NewTempPath(); }

bool BlockCache::MakeRoom(uint64_t incoming, int64_t wall_ms) {
    if (!store_ || conf_.max_bytes() == 0) {
        return true;
    }
    BlockStore::Totals totals = store_->GetTotals();
    if (totals.bytes + incoming <= conf_.max_bytes()) {
        return true;
    }
    std::vector<BlockStore::Entry> entries;
    std::string error;
    if (!store_->List(&entries, &error)) {
        return false;
    }
    std::vector<CachedBlockStat> stats;
    stats.reserve(entries.size());
    for (const auto& e : entries) {
        stats.push_back({e.slot, e.rec.bytes, e.rec.stored_ms, e.rec.score,
                         e.rec.score_ms});
    }
    EvictionPlan plan = PlanEvictions(stats, totals.bytes, incoming,
                                      conf_.max_bytes(), wall_ms,
                                      conf_.retention());
    if (!plan.evict.empty()) {
        std::vector<std::pair<uint64_t, std::string>> keys;
        for (size_t i : plan.evict) {
            keys.push_back({entries[i].slot, entries[i].variant});
        }
        store_->Remove(keys, &error);
    }
    return plan.fits;
}

bool BlockCache::Commit(const std::string& temp_path, uint64_t slot,
                        const std::string& variant, const BlockRecord& rec,
                        std::string* error) {
    bool ok = false;
    if (store_) {
        ok = store_->Commit(temp_path, slot, variant, rec, error);
    } else {
        ::unlink(temp_path.c_str());   // closed while the capture ran
        *error = "the cache is closed";
    }
    if (zone_.bound()) {
        (ok ? zone_.counters().stored : zone_.counters().store_failures)
            .fetch_add(1);
    }
    return ok;
}

void BlockCache::NoteReceipt(const std::string& api_key, uint64_t slot,
                             int64_t wall_ms) {
    zone_.allowances().NoteReceipt(api_key, slot, wall_ms);
    region_receipts_.Add(api_key, slot, wall_ms);
}

}  // namespace solgate
