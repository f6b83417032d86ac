// The shared zone of a solgate_blocks, which every worker of a host maps:
// BlocksShared (counters, leases, the key table, the flights), then one
// RetrievalQueueShared per plan with long-term storage (each ~3.3 MB).
//
// SharedBlocks is the one door to Cube Runner's shared state: the parts of
// Cube Runner reach the keys, the leases, the queues and the allowances
// only through the stores it hands out (blocks_stores.h), which are the
// zone's and the key ledger's unless others were put in front, so that
// what lives in shm today can live elsewhere without their logic
// changing. It is the only code that knows the zone's layout. Lock-free
// (atomics and CAS), like shared_state.h: a lock held by a worker that
// crashes would never be released.
//
// What stays per host whatever the stores: the counters the metrics read
// (counters()) and the blocks being fetched (flights()). Each host's
// metrics are scraped on their own and summed by whoever reads them, so a
// shared sum would be counted N times; a fetch is waited for on its host.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blocks/block_call.h"
#include "blocks/block_conf.h"
#include "blocks/block_flights.h"
#include "blocks/blocks_stores.h"
#include "blocks/key_limiter.h"
#include "blocks/retrieval_queue.h"

namespace solgate {

// What one host counts of its Cube Runner for its own metrics.
struct BlocksHostCounters {
    std::atomic<uint64_t> served[kSourceCount];
    std::atomic<uint64_t> tier_answers;
    std::atomic<uint64_t> unauthorized;
    std::atomic<uint64_t> peer_requests;     // answered for other regions
    // Misses that waited for another request's fetch of the same block
    // (the cache lock), and those whose wait ran out.
    std::atomic<uint64_t> lock_waits;
    std::atomic<uint64_t> lock_timeouts;
    std::atomic<uint64_t> stored;            // entries written
    std::atomic<uint64_t> store_failures;
    std::atomic<uint64_t> rate_limited[kMaxBlockPlans];
    std::atomic<uint64_t> peer_fetches[kMaxBlockPeers];
    std::atomic<uint64_t> peer_failures[kMaxBlockPeers];
    std::atomic<uint64_t> peer_copies[kMaxBlockPeers];
    // Long-term storage, per plan: calls refused for a spent allowance,
    // retrievals counted per key, repeats.
    std::atomic<uint64_t> allowance_refusals[kMaxBlockPlans];
    std::atomic<uint64_t> allowance_counted[kMaxBlockPlans];
    std::atomic<uint64_t> repeats_counted[kMaxBlockPlans];
};

struct BlocksShared {
    static constexpr uint32_t kMagic = 0x53474243;  // "SGBC"
    static constexpr uint32_t kLayout = 6;

    uint32_t magic;
    uint32_t layout;
    uint32_t queues;     // long-term storage queues placed after this
    BlocksHostCounters counters;
    std::atomic<uint64_t> copy_lease;        // background copy: one process
    // Who retrieves a plan's queue (one process per host).
    std::atomic<uint64_t> retrieval_lease[kMaxBlockPlans];
    // Fleet mode: who keeps the keys' buckets in step with the region.
    std::atomic<uint64_t> rate_sync_lease;
    KeyTable keys;
    // The blocks being fetched now (the cache lock), per host.
    FlightTable flights;
};

// The zone's size for `conf`: BlocksShared and its queues.
size_t BlocksSharedSize(const BlockServiceConf& conf);
// The i-th queue of a zone.
RetrievalQueueShared* QueueAt(void* zone, size_t i);

class ShmBlockLeases;
class ShmKeyStore;
class ShmRetrievalQueue;

class SharedBlocks {
public:
    // `ledger` holds the allowances in this process (opened after fork);
    // both outlive this.
    SharedBlocks(const BlockServiceConf& conf, AllowanceStore& ledger);
    ~SharedBlocks();

    SharedBlocks(const SharedBlocks&) = delete;
    SharedBlocks& operator=(const SharedBlocks&) = delete;

    // Maps the zone nginx gives (BlocksSharedSize bytes, zeroed or not):
    // set up afresh when `fresh` or when it was laid out for another
    // configuration, else kept as the previous cycle left it. False with
    // the reason in *error.
    bool Bind(void* memory, bool fresh, std::string* error);
    bool bound() const { return shared_ != nullptr; }

    // The stores. keys() and leases() once bound.
    KeyStore& keys() const { return *stores_.keys; }
    LeaseStore& leases() const { return *stores_.leases; }
    AllowanceStore& allowances() const { return *stores_.allowances; }
    // The plan's queue; nullptr when it has none or before Bind.
    QueueStore* queue(size_t plan) const {
        return plan < queues_.size() && queues_[plan] ? stores_.queues[plan]
                                                      : nullptr;
    }
    // After Bind: other stores in front of the zone's and the ledger's
    // (they must outlive this; a null member keeps the one there is, and
    // a queue is used only for a plan that has one).
    void UseStores(const BlocksStores& stores);

    // Per host, valid once bound: the counters the metrics read.
    BlocksHostCounters& counters() const { return shared_->counters; }
    // Per host: the blocks being fetched now (none held before Bind).
    BlockFlights& flights() { return flights_; }
    const BlockFlights& flights() const { return flights_; }

private:
    // The zone's stores, in use until UseStores puts others in front.
    void MakeStores(void* memory);

    const BlockServiceConf& conf_;
    BlocksShared* shared_ = nullptr;
    BlockFlights flights_;
    std::unique_ptr<ShmKeyStore> keys_;
    std::unique_ptr<ShmBlockLeases> leases_;
    // By plan; nullptr: none.
    std::vector<std::unique_ptr<ShmRetrievalQueue>> queues_;
    BlocksStores stores_;
};

}  // namespace solgate
