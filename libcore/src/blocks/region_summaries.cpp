#include "blocks/region_summaries.h"

#include <algorithm>

#include "json/json_writer.h"

namespace solgate {
namespace {

// The variants of a plain getBlock(slot), with or without
// maxSupportedTransactionVersion 0: the cache coverage that
// getFirstAvailableBlock extends the ledger's window with.
constexpr std::string_view kPlainVariants = "getBlock/json/full/r1/";

}  // namespace

// --- PeerSummaries -----------------------------------------------------------

void PeerSummaries::Store(size_t peer, int64_t now_ms,
                          RegionSummary variants) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (peer < peers_.size()) {
        peers_[peer].fetched_ms = now_ms;
        peers_[peer].variants = std::move(variants);
    }
}

void PeerSummaries::MarkFailed(size_t peer) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (peer < peers_.size()) {
        peers_[peer].fetched_ms = 0;
        peers_[peer].variants.clear();
    }
}

const RegionSummary* PeerSummaries::FreshLocked(size_t peer,
                                                int64_t now_ms) const {
    if (peer >= peers_.size() || peers_[peer].fetched_ms == 0 ||
        now_ms - peers_[peer].fetched_ms > kPeerSummaryTtlMs) {
        return nullptr;
    }
    return &peers_[peer].variants;
}

bool PeerSummaries::Holds(size_t peer, std::string_view variant,
                          uint64_t slot, int64_t now_ms) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const RegionSummary* fresh = FreshLocked(peer, now_ms);
    if (fresh == nullptr) {
        return false;
    }
    for (const auto& [name, ranges] : *fresh) {
        if (name == variant) {
            return ranges.Contains(slot);
        }
    }
    return false;
}

RegionSummary PeerSummaries::Fresh(size_t peer, int64_t now_ms) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const RegionSummary* fresh = FreshLocked(peer, now_ms);
    return fresh != nullptr ? *fresh : RegionSummary();
}

// --- CacheSummary ------------------------------------------------------------

bool CacheSummary::Stale(uint64_t version, int64_t wall_ms) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return version != version_ || wall_ms - built_ms_ >= kPeerSummaryTtlMs;
}

void CacheSummary::Rebuild(const std::vector<BlockStore::Entry>& entries,
                           uint64_t version, int64_t wall_ms) {
    RegionSummary summary;
    for (const auto& e : entries) {
        if (summary.empty() || summary.back().first != e.variant) {
            summary.push_back({e.variant, SlotRanges()});
        }
        summary.back().second.Add(e.slot);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    summary_ = std::move(summary);
    version_ = version;
    built_ms_ = wall_ms;
}

RegionSummary CacheSummary::Ranges() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return summary_;
}

uint64_t CacheSummary::ExtendDown(uint64_t first) const {
    if (first == 0) {
        return 0;
    }
    uint64_t lowest = first;
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [variant, ranges] : summary_) {
        if (variant.rfind(kPlainVariants, 0) == 0) {
            if (auto low = ranges.ContiguousDownFrom(first - 1)) {
                lowest = std::min(lowest, *low);
            }
        }
    }
    return lowest;
}

std::string CacheSummary::Render(std::string_view region,
                                 std::string_view network,
                                 int64_t wall_ms) const {
    std::string out = "{\"region\":";
    AppendJsonString(out, region);
    out += ",\"network\":";
    AppendJsonString(out, network);
    out += ",\"generated_ms\":" + std::to_string(wall_ms);
    out += ",\"variants\":{";
    std::lock_guard<std::mutex> lock(mutex_);
    bool first = true;
    for (const auto& [variant, ranges] : summary_) {
        if (!first) {
            out += ",";
        }
        first = false;
        AppendJsonString(out, variant);
        out += ":";
        AppendJsonString(out, ranges.ToText());
    }
    out += "}}";
    return out;
}

}  // namespace solgate
