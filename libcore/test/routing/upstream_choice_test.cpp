// The choice among candidates: tiers, minContextSlot, weighted turns.
#include "routing/upstream_choice.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace solgate {
namespace {

// n eligible candidates of equal weight, indices first, first + 1, ...
std::vector<Candidate> Equal(size_t n, size_t first = 0) {
    std::vector<Candidate> c;
    for (size_t i = 0; i < n; i++) {
        c.push_back({first + i, CandidateTier::kEligible, true, 1000});
    }
    return c;
}

std::map<size_t, int> Shares(const std::vector<Candidate>& c, int turns) {
    std::map<size_t, int> shares;
    for (int t = 0; t < turns; t++) {
        shares[*ChooseCandidate(c.data(), c.size(), t)]++;
    }
    return shares;
}

TEST(UpstreamChoice, EqualCandidatesTakeStrictTurns) {
    std::vector<Candidate> c = Equal(3, 10);
    for (uint64_t t = 0; t < 9; t++) {
        EXPECT_EQ(ChooseCandidate(c.data(), 3, t), 10 + t % 3);
        EXPECT_EQ(ChooseCandidateAt(c.data(), 3, t), t % 3);  // its place
    }
    EXPECT_FALSE(ChooseCandidate(c.data(), 0, 0));
    EXPECT_FALSE(ChooseCandidateAt(c.data(), 0, 0));
}

TEST(UpstreamChoice, TheBestTierWins) {
    std::vector<Candidate> c = Equal(4);
    c[0] = {0, CandidateTier::kCordoned, true, 1000};
    c[1] = {1, CandidateTier::kLagging, true, 1000};
    c[2] = {2, CandidateTier::kBackup, true, 1000};
    c[3] = {3, CandidateTier::kEjected, true, 1000};
    EXPECT_EQ(Shares(c, 10), (std::map<size_t, int>{{2, 10}}));
    c[2].tier = CandidateTier::kFallbackBackup;
    EXPECT_EQ(Shares(c, 10), (std::map<size_t, int>{{2, 10}}));
    c.erase(c.begin() + 2);
    EXPECT_EQ(Shares(c, 10), (std::map<size_t, int>{{1, 10}}));
    c.erase(c.begin() + 1);
    EXPECT_EQ(Shares(c, 10), (std::map<size_t, int>{{3, 10}}));
}

TEST(UpstreamChoice, ThoseThatReachedMinContextSlotFirst) {
    std::vector<Candidate> c = Equal(3);
    c[0].reached = false;
    c[2].reached = false;
    EXPECT_EQ(Shares(c, 6), (std::map<size_t, int>{{1, 6}}));
    c[1].reached = false;  // nobody reached it: all of them
    EXPECT_EQ(Shares(c, 6).size(), 3u);
}

// A worse tier's candidate that reached minContextSlot does not make the
// best tier's unreached ones wait, whatever the order.
TEST(UpstreamChoice, OnlyTheBestTierCountsForMinContextSlot) {
    std::vector<Candidate> c = Equal(3);
    c[0] = {0, CandidateTier::kLagging, true, 1000};
    c[1].reached = false;
    c[2].reached = false;
    EXPECT_EQ(Shares(c, 6), (std::map<size_t, int>{{1, 3}, {2, 3}}));
    c[0].tier = CandidateTier::kEligible;
    c[0].reached = false;
    c[1].tier = CandidateTier::kCordoned;
    c[1].reached = true;
    EXPECT_EQ(Shares(c, 6), (std::map<size_t, int>{{0, 3}, {2, 3}}));
    c[2].reached = true;
    EXPECT_EQ(Shares(c, 6), (std::map<size_t, int>{{2, 6}}));
}

TEST(UpstreamChoice, WeightsGiveProportionalSharesEvenlySpread) {
    std::vector<Candidate> c = Equal(2);
    c[0] = {0, CandidateTier::kEligible, true, 3000};
    c[1] = {1, CandidateTier::kEligible, true, 1000};
    auto shares = Shares(c, 4000);
    EXPECT_NEAR(shares[0], 3000, 5);
    // any 20 turns in a row hold each about its share
    for (int start = 0; start < 200; start += 20) {
        int ones = 0;
        for (int t = start; t < start + 20; t++) {
            ones += *ChooseCandidate(c.data(), 2, t) == 1;
        }
        EXPECT_GE(ones, 3);
        EXPECT_LE(ones, 7);
    }
}

// A node ten times slower than the others gets a small share, never none.
TEST(UpstreamChoice, ASlowNodeGetsASmallShare) {
    EXPECT_EQ(EffectiveWeight(1, 1.0), 1000u);
    EXPECT_EQ(EffectiveWeight(1, 10.0), 10u);
    EXPECT_EQ(EffectiveWeight(1, 1000.0), 1u);
    EXPECT_EQ(EffectiveWeight(3, 0.5), 3000u);  // a ratio below 1 is 1
    EXPECT_EQ(EffectiveWeight(0, 1.0), 1000u);  // weight 0 counts as 1
    EXPECT_EQ(EffectiveWeight(7, 1.0), 7000u);
    EXPECT_EQ(EffectiveWeight(2, 1.0000001), 2000u);
    EXPECT_EQ(EffectiveWeight(2, 1.5), 889u);
    std::vector<Candidate> c = Equal(3);
    c[2].weight = EffectiveWeight(1, 10.0);
    auto shares = Shares(c, 2010);
    EXPECT_NEAR(shares[2], 10, 2);
    EXPECT_GT(shares[2], 0);
}

}  // namespace
}  // namespace solgate
