// What Cube Runner counts per API key over time: the monthly allowance of
// long-term storage retrievals, which blocks each key received in the
// last 24 hours, and its repeat count (the retrievals of blocks it had
// received). Every process (and, in fleet mode, every host of a region)
// counts into the same allowance, so a key gets its plan's allowance once
// however many serve it; the implementation decides how
// (lmdb_allowances.h: the key ledger in the region's state_dir). Times
// are wall-clock UTC ms. Safe from any thread; nothing throws.
//
// A store may be closed in a process (the ledger is opened after fork):
// it then answers "nothing counted" and drops every count, so no caller
// has to ask first; open() tells the two apart for those that show it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace solgate {

class AllowanceStore {
public:
    virtual ~AllowanceStore() = default;

    virtual bool open() const = 0;

    // `key` received `slot`; may be buffered until Flush.
    virtual void NoteReceipt(std::string_view key, uint64_t slot,
                             int64_t wall_ms) = 0;
    // Whether `key` received `slot` in the 24 hours before wall_ms (what
    // is buffered included).
    virtual bool Received(std::string_view key, uint64_t slot,
                          int64_t wall_ms) const = 0;
    // Retrievals counted for `key` in the UTC month of wall_ms.
    virtual uint64_t AllowanceUsed(std::string_view key,
                                   int64_t wall_ms) const = 0;
    // Repeats of `key` in the 24 hours up to wall_ms.
    virtual uint64_t RepeatCount(std::string_view key,
                                 int64_t wall_ms) const = 0;

    // One retrieval of `slot` for the keys that waited for it: each key's
    // allowance counts it, and so does its repeat count when it had
    // received the block within 24 h. Returns how many were repeats.
    virtual size_t CountRetrieval(const std::vector<std::string>& keys,
                                  uint64_t slot, int64_t wall_ms) = 0;
    // Fleet mode, where the region's store counts the allowance: only the
    // repeats of a retrieval of `slot` for these keys. Returns how many.
    virtual size_t CountRepeats(const std::vector<std::string>& keys,
                                uint64_t slot, int64_t wall_ms) = 0;
    // Fleet mode: a repeat for each key, which the region found had
    // received the block (RegionRetrievals::FindReceived).
    virtual void AddRepeats(const std::vector<std::string>& keys,
                            int64_t wall_ms) = 0;
    // Fleet mode: the region's counts (key, retrievals this month) as the
    // region's store answered them, replacing what this host holds.
    virtual void SetAllowanceUsed(
        const std::vector<std::pair<std::string, uint64_t>>& used,
        int64_t wall_ms) = 0;

    // Upkeep, about once a second: writes what is buffered.
    virtual void Flush() = 0;
    // Upkeep: drops what nothing looks at any more, when it is due.
    virtual void PruneIfDue(int64_t wall_ms) = 0;
};

}  // namespace solgate
