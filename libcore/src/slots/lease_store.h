// Leases: which process does a job only one may do at a time (poll an
// upstream, copy from other regions, retrieve a plan's queue). A lease is
// claimed by compare-and-swap and expires on its own, so a crashed
// holder's job passes to another process. Leases are numbered by the
// store's owner (a network: one per upstream).
#pragma once

#include <cstddef>
#include <cstdint>

#include "slots/slot_types.h"

namespace solgate {

class LeaseStore {
public:
    virtual ~LeaseStore() = default;

    // Renews the lease when `pid` holds it, or takes it when it has
    // expired; true when `pid` holds it afterwards.
    virtual bool ClaimLease(size_t lease, uint32_t pid, int64_t now_ms,
                            int64_t ttl_ms) = 0;
    // Gives it up, if `pid` holds it.
    virtual void ReleaseLease(size_t lease, uint32_t pid) = 0;
    virtual Lease LeaseHolder(size_t lease) const = 0;
};

}  // namespace solgate
