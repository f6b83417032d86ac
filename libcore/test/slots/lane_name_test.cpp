// Lane labels and keys derived from matched upstream id sets.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "slots/lane_name.h"

namespace solgate {
namespace {

using Ids = std::vector<std::string>;

TEST(LaneName, SharedTokenPrecedence) {
    EXPECT_EQ(LaneName({"flashblocks-alchemy", "flashblocks-quicknode"}),
              "flashblocks");
    EXPECT_EQ(LaneName({"alchemy-systx", "quicknode-systx", "helius-systx"}),
              "systx");
    // The first shared token in the first sorted id's order wins, even when
    // a later token is shared too.
    EXPECT_EQ(LaneName({"eu-archive-1", "us-archive-eu"}), "eu");
    EXPECT_EQ(LaneName({"node-archive-a", "node-archive-b"}), "node");
    // Whole tokens only: "arch" is not a token of "archive-1".
    EXPECT_EQ(LaneName({"arch-x", "archive-1"}), "arar");
}

TEST(LaneName, OrderIndependent) {
    EXPECT_EQ(LaneName({"quicknode-systx", "systx-quicknode"}), "quicknode");
    EXPECT_EQ(LaneName({"systx-quicknode", "quicknode-systx"}), "quicknode");

    Ids ids = {"c-shared-x", "a-y-shared", "b-shared", "d-z-shared-q"};
    std::sort(ids.begin(), ids.end());
    std::string expected = LaneName(ids);
    EXPECT_EQ(expected, "shared");
    do {
        EXPECT_EQ(LaneName(ids), expected);
    } while (std::next_permutation(ids.begin(), ids.end()));

    Ids fallback = {"delta", "alpha", "charlie", "bravo"};
    std::sort(fallback.begin(), fallback.end());
    do {
        EXPECT_EQ(LaneName(fallback), "albrchde");
    } while (std::next_permutation(fallback.begin(), fallback.end()));
}

TEST(LaneName, FallbackConcatenation) {
    EXPECT_EQ(LaneName({"alchemy", "quicknode"}), "alqu");
    EXPECT_EQ(LaneName({"quicknode-1", "alchemy-2"}), "alqu");
    // Short ids contribute what they have.
    EXPECT_EQ(LaneName({"x", "yy", "zzz"}), "xyyzz");
    EXPECT_EQ(LaneName({"", "ab"}), "ab");
    // Only the first five sorted ids count.
    EXPECT_EQ(LaneName({"gg", "ff", "ee", "dd", "cc", "bb", "aa"}),
              "aabbccddee");
    EXPECT_EQ(LaneName({"f1", "e1", "d1", "c1", "b1", "a1"}), "a1b1c1d1e1");
}

TEST(LaneName, ConsecutiveHyphens) {
    // Empty tokens are never names, and never block a shared one.
    EXPECT_EQ(LaneName({"a--shared", "shared--b"}), "shared");
    EXPECT_EQ(LaneName({"-x-", "--x"}), "x");
    EXPECT_EQ(LaneName({"a--b", "c--d"}), "a-c-");
    EXPECT_EQ(LaneName({"--", "---"}), "----");
}

TEST(LaneName, SingleId) {
    EXPECT_EQ(LaneName({"flashblocks-alchemy"}), "flashblocks");
    EXPECT_EQ(LaneName({"--lead-x"}), "lead");
    EXPECT_EQ(LaneName({"solo"}), "solo");
    EXPECT_EQ(LaneName({"---"}), "--");
    EXPECT_EQ(LaneName({""}), "");
}

TEST(LaneName, EmptyInput) { EXPECT_EQ(LaneName({}), ""); }

TEST(LaneName, DuplicateIds) {
    EXPECT_EQ(LaneName({"node-a", "node-a"}), "node");
    EXPECT_EQ(LaneName({"ab", "ab", "cd"}), "ababcd");
}

TEST(LaneName, Deterministic) {
    Ids ids = {"helius-mainnet-1", "triton-mainnet-2", "alchemy-mainnet"};
    std::string first = LaneName(ids);
    EXPECT_EQ(first, "mainnet");
    for (int i = 0; i < 100; i++) EXPECT_EQ(LaneName(ids), first);
}

TEST(LaneKey, KnownValue) {
    // printf 'a\0b' | sha256sum -> 59b271ae1bbcb1d3...
    EXPECT_EQ(LaneKey({"b", "a"}), "grp:59b271ae1bbcb1d3");
    EXPECT_EQ(LaneKey({"a", "b"}), "grp:59b271ae1bbcb1d3");
    // printf 'a' | sha256sum -> ca978112ca1bbdca...
    EXPECT_EQ(LaneKey({"a"}), "grp:ca978112ca1bbdca");
    // The empty string -> e3b0c44298fc1c14...
    EXPECT_EQ(LaneKey({}), "grp:e3b0c44298fc1c14");
}

TEST(LaneKey, Shape) {
    for (const Ids& ids : {Ids{"alchemy-1", "quicknode-1"}, Ids{"x"},
                           Ids{"a", "b", "c", "d", "e", "f"}}) {
        std::string key = LaneKey(ids);
        ASSERT_EQ(key.size(), 20u);
        EXPECT_EQ(key.substr(0, 4), "grp:");
        for (char c : key.substr(4)) {
            EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << key;
        }
    }
}

TEST(LaneKey, OrderIndependent) {
    Ids ids = {"d", "alchemy-1", "quicknode-2", "b"};
    std::sort(ids.begin(), ids.end());
    std::string expected = LaneKey(ids);
    do {
        EXPECT_EQ(LaneKey(ids), expected);
    } while (std::next_permutation(ids.begin(), ids.end()));
}

TEST(LaneKey, DifferentSetsDiffer) {
    std::set<std::string> keys;
    const std::vector<Ids> sets = {
        {"a", "b"},       {"a", "c"},  {"a", "b", "c"},
        {"ab"},           {"a", "b", "d"}, {"a-b"},
        {"alchemy-1", "quicknode-1"}, {"alchemy-1", "quicknode-2"},
        {"b"},            {"a"},
    };
    for (const Ids& ids : sets) keys.insert(LaneKey(ids));
    EXPECT_EQ(keys.size(), sets.size());
    // The NUL separator keeps {"ab"} apart from {"a", "b"}.
    EXPECT_NE(LaneKey({"ab"}), LaneKey({"a", "b"}));
    EXPECT_NE(LaneKey({"a", "bc"}), LaneKey({"ab", "c"}));
}

}  // namespace
}  // namespace solgate
