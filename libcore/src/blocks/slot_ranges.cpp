#include "blocks/slot_ranges.h"

#include <algorithm>

namespace solgate {

using Range = std::pair<uint64_t, uint64_t>;

// True when `range` ends before `first` with at least one slot between
// them, so the two neither overlap nor touch. Written without +1/-1 so it
// cannot overflow at either end.
static bool EndsWellBefore(const Range& range, uint64_t first) {
    return range.second < first && first - range.second > 1;
}

void SlotRanges::Add(uint64_t slot) {
    AddRange(slot, slot);
}

void SlotRanges::AddRange(uint64_t first, uint64_t last) {
    if (first > last) {
        return;
    }
    // The first range that overlaps or touches [first, last] or lies
    // after it; EndsWellBefore is true for a prefix of the sorted ranges.
    auto it = std::partition_point(
        ranges_.begin(), ranges_.end(),
        [first](const Range& r) { return EndsWellBefore(r, first); });
    // Swallow every range that does not start well after `last`.
    auto end = it;
    while (end != ranges_.end() && !EndsWellBefore({0, last}, end->first)) {
        first = std::min(first, end->first);
        last = std::max(last, end->second);
        ++end;
    }
    if (it == end) {
        ranges_.insert(it, Range(first, last));
        return;
    }
    *it = Range(first, last);
    ranges_.erase(it + 1, end);
}

std::vector<Range>::const_iterator SlotRanges::Find(uint64_t slot) const {
    // The last range starting at or before the slot.
    auto it = std::upper_bound(
        ranges_.begin(), ranges_.end(), slot,
        [](uint64_t s, const Range& r) { return s < r.first; });
    if (it == ranges_.begin()) {
        return ranges_.end();
    }
    --it;
    return it->second >= slot ? it : ranges_.end();
}

bool SlotRanges::Contains(uint64_t slot) const {
    return Find(slot) != ranges_.end();
}

uint64_t SlotRanges::SlotCount() const {
    uint64_t count = 0;
    for (const Range& r : ranges_) {
        uint64_t span = r.second - r.first;   // one less than its size
        if (span == UINT64_MAX || count > UINT64_MAX - span - 1) {
            return UINT64_MAX;
        }
        count += span + 1;
    }
    return count;
}

std::string SlotRanges::ToText() const {
    std::string text;
    for (const Range& r : ranges_) {
        if (!text.empty()) {
            text += ',';
        }
        text += std::to_string(r.first);
        if (r.second != r.first) {
            text += '-';
            text += std::to_string(r.second);
        }
    }
    return text;
}

// A non-empty run of decimal digits that fits in uint64_t.
static std::optional<uint64_t> ParseSlot(std::string_view text) {
    if (text.empty()) {
        return std::nullopt;
    }
    uint64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        uint64_t digit = static_cast<uint64_t>(c - '0');
        if (value > (UINT64_MAX - digit) / 10) {
            return std::nullopt;
        }
        value = value * 10 + digit;
    }
    return value;
}

std::optional<SlotRanges> SlotRanges::Parse(std::string_view text,
                                            size_t max_ranges) {
    SlotRanges result;
    if (text.empty()) {
        return result;
    }
    std::vector<Range> items;
    size_t start = 0;
    while (true) {
        size_t comma = text.find(',', start);
        std::string_view item = text.substr(
            start, comma == std::string_view::npos ? std::string_view::npos
                                                   : comma - start);
        if (items.size() >= max_ranges) {
            return std::nullopt;
        }
        size_t dash = item.find('-');
        std::optional<uint64_t> first = ParseSlot(item.substr(0, dash));
        std::optional<uint64_t> last =
            dash == std::string_view::npos ? first
                                           : ParseSlot(item.substr(dash + 1));
        if (!first || !last || *first > *last) {
            return std::nullopt;
        }
        items.emplace_back(*first, *last);
        if (comma == std::string_view::npos) {
            break;
        }
        start = comma + 1;
    }
    // Sort and merge in one pass: unsorted input stays O(n log n).
    std::sort(items.begin(), items.end());
    for (const Range& r : items) {
        if (!result.ranges_.empty() &&
            !EndsWellBefore(result.ranges_.back(), r.first)) {
            Range& back = result.ranges_.back();
            back.second = std::max(back.second, r.second);
        } else {
            result.ranges_.push_back(r);
        }
    }
    return result;
}

std::vector<uint64_t> SlotRanges::MissingFrom(const SlotRanges& have,
                                              uint64_t floor,
                                              size_t limit) const {
    std::vector<uint64_t> missing;
    for (auto r = ranges_.rbegin(); r != ranges_.rend(); ++r) {
        if (missing.size() >= limit || r->second < floor) {
            break;
        }
        uint64_t low = std::max(r->first, floor);
        uint64_t slot = r->second;
        // Walk down from the top; skip whole ranges `have` holds, so the
        // work is bounded by the output plus `have`'s ranges.
        while (missing.size() < limit) {
            auto held = have.Find(slot);
            if (held != have.ranges_.end()) {
                if (held->first <= low) {
                    break;
                }
                slot = held->first - 1;
                continue;
            }
            missing.push_back(slot);
            if (slot == low) {
                break;
            }
            slot--;
        }
    }
    return missing;
}

std::optional<uint64_t> SlotRanges::ContiguousDownFrom(uint64_t upto) const {
    auto it = Find(upto);
    if (it == ranges_.end()) {
        return std::nullopt;
    }
    return it->first;
}

}  // namespace solgate
