#include "blocks/blocks_shared.h"

#include <cstring>

#include "blocks/shm_block_leases.h"
#include "blocks/shm_key_store.h"
#include "blocks/shm_retrieval_queue.h"

namespace solgate {
namespace {

constexpr size_t kQueueAlign = 64;

size_t RoundUp(size_t n) {
    return (n + kQueueAlign - 1) / kQueueAlign * kQueueAlign;
}

// Lays the zone out afresh when `fresh` or laid out for another
// configuration; else keeps what the previous cycle left.
bool SetUp(void* memory, bool fresh, const BlockServiceConf& conf,
           std::string* error) {
    auto* shared = static_cast<BlocksShared*>(memory);
    uint32_t queues = static_cast<uint32_t>(conf.QueuedPlans());
    if (!fresh && shared->magic == BlocksShared::kMagic &&
        shared->layout == BlocksShared::kLayout && shared->queues == queues) {
        return true;
    }
    std::memset(memory, 0, BlocksSharedSize(conf));
    shared->magic = BlocksShared::kMagic;
    shared->layout = BlocksShared::kLayout;
    shared->queues = queues;
    InitKeyTable(&shared->keys);
    for (uint32_t i = 0; i < queues; i++) {
        if (!InitRetrievalQueue(QueueAt(memory, i))) {
            *error = "cannot set up a long-term storage queue's mutex";
            return false;
        }
    }
    return true;
}

}  // namespace

RetrievalQueueShared* QueueAt(void* zone, size_t i) {
    auto* base =
        static_cast<unsigned char*>(zone) + RoundUp(sizeof(BlocksShared));
    return reinterpret_cast<RetrievalQueueShared*>(
        base + i * RoundUp(sizeof(RetrievalQueueShared)));
}

size_t BlocksSharedSize(const BlockServiceConf& conf) {
    return RoundUp(sizeof(BlocksShared)) +
           conf.QueuedPlans() * RoundUp(sizeof(RetrievalQueueShared));
}

SharedBlocks::SharedBlocks(const BlockServiceConf& conf,
                           AllowanceStore& ledger)
    : conf_(conf) {
    stores_.allowances = &ledger;
}

SharedBlocks::~SharedBlocks() = default;

bool SharedBlocks::Bind(void* memory, bool fresh, std::string* error) {
    if (!SetUp(memory, fresh, conf_, error)) {
        return false;
    }
    shared_ = static_cast<BlocksShared*>(memory);
    MakeStores(memory);
    return true;
}

void SharedBlocks::MakeStores(void* memory) {
    flights_ = BlockFlights(&shared_->flights);
    keys_ = std::make_unique<ShmKeyStore>(shared_->keys);
    leases_ = std::make_unique<ShmBlockLeases>(*shared_);
    stores_.keys = keys_.get();
    stores_.leases = leases_.get();
    queues_.clear();
    queues_.resize(conf_.plans().size());
    uint32_t next = 0;
    for (size_t p = 0; p < conf_.plans().size(); p++) {
        if (conf_.HasQueue(p)) {
            queues_[p] =
                std::make_unique<ShmRetrievalQueue>(QueueAt(memory, next++));
            stores_.queues[p] = queues_[p].get();
        }
    }
}

void SharedBlocks::UseStores(const BlocksStores& stores) {
    if (stores.keys != nullptr) {
        stores_.keys = stores.keys;
    }
    if (stores.leases != nullptr) {
        stores_.leases = stores.leases;
    }
    if (stores.allowances != nullptr) {
        stores_.allowances = stores.allowances;
    }
    for (size_t p = 0; p < queues_.size(); p++) {
        if (queues_[p] && stores.queues[p] != nullptr) {
            stores_.queues[p] = stores.queues[p];
        }
    }
}

}  // namespace solgate
