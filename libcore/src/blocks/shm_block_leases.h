// The leases of a solgate_blocks in its shared memory zone: the
// LeaseStore over the zone's lease words (BlocksShared::copy_lease and
// retrieval_lease, numbered as blocks_stores.h says). A number past them
// is never held.
#pragma once

#include <atomic>
#include <cstdint>

#include "slots/lease_store.h"

namespace solgate {

struct BlocksShared;

class ShmBlockLeases : public LeaseStore {
public:
    // `zone` outlives the store.
    explicit ShmBlockLeases(BlocksShared& zone) : zone_(zone) {}

    bool ClaimLease(size_t lease, uint32_t pid, int64_t now_ms,
                    int64_t ttl_ms) override;
    void ReleaseLease(size_t lease, uint32_t pid) override;
    Lease LeaseHolder(size_t lease) const override;

private:
    // nullptr for a number past the zone's leases.
    std::atomic<uint64_t>* Word(size_t lease) const;

    BlocksShared& zone_;
};

}  // namespace solgate
