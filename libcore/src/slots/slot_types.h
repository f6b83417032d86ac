// The values that describe an upstream of a network, whatever stores them
// (the network's shared memory zone today; Redis too in fleet mode).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace solgate {

// A backwards jump of at most this many slots is sampling noise between
// nodes and is ignored; a larger one is accepted and counted.
constexpr uint64_t kToleratedSlotRollback = 1024;

// The three slot views tracked per upstream.
enum SlotAxis : size_t {
    kSlotProcessed = 0,  // getSlot at processed commitment
    kSlotFinalized,      // getSlot at finalized commitment
    kSlotShred,          // the getMaxShredInsertSlot watermark
    kSlotAxisCount
};

// The two axes a lane serves a tip on.
enum LaneAxis : size_t { kAxisProcessed = 0, kAxisFinalized, kAxisCount };
std::string_view LaneAxisName(LaneAxis axis);

enum class CordonOwner : uint32_t { kNone = 0, kPoller = 1, kOperator = 2 };
enum class CordonCause : uint32_t {
    kNone = 0,
    kUnhealthy = 1,   // getHealth failed
    kShredLag = 2,    // ingestion lag above the threshold
    kGenesis = 3,     // the upstream serves another cluster
    kOperator = 4,
};
// "unhealthy", "shred_lag", "genesis", "operator"; "" for kNone: the
// metrics' reason label (bounded; the reason's text is the status page's).
std::string_view CordonCauseName(CordonCause cause);
enum class HealthOutcome : uint32_t { kUnknown = 0, kOk = 1, kFailed = 2 };
enum class GenesisCheck : uint32_t { kUnchecked = 0, kMatches = 1, kDiffers = 2 };

struct CordonState {
    CordonOwner owner = CordonOwner::kNone;
    CordonCause cause = CordonCause::kNone;
    int64_t since_wall_ms = 0;
};

// Who polls an upstream (or does another job only one process may do):
// a process id and when its claim runs out (monotonic ms).
struct Lease {
    uint32_t pid = 0;
    int64_t expires_ms = 0;

    // The packed word the shared memory holds: pid in bits 40-63, expiry
    // in bits 0-39.
    static Lease Unpack(uint64_t word);
    uint64_t Pack() const;
    // Whether someone holds it at now_ms (it has not run out).
    bool HeldAt(int64_t now_ms) const {
        return pid != 0 && expires_ms > now_ms;
    }
};

}  // namespace solgate
