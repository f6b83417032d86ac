// The shared zone of a solgate_blocks, which every worker of a host maps:
// BlocksShared (counters, leases, the key table), then one
// RetrievalQueueShared per plan with long-term storage (each ~3.3 MB).
//
// SharedBlocks is the one door to it: the parts of Cube Runner reach the
// zone's state only through the SharedBlocks they are given, so that what
// lives in shm today can live elsewhere tomorrow without their logic
// changing. Lock-free (atomics and CAS), like shared_state.h: a lock held
// by a worker that crashes would never be released.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "blocks/block_call.h"
#include "blocks/block_conf.h"
#include "blocks/key_limiter.h"
#include "blocks/retrieval_queue.h"

namespace solgate {

struct BlocksShared {
    static constexpr uint32_t kMagic = 0x53474243;  // "SGBC"
    static constexpr uint32_t kLayout = 2;

    uint32_t magic;
    uint32_t layout;
    uint32_t queues;     // long-term storage queues placed after this
    std::atomic<uint64_t> served[kSourceCount];
    std::atomic<uint64_t> tier_answers;
    std::atomic<uint64_t> unauthorized;
    std::atomic<uint64_t> peer_requests;     // answered for other regions
    std::atomic<uint64_t> stored;            // entries written
    std::atomic<uint64_t> store_failures;
    std::atomic<uint64_t> rate_limited[kMaxBlockPlans];
    std::atomic<uint64_t> peer_fetches[kMaxBlockPeers];
    std::atomic<uint64_t> peer_failures[kMaxBlockPeers];
    std::atomic<uint64_t> peer_copies[kMaxBlockPeers];
    std::atomic<uint64_t> copy_lease;        // background copy: one process
    // Long-term storage, per plan: who retrieves (one process per host),
    // calls refused for a spent allowance, retrievals counted per key.
    std::atomic<uint64_t> retrieval_lease[kMaxBlockPlans];
    std::atomic<uint64_t> allowance_refusals[kMaxBlockPlans];
    std::atomic<uint64_t> allowance_counted[kMaxBlockPlans];
    std::atomic<uint64_t> repeats_counted[kMaxBlockPlans];
    KeyTable keys;
};

// The zone's size for `conf`: BlocksShared and its queues.
size_t BlocksSharedSize(const BlockServiceConf& conf);
// The i-th queue of a zone.
RetrievalQueueShared* QueueAt(void* zone, size_t i);

class SharedBlocks {
public:
    explicit SharedBlocks(const BlockServiceConf& conf) : conf_(conf) {}

    SharedBlocks(const SharedBlocks&) = delete;
    SharedBlocks& operator=(const SharedBlocks&) = delete;

    // Maps the zone nginx gives (BlocksSharedSize bytes, zeroed or not):
    // set up afresh when `fresh` or when it was laid out for another
    // configuration, else kept as the previous cycle left it. False with
    // the reason in *error.
    bool Bind(void* memory, bool fresh, std::string* error);
    bool bound() const { return shared_ != nullptr; }

    // Valid once bound.
    BlocksShared& shared() const { return *shared_; }
    // The plan's queue; nullptr when it has none or before Bind.
    RetrievalQueueShared* queue(size_t plan) const {
        return plan < queues_.size() ? queues_[plan] : nullptr;
    }
    // The text of the key at a key table index ("" for none).
    std::string KeyText(uint32_t key_index) const;

private:
    const BlockServiceConf& conf_;
    BlocksShared* shared_ = nullptr;
    std::vector<RetrievalQueueShared*> queues_;   // by plan; nullptr: none
};

}  // namespace solgate
