#include <gtest/gtest.h>

#include "blocks/block_plans.h"

namespace solgate {
namespace {

using Args = std::vector<std::string_view>;

// The error ParsePlanDefine gives, or "" when it succeeds.
std::string Error(std::string_view name, const Args& args) {
    BlockPlan plan;
    return ParsePlanDefine(name, args, &plan).value_or("");
}

void ExpectPlan(const BlockPlan* plan, const char* name, PlanTier tier,
                double getblock_rate, double retrieval_rate,
                uint64_t queue_limit, uint64_t monthly_allowance) {
    ASSERT_NE(plan, nullptr) << name;
    EXPECT_EQ(plan->name, name);
    EXPECT_EQ(plan->tier, tier) << name;
    EXPECT_DOUBLE_EQ(plan->getblock_rate, getblock_rate) << name;
    EXPECT_DOUBLE_EQ(plan->retrieval_rate, retrieval_rate) << name;
    EXPECT_EQ(plan->queue_limit, queue_limit) << name;
    EXPECT_EQ(plan->monthly_allowance, monthly_allowance) << name;
}

TEST(BlockPlans, Defaults) {
    std::vector<BlockPlan> plans = DefaultBlockPlans();
    ASSERT_EQ(plans.size(), 4u);
    ExpectPlan(&plans[0], "free", PlanTier::kFree, 10, 0, 0, 0);
    ExpectPlan(&plans[1], "operator", PlanTier::kOperator, 50, 0, 0, 0);
    ExpectPlan(&plans[2], "blade_runner", PlanTier::kArchive, 100, 5, 1000,
               100000);
    ExpectPlan(&plans[3], "nexus", PlanTier::kArchive, 500, 25, 10000,
               2000000);
    EXPECT_FALSE(plans[0].HasLongTermStorage());
    EXPECT_FALSE(plans[1].HasLongTermStorage());
    EXPECT_TRUE(plans[2].HasLongTermStorage());
    EXPECT_TRUE(plans[3].HasLongTermStorage());
    EXPECT_EQ(FindPlan(plans, "nexus"), &plans[3]);
    EXPECT_EQ(FindPlan(plans, "Nexus"), nullptr);
    EXPECT_EQ(FindPlan(plans, ""), nullptr);
}

TEST(BlockPlans, Tiers) {
    EXPECT_EQ(PlanTierName(PlanTier::kFree), "free");
    EXPECT_EQ(PlanTierName(PlanTier::kOperator), "operator");
    EXPECT_EQ(PlanTierName(PlanTier::kArchive), "archive");
    EXPECT_EQ(ParsePlanTier("free"), PlanTier::kFree);
    EXPECT_EQ(ParsePlanTier("operator"), PlanTier::kOperator);
    EXPECT_EQ(ParsePlanTier("archive"), PlanTier::kArchive);
    EXPECT_EQ(ParsePlanTier("Archive"), std::nullopt);
    EXPECT_EQ(ParsePlanTier(""), std::nullopt);
    EXPECT_EQ(ParsePlanTier("gold"), std::nullopt);
}

TEST(BlockPlans, Rates) {
    EXPECT_EQ(ParseRate("100r/s"), 100.0);
    EXPECT_EQ(ParseRate("600r/m"), 10.0);
    EXPECT_EQ(ParseRate("0.5r/s"), 0.5);
    EXPECT_EQ(ParseRate("30r/m"), 0.5);
    EXPECT_EQ(ParseRate("1r/m"), 1.0 / 60);
    EXPECT_EQ(ParseRate("0r/s"), 0.0);
    EXPECT_EQ(ParseRate("0"), 0.0);
    EXPECT_EQ(ParseRate("007r/s"), 7.0);
    EXPECT_EQ(ParseRate("1000000r/s"), 1e6);          // the limit itself
    EXPECT_EQ(ParseRate("60000000r/m"), 1e6);
    for (const char* bad :
         {"", "abc", "100", "5", "r/s", "100r/h", "100 r/s", " 100r/s",
          "100r/s ", "-1r/s", "+1r/s", ".5r/s", "1.r/s", "1.2.3r/s",
          "1e3r/s", "inf r/s", "infr/s", "nanr/s", "0x10r/s", "100R/S",
          "100r/", "1000001r/s", "60000001r/m", "1e400r/s",
          "99999999999999999999999999999r/s"}) {
        EXPECT_EQ(ParseRate(bad), std::nullopt) << bad;
    }
}

TEST(BlockPlans, ParseNewPlan) {
    BlockPlan plan;
    EXPECT_EQ(ParsePlanDefine("pro-2",
                              {"tier=archive", "getblock_rate=200r/s",
                               "retrieval_rate=600r/m", "queue_limit=50",
                               "monthly_allowance=7"},
                              &plan),
              std::nullopt);
    ExpectPlan(&plan, "pro-2", PlanTier::kArchive, 200, 10, 50, 7);
    // Only tier= is needed; everything else stays 0 (0 = unlimited rate).
    EXPECT_EQ(ParsePlanDefine("Team_A", {"tier=operator"}, &plan),
              std::nullopt);
    ExpectPlan(&plan, "Team_A", PlanTier::kOperator, 0, 0, 0, 0);
    // Order of keys does not matter.
    EXPECT_EQ(ParsePlanDefine("x", {"queue_limit=3", "tier=free"}, &plan),
              std::nullopt);
    ExpectPlan(&plan, "x", PlanTier::kFree, 0, 0, 3, 0);
    EXPECT_EQ(ParsePlanDefine("y", {"tier=free", "queue_limit="
                                    "18446744073709551615"}, &plan),
              std::nullopt);
    EXPECT_EQ(plan.queue_limit, UINT64_MAX);
    // Validation only.
    EXPECT_EQ(ParsePlanDefine("z", {"tier=free"}, nullptr), std::nullopt);
}

TEST(BlockPlans, ParseStartsFromDefault) {
    BlockPlan plan;
    EXPECT_EQ(ParsePlanDefine("blade_runner", {"getblock_rate=150r/s"},
                              &plan),
              std::nullopt);
    ExpectPlan(&plan, "blade_runner", PlanTier::kArchive, 150, 5, 1000,
               100000);
    EXPECT_EQ(ParsePlanDefine("free", {}, &plan), std::nullopt);
    ExpectPlan(&plan, "free", PlanTier::kFree, 10, 0, 0, 0);
    EXPECT_EQ(ParsePlanDefine("operator", {"tier=archive",
                                           "retrieval_rate=1r/s"}, &plan),
              std::nullopt);
    ExpectPlan(&plan, "operator", PlanTier::kArchive, 50, 1, 0, 0);
}

TEST(BlockPlans, ParseErrors) {
    EXPECT_EQ(Error("", {"tier=free"}), "invalid plan name \"\"");
    EXPECT_EQ(Error("a b", {"tier=free"}), "invalid plan name \"a b\"");
    EXPECT_EQ(Error("a.b", {"tier=free"}), "invalid plan name \"a.b\"");
    EXPECT_EQ(Error("tier=free", {}), "invalid plan name \"tier=free\"");
    EXPECT_EQ(Error(std::string(33, 'a'), {"tier=free"}),
              "invalid plan name \"" + std::string(33, 'a') + "\"");
    EXPECT_EQ(Error(std::string(32, 'a'), {"tier=free"}), "");
    EXPECT_EQ(Error("x", {"tier=free", "foo=1"}),
              "invalid parameter \"foo=1\"");
    EXPECT_EQ(Error("x", {"tier=free", "archive"}),
              "invalid parameter \"archive\"");
    EXPECT_EQ(Error("x", {"=5"}), "invalid parameter \"=5\"");
    EXPECT_EQ(Error("x", {"Tier=free"}), "invalid parameter \"Tier=free\"");
    EXPECT_EQ(Error("x", {"tier=free", "tier=archive"}),
              "duplicate parameter \"tier=archive\"");
    EXPECT_EQ(Error("nexus", {"queue_limit=1", "queue_limit=1"}),
              "duplicate parameter \"queue_limit=1\"");
    EXPECT_EQ(Error("x", {"tier=gold"}), "invalid tier \"gold\"");
    EXPECT_EQ(Error("x", {"tier="}), "invalid tier \"\"");
    EXPECT_EQ(Error("x", {"tier=free", "getblock_rate=abc"}),
              "invalid rate \"abc\" in \"getblock_rate\"");
    EXPECT_EQ(Error("x", {"tier=free", "retrieval_rate=5r/h"}),
              "invalid rate \"5r/h\" in \"retrieval_rate\"");
    EXPECT_EQ(Error("x", {"tier=free", "getblock_rate="}),
              "invalid rate \"\" in \"getblock_rate\"");
    EXPECT_EQ(Error("x", {"tier=free", "queue_limit=-1"}),
              "invalid number \"-1\" in \"queue_limit\"");
    EXPECT_EQ(Error("x", {"tier=free", "monthly_allowance=1e5"}),
              "invalid number \"1e5\" in \"monthly_allowance\"");
    EXPECT_EQ(Error("x", {"tier=free",
                          "monthly_allowance=18446744073709551616"}),
              "invalid number \"18446744073709551616\" in "
              "\"monthly_allowance\"");
    EXPECT_EQ(Error("x", {}), "plan \"x\" needs \"tier=\"");
    EXPECT_EQ(Error("x", {"getblock_rate=1r/s"}), "plan \"x\" needs \"tier=\"");
    // On error the output is left alone.
    BlockPlan plan;
    plan.name = "before";
    EXPECT_NE(ParsePlanDefine("nexus", {"getblock_rate=x"}, &plan),
              std::nullopt);
    EXPECT_EQ(plan.name, "before");
}

TEST(BlockPlans, OverrideKeepsOthersAndOrder) {
    std::vector<BlockPlan> plans = DefaultBlockPlans();
    BlockPlan plan;
    ASSERT_EQ(ParsePlanDefine("operator", {"getblock_rate=75r/s"}, &plan),
              std::nullopt);
    DefinePlan(&plans, plan);
    ASSERT_EQ(plans.size(), 4u);
    ExpectPlan(&plans[1], "operator", PlanTier::kOperator, 75, 0, 0, 0);
    ExpectPlan(&plans[0], "free", PlanTier::kFree, 10, 0, 0, 0);
    ExpectPlan(&plans[2], "blade_runner", PlanTier::kArchive, 100, 5, 1000,
               100000);
    ExpectPlan(&plans[3], "nexus", PlanTier::kArchive, 500, 25, 10000,
               2000000);
}

TEST(BlockPlans, NewPlanAppended) {
    std::vector<BlockPlan> plans = DefaultBlockPlans();
    BlockPlan plan;
    ASSERT_EQ(ParsePlanDefine("enterprise",
                              {"tier=archive", "getblock_rate=1000r/s",
                               "retrieval_rate=50r/s"},
                              &plan),
              std::nullopt);
    DefinePlan(&plans, plan);
    ASSERT_EQ(ParsePlanDefine("hobby", {"tier=free", "getblock_rate=1r/s"},
                              &plan),
              std::nullopt);
    DefinePlan(&plans, plan);
    ASSERT_EQ(plans.size(), 6u);
    EXPECT_EQ(plans[4].name, "enterprise");
    EXPECT_EQ(plans[5].name, "hobby");
    ExpectPlan(FindPlan(plans, "enterprise"), "enterprise",
               PlanTier::kArchive, 1000, 50, 0, 0);
    // Redefining a new plan replaces it in place.
    ASSERT_EQ(ParsePlanDefine("enterprise", {"tier=operator"}, &plan),
              std::nullopt);
    DefinePlan(&plans, plan);
    ASSERT_EQ(plans.size(), 6u);
    EXPECT_EQ(plans[4].tier, PlanTier::kOperator);
    EXPECT_FALSE(plans[4].HasLongTermStorage());
    EXPECT_EQ(plans[5].name, "hobby");
    ExpectPlan(FindPlan(plans, "nexus"), "nexus", PlanTier::kArchive, 500,
               25, 10000, 2000000);
    DefinePlan(nullptr, plan);          // ignored
}

}  // namespace
}  // namespace solgate
