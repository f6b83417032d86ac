// What the state page and the metrics read of one solgate_blocks, and
// nothing they could change it with: the configuration, the host's
// counters, the cache's totals, each key's figures and each queue's (from
// the stores in use, blocks_stores.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "blocks/block_conf.h"
#include "blocks/blocks_shared.h"
#include "blocks/key_store.h"
#include "blocks/queue_store.h"
#include "store/block_store.h"

namespace solgate {

class BlockCache;
class BlockDecider;
class LongTermQueues;

// One API key as the state shows it.
struct KeyFigures {
    KeySnapshot snapshot;
    // From the allowances; absent while they are not open in this process.
    std::optional<uint64_t> allowance_used;
    std::optional<uint64_t> repeat_count;
};

class BlocksView {
public:
    BlocksView(const BlockServiceConf& conf, const SharedBlocks& zone,
               const BlockDecider& decider, const BlockCache& cache,
               const LongTermQueues& long_term);

    // Nothing else may be read before the zone is bound.
    bool bound() const;
    const BlockServiceConf& conf() const { return conf_; }
    const BlocksHostCounters& counters() const;
    std::optional<uint64_t> FirstAvailableBlock() const;
    // nullopt while the cache is not open in this process.
    std::optional<BlockStore::Totals> CacheTotals() const;
    // The keys, in the key store's order, with their allowance used and
    // repeat count as of wall_ms.
    std::vector<KeyFigures> Keys(int64_t wall_ms) const;
    // Lookups the key store had no room for.
    uint64_t KeyTableFull() const;
    // nullopt for a plan without a queue.
    std::optional<QueueStats> Queue(size_t plan, int64_t now_ms) const;

private:
    const BlockServiceConf& conf_;
    const SharedBlocks& zone_;
    const BlockDecider& decider_;
    const BlockCache& cache_;
    const LongTermQueues& long_term_;
};

}  // namespace solgate
