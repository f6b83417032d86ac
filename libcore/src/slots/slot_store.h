// What is known of each upstream of a network: its three slot views, the
// last getHealth outcome, the genesis check and the ledger window. Every
// worker (and, in fleet mode, every host) sees the same values; the
// implementation decides how (shm_network_state.h: the network's shared
// memory zone). Upstreams are named by their index in configuration order.
// Calls are safe from any thread and any process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "slots/slot_types.h"

namespace solgate {

class SlotStore {
public:
    virtual ~SlotStore() = default;

    virtual uint64_t View(size_t upstream, SlotAxis axis) const = 0;
    // View for each of `upstreams`, in order, into *out, which is cleared
    // first (one call for a whole voter set: tips read it per request).
    virtual void Views(const std::vector<size_t>& upstreams, SlotAxis axis,
                       std::vector<uint64_t>* out) const = 0;
    // Raises the view to `value`, or lowers it when the drop is larger than
    // kToleratedSlotRollback (counted); 0 is ignored. True when accepted.
    virtual bool Suggest(size_t upstream, SlotAxis axis, uint64_t value) = 0;

    // The processed slot last observed from the upstream itself (a poll,
    // or the context.slot of a processed or confirmed answer), as it came:
    // unlike View it goes back when the node does. 0: none yet.
    virtual uint64_t Observed(size_t upstream) const = 0;
    virtual void Observe(size_t upstream, uint64_t slot) = 0;

    // When live traffic last fed a view (monotonic ms; 0: never).
    virtual int64_t TrafficSeenMs(size_t upstream, SlotAxis axis) const = 0;
    virtual void MarkTrafficSeen(size_t upstream, SlotAxis axis,
                                 int64_t now_ms) = 0;

    virtual HealthOutcome Health(size_t upstream) const = 0;
    // Records the outcome of a getHealth; returns the one before.
    virtual HealthOutcome ExchangeHealth(size_t upstream,
                                         HealthOutcome outcome) = 0;

    virtual GenesisCheck Genesis(size_t upstream) const = 0;
    virtual void SetGenesis(size_t upstream, GenesisCheck check) = 0;

    // getFirstAvailableBlock: where the upstream's ledger starts, once
    // polled.
    virtual std::optional<uint64_t> FirstAvailable(size_t upstream) const = 0;
    virtual void SetFirstAvailable(size_t upstream, uint64_t slot) = 0;
};

}  // namespace solgate
