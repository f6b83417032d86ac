#include "blocks/blocks_view.h"

#include "blocks/block_cache.h"
#include "blocks/block_decider.h"
#include "blocks/long_term_queues.h"

namespace solgate {

BlocksView::BlocksView(const BlockServiceConf& conf,
                       const SharedBlocks& zone, const BlockDecider& decider,
                       const BlockCache& cache,
                       const LongTermQueues& long_term)
    : conf_(conf),
      zone_(zone),
      decider_(decider),
      cache_(cache),
      long_term_(long_term) {}

bool BlocksView::bound() const { return zone_.bound(); }

const BlocksHostCounters& BlocksView::counters() const {
    return zone_.counters();
}

std::optional<uint64_t> BlocksView::FirstAvailableBlock() const {
    return decider_.FirstAvailableBlock();
}

std::optional<BlockStore::Totals> BlocksView::CacheTotals() const {
    return cache_.Totals();
}

std::vector<KeyFigures> BlocksView::Keys(int64_t wall_ms) const {
    std::vector<KeyFigures> keys;
    const AllowanceStore& allowances = zone_.allowances();
    for (KeySnapshot& key : zone_.keys().Snapshot()) {
        KeyFigures figures;
        if (allowances.open()) {
            figures.allowance_used =
                allowances.AllowanceUsed(key.key, wall_ms);
            figures.repeat_count = allowances.RepeatCount(key.key, wall_ms);
        }
        figures.snapshot = std::move(key);
        keys.push_back(std::move(figures));
    }
    return keys;
}

std::optional<QueueStats> BlocksView::Queue(size_t plan,
                                            int64_t now_ms) const {
    return long_term_.Stats(plan, now_ms);
}

uint64_t BlocksView::KeyTableFull() const { return zone_.keys().TableFull(); }

}  // namespace solgate
