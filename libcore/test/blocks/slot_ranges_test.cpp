#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "blocks/slot_ranges.h"

namespace solgate {
namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;
using Slots = std::vector<uint64_t>;

SlotRanges FromText(std::string_view text) {
    std::optional<SlotRanges> parsed = SlotRanges::Parse(text);
    EXPECT_TRUE(parsed.has_value()) << text;
    return parsed.value_or(SlotRanges());
}

TEST(SlotRanges, EmptySet) {
    SlotRanges r;
    EXPECT_TRUE(r.Empty());
    EXPECT_EQ(r.RangeCount(), 0u);
    EXPECT_EQ(r.SlotCount(), 0u);
    EXPECT_FALSE(r.Contains(0));
    EXPECT_EQ(r.ToText(), "");
    EXPECT_EQ(r.ContiguousDownFrom(0), std::nullopt);
}

TEST(SlotRanges, MergesAdjacentAndOverlapping) {
    SlotRanges r;
    r.Add(5);
    r.Add(7);
    EXPECT_EQ(r.Ranges(), (Ranges{{5, 5}, {7, 7}}));
    r.Add(6);                           // bridges the gap
    EXPECT_EQ(r.Ranges(), (Ranges{{5, 7}}));
    r.Add(6);                           // already held
    EXPECT_EQ(r.Ranges(), (Ranges{{5, 7}}));
    r.Add(4);                           // adjacent below
    r.Add(8);                           // adjacent above
    EXPECT_EQ(r.Ranges(), (Ranges{{4, 8}}));
    r.AddRange(20, 30);
    r.AddRange(10, 12);
    r.AddRange(40, 40);
    EXPECT_EQ(r.Ranges(), (Ranges{{4, 8}, {10, 12}, {20, 30}, {40, 40}}));
    r.AddRange(9, 9);                   // touches two ranges
    EXPECT_EQ(r.Ranges(), (Ranges{{4, 12}, {20, 30}, {40, 40}}));
    r.AddRange(25, 39);                 // overlaps one, touches the next
    EXPECT_EQ(r.Ranges(), (Ranges{{4, 12}, {20, 40}}));
    r.AddRange(0, 100);                 // swallows all
    EXPECT_EQ(r.Ranges(), (Ranges{{0, 100}}));
    r.AddRange(102, 110);               // one slot apart: separate
    EXPECT_EQ(r.Ranges(), (Ranges{{0, 100}, {102, 110}}));
    r.AddRange(50, 5);                  // first > last: ignored
    EXPECT_EQ(r.Ranges(), (Ranges{{0, 100}, {102, 110}}));
    EXPECT_EQ(r.RangeCount(), 2u);
    EXPECT_EQ(r.SlotCount(), 110u);
    EXPECT_FALSE(r.Empty());
}

TEST(SlotRanges, RandomOrderAddEqualsAddRange) {
    std::mt19937_64 rng(12345);
    for (int round = 0; round < 50; round++) {
        std::vector<uint64_t> slots;
        SlotRanges expected;
        // A few blocks of consecutive slots with gaps between them.
        uint64_t base = 1000 + rng() % 100;
        for (int block = 0; block < 5; block++) {
            uint64_t len = 1 + rng() % 20;
            expected.AddRange(base, base + len - 1);
            for (uint64_t s = base; s < base + len; s++) {
                slots.push_back(s);
                if (rng() % 4 == 0) {
                    slots.push_back(s);   // duplicates too
                }
            }
            base += len + 1 + rng() % 5;
        }
        std::shuffle(slots.begin(), slots.end(), rng);
        SlotRanges added;
        for (uint64_t s : slots) {
            added.Add(s);
        }
        EXPECT_EQ(added, expected) << added.ToText();
        EXPECT_EQ(added.SlotCount(),
                  std::set<uint64_t>(slots.begin(), slots.end()).size());
    }
}

TEST(SlotRanges, ContainsOnEdges) {
    SlotRanges r = FromText("5-9,12,20-21");
    for (uint64_t s = 0; s < 30; s++) {
        bool held = (s >= 5 && s <= 9) || s == 12 || s == 20 || s == 21;
        EXPECT_EQ(r.Contains(s), held) << s;
    }
    EXPECT_FALSE(r.Contains(UINT64_MAX));
    r.Add(0);
    EXPECT_TRUE(r.Contains(0));
    EXPECT_FALSE(r.Contains(1));
}

TEST(SlotRanges, TextRoundTrip) {
    SlotRanges r;
    r.AddRange(20, 21);
    r.Add(12);
    r.AddRange(5, 9);
    EXPECT_EQ(r.ToText(), "5-9,12,20-21");
    EXPECT_EQ(FromText(r.ToText()), r);
    for (const char* text : {"", "0", "7", "0-1", "1,3,5", "5-9,12,20-21",
                             "18446744073709551615",
                             "0-18446744073709551615"}) {
        EXPECT_EQ(FromText(text).ToText(), text);
    }
    // Unsorted, overlapping and adjacent items are merged.
    EXPECT_EQ(FromText("20-21,5-9,12,8-10,11").ToText(), "5-12,20-21");
    EXPECT_EQ(FromText("3,3,3").ToText(), "3");
    EXPECT_EQ(FromText("4-4").ToText(), "4");
    EXPECT_EQ(FromText("007").ToText(), "7");
    EXPECT_TRUE(FromText("").Empty());
}

TEST(SlotRanges, ParseRejectsMalformed) {
    for (const char* text :
         {",", "1,", ",1", "1,,2", "-", "-5", "5-", "5--6", "5-6-7",
          "a", "5a", "0x10", "+5", " 5", "5 ", "5, 6", "1.5", "9-3",
          "18446744073709551616", "0-18446744073709551616",
          "99999999999999999999", "1;2", "5\n"}) {
        EXPECT_FALSE(SlotRanges::Parse(text).has_value()) << text;
    }
    EXPECT_FALSE(SlotRanges::Parse(std::string_view("5\0", 2)).has_value());
    // The item cap counts items as written, before merging.
    EXPECT_TRUE(SlotRanges::Parse("1,2,3", 3).has_value());
    EXPECT_FALSE(SlotRanges::Parse("1,2,3,4", 3).has_value());
    EXPECT_TRUE(SlotRanges::Parse("", 0).has_value());
    EXPECT_FALSE(SlotRanges::Parse("1", 0).has_value());
    // The default cap: 100000 items parse, 100001 do not.
    std::string many;
    for (int i = 0; i < 100000; i++) {
        many += std::to_string(i * 2) + ",";
    }
    many.pop_back();
    std::optional<SlotRanges> parsed = SlotRanges::Parse(many);
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(parsed->RangeCount(), 100000u);
    EXPECT_FALSE(SlotRanges::Parse(many + ",1000000").has_value());
}

TEST(SlotRanges, MissingFromNewestFirst) {
    SlotRanges want = FromText("10-20,30-35");
    SlotRanges have = FromText("12-18,33");
    EXPECT_EQ(want.MissingFrom(have, 0, 100),
              (Slots{35, 34, 32, 31, 30, 20, 19, 11, 10}));
    EXPECT_EQ(want.MissingFrom(have, 0, 3), (Slots{35, 34, 32}));
    EXPECT_EQ(want.MissingFrom(have, 0, 0), Slots{});
    EXPECT_EQ(want.MissingFrom(have, 19, 100),
              (Slots{35, 34, 32, 31, 30, 20, 19}));
    EXPECT_EQ(want.MissingFrom(have, 31, 100), (Slots{35, 34, 32, 31}));
    EXPECT_EQ(want.MissingFrom(have, 36, 100), Slots{});
    EXPECT_EQ(want.MissingFrom(want, 0, 100), Slots{});
    EXPECT_EQ(want.MissingFrom(SlotRanges(), 33, 100),
              (Slots{35, 34, 33}));
    EXPECT_EQ(SlotRanges().MissingFrom(have, 0, 100), Slots{});
    // `have` covering the bottom edge of a range, and beyond both ends.
    EXPECT_EQ(want.MissingFrom(FromText("0-11,34-50"), 0, 100),
              (Slots{33, 32, 31, 30, 20, 19, 18, 17, 16, 15, 14, 13, 12}));
    // A huge range missing almost everything: bounded by the limit.
    SlotRanges huge;
    huge.AddRange(0, UINT64_MAX);
    EXPECT_EQ(huge.MissingFrom(FromText("18446744073709551614"), 0, 3),
              (Slots{UINT64_MAX, UINT64_MAX - 2, UINT64_MAX - 3}));
    // A huge `have` is skipped in one step, down to slot 0.
    EXPECT_EQ(huge.MissingFrom(FromText("1-18446744073709551615"), 0, 5),
              Slots{0});
}

TEST(SlotRanges, ContiguousDownFrom) {
    SlotRanges r = FromText("5-9,12,20-21");
    EXPECT_EQ(r.ContiguousDownFrom(9), 5u);
    EXPECT_EQ(r.ContiguousDownFrom(7), 5u);
    EXPECT_EQ(r.ContiguousDownFrom(5), 5u);
    EXPECT_EQ(r.ContiguousDownFrom(12), 12u);
    EXPECT_EQ(r.ContiguousDownFrom(21), 20u);
    EXPECT_EQ(r.ContiguousDownFrom(10), std::nullopt);
    EXPECT_EQ(r.ContiguousDownFrom(4), std::nullopt);
    EXPECT_EQ(r.ContiguousDownFrom(22), std::nullopt);
    EXPECT_EQ(r.ContiguousDownFrom(UINT64_MAX), std::nullopt);
}

TEST(SlotRanges, NearUint64Max) {
    const uint64_t kMax = UINT64_MAX;
    SlotRanges r;
    r.Add(kMax);
    r.Add(kMax - 2);
    EXPECT_EQ(r.Ranges(), (Ranges{{kMax - 2, kMax - 2}, {kMax, kMax}}));
    r.Add(kMax - 1);
    EXPECT_EQ(r.Ranges(), (Ranges{{kMax - 2, kMax}}));
    EXPECT_TRUE(r.Contains(kMax));
    EXPECT_FALSE(r.Contains(kMax - 3));
    EXPECT_EQ(r.SlotCount(), 3u);
    EXPECT_EQ(r.ContiguousDownFrom(kMax), kMax - 2);
    EXPECT_EQ(r.ToText(),
              "18446744073709551613-18446744073709551615");
    EXPECT_EQ(FromText(r.ToText()), r);
    r.Add(0);
    r.AddRange(1, kMax - 3);            // fills the gap: everything
    EXPECT_EQ(r.Ranges(), (Ranges{{0, kMax}}));
    EXPECT_EQ(r.SlotCount(), kMax);     // 2^64 saturates
    EXPECT_EQ(r.ContiguousDownFrom(kMax), 0u);
    SlotRanges two;
    two.AddRange(0, kMax - 1);
    EXPECT_EQ(two.SlotCount(), kMax);   // exactly 2^64 - 1
    two.AddRange(kMax, kMax);
    EXPECT_EQ(two.RangeCount(), 1u);
    SlotRanges halves;
    halves.AddRange(0, kMax / 2);
    halves.AddRange(kMax / 2 + 2, kMax);
    EXPECT_EQ(halves.SlotCount(), kMax);  // 2^64 - 1: no overflow
    EXPECT_EQ(halves.MissingFrom(SlotRanges(), kMax, 5), Slots{kMax});
}

}  // namespace
}  // namespace solgate
