// What each region's cache holds, as slot ranges per variant: the other
// regions' (PeerSummaries, learnt by BlockSync on the poller thread, read
// by the request path to pick a region that holds a block) and this
// region's own (CacheSummary, rebuilt from the cache index by the upkeep,
// sent to the other regions and read by BlockSync to find what to copy).
// Both are per process and locked: written by one thread, read by others.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "blocks/block_conf.h"
#include "blocks/slot_ranges.h"
#include "store/block_store.h"

namespace solgate {

// A peer's summary older than this is not trusted: the peer is skipped.
// The local summary is also rebuilt at least this often.
constexpr int64_t kPeerSummaryTtlMs = 30000;
constexpr int64_t kPeerSummaryIntervalMs = 5000;

using RegionSummary = std::vector<std::pair<std::string, SlotRanges>>;

class PeerSummaries {
public:
    PeerSummaries() : peers_(kMaxBlockPeers) {}
    void Store(size_t peer, int64_t now_ms, RegionSummary variants);
    void MarkFailed(size_t peer);
    bool Holds(size_t peer, std::string_view variant, uint64_t slot,
               int64_t now_ms) const;
    // Copy of a fresh summary (empty when stale or absent).
    RegionSummary Fresh(size_t peer, int64_t now_ms) const;

private:
    struct Peer {
        int64_t fetched_ms = 0;
        RegionSummary variants;
    };
    // The peer's summary while it can be trusted; nullptr otherwise.
    const RegionSummary* FreshLocked(size_t peer, int64_t now_ms) const;

    mutable std::mutex mutex_;
    std::vector<Peer> peers_;
};

class CacheSummary {
public:
    // Whether the summary must be rebuilt: the index changed since (its
    // `version`: anything that moves when entries are added or evicted),
    // or the last rebuild is kPeerSummaryTtlMs old.
    bool Stale(uint64_t version, int64_t wall_ms) const;
    // Rebuilt from the index's entries (in index order: by variant, then
    // slot).
    void Rebuild(const std::vector<BlockStore::Entry>& entries,
                 uint64_t version, int64_t wall_ms);

    RegionSummary Ranges() const;
    // The lowest slot from which the plain getBlock variants hold every
    // block up to `first` - 1 (`first` when they do not hold first - 1):
    // how far the cache extends the ledger's window down.
    uint64_t ExtendDown(uint64_t first) const;
    // {"region":..,"network":..,"generated_ms":..,"variants":{v:"a-b,c"}}
    std::string Render(std::string_view region, std::string_view network,
                       int64_t wall_ms) const;

private:
    mutable std::mutex mutex_;
    RegionSummary summary_;
    uint64_t version_ = 0;
    int64_t built_ms_ = 0;
};

}  // namespace solgate
