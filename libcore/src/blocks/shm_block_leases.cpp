#include "blocks/shm_block_leases.h"

#include "blocks/blocks_shared.h"
#include "blocks/blocks_stores.h"
#include "slots/shared_state.h"

namespace solgate {

std::atomic<uint64_t>* ShmBlockLeases::Word(size_t lease) const {
    if (lease == kCopyLease) {
        return &zone_.copy_lease;
    }
    if (lease == kRateSyncLease) {
        return &zone_.rate_sync_lease;
    }
    if (lease < kBlocksLeaseCount) {
        return &zone_.retrieval_lease[lease - RetrievalLease(0)];
    }
    return nullptr;
}

bool ShmBlockLeases::ClaimLease(size_t lease, uint32_t pid, int64_t now_ms,
                                int64_t ttl_ms) {
    std::atomic<uint64_t>* word = Word(lease);
    return word != nullptr &&
           solgate::ClaimLease(*word, pid, now_ms, ttl_ms);
}

void ShmBlockLeases::ReleaseLease(size_t lease, uint32_t pid) {
    if (std::atomic<uint64_t>* word = Word(lease)) {
        solgate::ReleaseLease(*word, pid);
    }
}

Lease ShmBlockLeases::LeaseHolder(size_t lease) const {
    std::atomic<uint64_t>* word = Word(lease);
    return word == nullptr
               ? Lease{}
               : Lease::Unpack(word->load(std::memory_order_relaxed));
}

}  // namespace solgate
