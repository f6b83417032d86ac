// The region cache of one solgate_blocks in this process: the files and
// their LMDB index (store/block_store.h), opened after fork, and the rules
// that keep it under max_size (block_retention.h). What the cache holds is
// asked here; what is written into it comes through CaptureSink (captures
// of answers, copies from other regions, long-term retrievals); request
// scores are applied here in batches.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blocks/block_capture.h"
#include "blocks/block_conf.h"
#include "blocks/receipt_buffer.h"
#include "blocks/request_scores.h"
#include "store/block_store.h"

namespace solgate {

class SharedBlocks;

class BlockCache : public CaptureSink {
public:
    // `zone` counts what is stored and takes the receipts (its
    // allowances).
    BlockCache(const BlockServiceConf& conf, SharedBlocks& zone);
    ~BlockCache() override;

    BlockCache(const BlockCache&) = delete;
    BlockCache& operator=(const BlockCache&) = delete;

    // Opens cache_dir and its index in state_dir; `reconcile` (index and
    // files made to agree) in the first process only. False with *error.
    bool OpenStore(bool reconcile, std::string* error);
    void Close();
    // What the last OpenStore found (BlockStore::Opening), kept after
    // Close: a store closed at once (its key ledger failed) still tells
    // that its index was started over.
    const BlockStore::Opening& opening() const { return opening_; }

    // Nothing is cached while it is not open.
    bool Lookup(uint64_t slot, std::string_view variant,
                BlockRecord* record) const;
    std::string PathFor(uint64_t slot, std::string_view variant) const;
    // nullopt while it is not open.
    std::optional<BlockStore::Totals> Totals() const;
    // Every entry, in index order (by variant, then slot). False when it
    // is not open or the index cannot be read.
    bool Entries(std::vector<BlockStore::Entry>* out) const;
    // What moves whenever entries are added or evicted (in any process).
    uint64_t Version() const;
    // Drops an entry whose file cannot be served (gone, or not the file
    // the index describes), counted as an eviction.
    void Drop(uint64_t slot, const std::string& variant);

    // The requests' scores, written in one index transaction.
    void ApplyScores(const std::vector<ScoredRequest>& requests);

    // CaptureSink. MakeRoom evicts by the retention rule until `incoming`
    // fits under max_size (always true without a max_size or a store).
    bool Open() const override { return store_ != nullptr; }
    std::string NewTempPath() override;
    bool MakeRoom(uint64_t incoming, int64_t wall_ms) override;
    bool Commit(const std::string& temp_path, uint64_t slot,
                const std::string& variant, const BlockRecord& rec,
                std::string* error) override;
    void NoteReceipt(const std::string& api_key, uint64_t slot,
                     int64_t wall_ms) override;

    // Fleet mode: the receipts also kept for the region (receipt_buffer.h).
    ReceiptBuffer& region_receipts() { return region_receipts_; }

    // The index itself, for tests that must change it behind the cache's
    // back (an entry gone as if evicted elsewhere).
    BlockStore* StoreForTesting() const { return store_.get(); }

private:
    const BlockServiceConf& conf_;
    SharedBlocks& zone_;
    std::unique_ptr<BlockStore> store_;
    BlockStore::Opening opening_;
    ReceiptBuffer region_receipts_;
};

}  // namespace solgate
