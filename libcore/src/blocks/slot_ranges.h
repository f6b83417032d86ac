// A compact set of slots as sorted inclusive ranges: what a region's cache
// holds is published as ranges, not a list, and compared to find what is
// missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace solgate {

// A set of slots kept as sorted, disjoint, non-adjacent inclusive ranges.
// Adding is O(ranges) (a vector insert); lookups are O(log ranges).
class SlotRanges {
public:
    // Adds one slot, in any order; merges with adjacent ranges.
    void Add(uint64_t slot);

    // Adds [first, last], inclusive; first > last adds nothing.
    void AddRange(uint64_t first, uint64_t last);

    // Whether the slot is held, O(log n).
    bool Contains(uint64_t slot) const;

    size_t RangeCount() const { return ranges_.size(); }

    // How many slots are held; saturates at UINT64_MAX (the full range
    // holds 2^64 slots).
    uint64_t SlotCount() const;

    bool Empty() const { return ranges_.empty(); }

    // Sorted, disjoint, non-adjacent, inclusive.
    const std::vector<std::pair<uint64_t, uint64_t>>& Ranges() const {
        return ranges_;
    }

    // "5-9,12,20-21": ranges ascending, single slots without a dash; ""
    // when empty.
    std::string ToText() const;

    // Parses ToText()'s format; unsorted, overlapping or adjacent items are
    // accepted and merged. nullopt on any malformed input: empty items,
    // anything but decimal digits around one optional dash (no spaces or
    // signs), first > last, values above UINT64_MAX, or more than
    // max_ranges comma-separated items. "" parses to an empty set.
    static std::optional<SlotRanges> Parse(std::string_view text,
                                           size_t max_ranges = 100000);

    // Slots in *this but not in `have`, newest (highest) first, at most
    // `limit` of them, none below `floor`.
    std::vector<uint64_t> MissingFrom(const SlotRanges& have, uint64_t floor,
                                      size_t limit) const;

    // The lowest slot L such that every slot in [L, upto] is held; nullopt
    // when `upto` is not held.
    std::optional<uint64_t> ContiguousDownFrom(uint64_t upto) const;

    bool operator==(const SlotRanges& other) const {
        return ranges_ == other.ranges_;
    }
    bool operator!=(const SlotRanges& other) const {
        return !(*this == other);
    }

private:
    // The range holding `slot`, or ranges_.end().
    std::vector<std::pair<uint64_t, uint64_t>>::const_iterator Find(
        uint64_t slot) const;

    std::vector<std::pair<uint64_t, uint64_t>> ranges_;
};

}  // namespace solgate
