// The stores Cube Runner's shared state is reached through, one set per
// solgate_blocks: its keys and their rate buckets, its leases, each
// archive plan's long-term queue and the keys' allowances. SharedBlocks
// (blocks_shared.h) makes them the zone's and the key ledger's; fleet mode
// (or a test) may put others in front with SharedBlocks::UseStores, and
// the decider, the queues, the retriever and region sync do not notice.
#pragma once

#include <array>
#include <cstddef>

#include "blocks/allowance_store.h"
#include "blocks/block_conf.h"
#include "blocks/key_store.h"
#include "blocks/queue_store.h"
#include "slots/lease_store.h"

namespace solgate {

// The leases of a solgate_blocks (LeaseStore numbers them): the
// background copy from other regions, one retrieval lease per plan, then
// (fleet mode) the keys' rate buckets kept in step with the region.
constexpr size_t kCopyLease = 0;
constexpr size_t RetrievalLease(size_t plan) { return 1 + plan; }
constexpr size_t kRateSyncLease = RetrievalLease(kMaxBlockPlans);
constexpr size_t kBlocksLeaseCount = kRateSyncLease + 1;

// A null member keeps the one there is.
struct BlocksStores {
    KeyStore* keys = nullptr;
    LeaseStore* leases = nullptr;
    AllowanceStore* allowances = nullptr;
    // By plan index; only a plan that has a queue uses one.
    std::array<QueueStore*, kMaxBlockPlans> queues{};
};

}  // namespace solgate
