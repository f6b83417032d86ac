#include "blocks/block_service.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "blocks/block_sync.h"
#include "routing/network.h"

namespace solgate {

BlockService::BlockService(BlockServiceConf conf, Network& network)
    : conf_(std::move(conf)),
      network_(network),
      zone_(conf_, ledger_),
      cache_(conf_, zone_),
      long_term_(conf_, zone_),
      decider_(conf_, network_, zone_, cache_, local_, peers_, long_term_,
               scores_),
      view_(conf_, zone_, decider_, cache_, long_term_) {
    network.TrackLedgerWindow();
    network.set_blocks(this);
}

BlockService::~BlockService() = default;

bool BlockService::Bind(void* memory, bool fresh, std::string* error) {
    return zone_.Bind(memory, fresh, error);
}

bool BlockService::OpenStore(bool reconcile, std::string* error) {
    if (!cache_.OpenStore(reconcile, error)) {
        return false;
    }
    if (!ledger_.Open(conf_.state_dir(), reconcile, error)) {
        *error = "key ledger: " + *error;
        cache_.Close();
        return false;
    }
    // only a process that can store what it fetches makes others wait
    decider_.SetProcess(static_cast<uint32_t>(::getpid()));
    return true;
}

void BlockService::CloseStore() {
    decider_.SetProcess(0);
    RunCommits();
    Maintain(0);
    ledger_.Close();
    cache_.Close();
}

std::unique_ptr<BlockCapture> BlockService::StartCapture(
    BlockCall& call, bool content_encoded, int64_t now_ms) {
    if (!decider_.WantsCapture(call, content_encoded, now_ms)) {
        return nullptr;
    }
    std::unique_ptr<BlockCapture> capture = BlockCapture::Start(cache_, call);
    if (capture) {
        capture->Carry(std::move(call.flight));
    }
    return capture;
}

RegionSyncParts BlockService::sync_parts() {
    return RegionSyncParts{conf_, zone_, peers_, local_, cache_};
}

void BlockService::Maintain(int64_t wall_ms) {
    if (!cache_.Open()) {
        return;
    }
    cache_.ApplyScores(scores_.Take());
    AllowanceStore& allowances = zone_.allowances();
    allowances.Flush();
    if (wall_ms != 0) {
        cache_.MakeRoom(0, wall_ms);
        RefreshSummary(wall_ms);
        allowances.PruneIfDue(wall_ms);
    }
}

bool BlockService::HeldInRegion(uint64_t slot, std::string_view variant,
                                int64_t now_ms) const {
    BlockRecord record;
    if (cache_.Lookup(slot, variant, &record)) {
        return true;
    }
    for (size_t p = 0; p < conf_.peers().size(); p++) {
        if (peers_.Holds(p, variant, slot, now_ms)) {
            return true;
        }
    }
    return false;
}

std::vector<RegionReceipt> BlockService::TakeRegionReceipts() {
    std::vector<RegionReceipt> receipts = cache_.region_receipts().Take();
    std::optional<uint64_t> first = decider_.LedgerFirst();
    if (first && *first < UINT64_MAX - kReceiptHorizonSlots) {
        uint64_t horizon = *first + kReceiptHorizonSlots;
        receipts.erase(std::remove_if(receipts.begin(), receipts.end(),
                                      [horizon](const RegionReceipt& r) {
                                          return r.slot >= horizon;
                                      }),
                       receipts.end());
    }
    return receipts;
}

void BlockService::RefreshSummary(int64_t wall_ms) {
    uint64_t version = cache_.Version();
    if (!local_.Stale(version, wall_ms)) {
        return;
    }
    std::vector<BlockStore::Entry> entries;
    if (cache_.Entries(&entries)) {
        local_.Rebuild(entries, version, wall_ms);
    }
}

}  // namespace solgate
