// Who took each upstream of a network out of rotation, why and since when:
// the poller's cordons and the operator's. A cordon changes owner only by
// compare-and-swap, so the poller never lifts an operator's cordon and two
// processes never both claim one transition.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "slots/slot_types.h"

namespace solgate {

class CordonStore {
public:
    virtual ~CordonStore() = default;

    virtual CordonState Cordon(size_t upstream) const = 0;
    // Sets the cordon only if its owner is `expected`; true when it changed.
    virtual bool SwapCordon(size_t upstream, CordonOwner expected,
                            const CordonState& next) = 0;

    // The ingestion lag the poller cordoned the upstream at.
    virtual uint64_t CordonLag(size_t upstream) const = 0;
    virtual void SetCordonLag(size_t upstream, uint64_t lag) = 0;

    // The operator's reason, or the genesis mismatch the poller found.
    virtual std::string CordonNote(size_t upstream) const = 0;
    virtual void SetCordonNote(size_t upstream, std::string_view note) = 0;

    // When an operator last cordoned or uncordoned the upstream (wall ms;
    // 0: not since the zone began): a fleet keeps the latest change.
    virtual int64_t OperatorChangeMs(size_t upstream) const = 0;
    virtual void SetOperatorChangeMs(size_t upstream, int64_t wall_ms) = 0;
};

}  // namespace solgate
