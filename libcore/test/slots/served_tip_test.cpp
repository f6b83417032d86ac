#include <gtest/gtest.h>

#include "slots/served_tip.h"

namespace solgate {
namespace {

TEST(ServedTip, MajorityRule) {
    EXPECT_EQ(ServedTip({}), 0u);
    EXPECT_EQ(ServedTip({0, 0}), 0u);
    EXPECT_EQ(ServedTip({100}), 100u);
    EXPECT_EQ(ServedTip({100, 90}), 90u);        // two: the lower
    EXPECT_EQ(ServedTip({90, 100, 95}), 95u);
    EXPECT_EQ(ServedTip({10, 9, 8, 7}), 8u);     // 3 of 4 reached 8
    EXPECT_EQ(ServedTip({100, 0, 95}), 95u);     // unknown heads do not vote
    EXPECT_EQ(ServedTip({1000000, 5, 6}), 6u);   // one runaway cannot lead
}

TEST(ReferenceFinalizedSlot, SecondHighestClamp) {
    EXPECT_EQ(ReferenceFinalizedSlot({}, 100), 0u);
    EXPECT_EQ(ReferenceFinalizedSlot({500}, 100), 500u);
    EXPECT_EQ(ReferenceFinalizedSlot({500, 450, 300}, 100), 500u);
    EXPECT_EQ(ReferenceFinalizedSlot({999999, 500, 490}, 100), 500u);
    EXPECT_EQ(ReferenceFinalizedSlot({601, 500}, 100), 500u);
    EXPECT_EQ(ReferenceFinalizedSlot({600, 500}, 100), 600u);   // exactly lag
    EXPECT_EQ(ReferenceFinalizedSlot({999999, 500}, 0), 999999u);  // disabled
}

TEST(FilterByFinalizedSlotLag, DropsTrailersKeepsUnknown) {
    using V = std::vector<size_t>;
    EXPECT_EQ(FilterByFinalizedSlotLag({500, 450, 300, 0}, 100),
              (V{0, 1, 3}));
    // The liar passes, the honest pack stays, the trailer goes.
    EXPECT_EQ(FilterByFinalizedSlotLag({999999, 500, 490, 100}, 100),
              (V{0, 1, 2}));
    EXPECT_EQ(FilterByFinalizedSlotLag({500, 300}, 0), (V{0, 1}));
    EXPECT_EQ(FilterByFinalizedSlotLag({500, 300}, -1), (V{0, 1}));
    EXPECT_EQ(FilterByFinalizedSlotLag({0, 0}, 100), (V{0, 1}));
    // Two far apart: the runner-up is the reference and both pass.
    EXPECT_EQ(FilterByFinalizedSlotLag({500, 395}, 5), (V{0, 1}));
    EXPECT_EQ(FilterByFinalizedSlotLag({500, 498, 390}, 5), (V{0, 1}));
}

TEST(FilterByMinContextSlot, ReachedOrAll) {
    using V = std::vector<size_t>;
    EXPECT_EQ(FilterByMinContextSlot({100, 200, 150}, 150), (V{1, 2}));
    EXPECT_EQ(FilterByMinContextSlot({100, 200}, 300), (V{0, 1}));
    EXPECT_EQ(FilterByMinContextSlot({0, 5}, 0), (V{0, 1}));
}

}  // namespace
}  // namespace solgate
