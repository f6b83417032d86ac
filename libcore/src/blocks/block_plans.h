// Cube Runner plans: the getBlock rate, long-term storage retrievals and
// allowances a client's plan grants, from built-in defaults and
// `plan_define NAME tier=... getblock_rate=... ...;` in nginx.conf.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace solgate {

// What a plan may reach: only archive plans read long-term storage.
enum class PlanTier { kFree, kOperator, kArchive };

// One plan. Rates are requests per second.
struct BlockPlan {
    std::string name;
    PlanTier tier = PlanTier::kFree;
    double getblock_rate = 0;    // requests per second; 0 = unlimited
    double retrieval_rate = 0;   // long-term storage retrievals per second
    uint64_t queue_limit = 0;
    uint64_t monthly_allowance = 0;
    bool HasLongTermStorage() const { return tier == PlanTier::kArchive; }
};

// The built-in plans, in this order (a plan_define of the same name
// overrides one):
//   free          free      10r/s    0      0      0
//   operator      operator  50r/s    0      0      0
//   blade_runner  archive   100r/s   5r/s   1000   100000
//   nexus         archive   500r/s   25r/s  10000  2000000
// (getblock_rate, retrieval_rate, queue_limit, monthly_allowance)
std::vector<BlockPlan> DefaultBlockPlans();

// "free", "operator", "archive".
std::string_view PlanTierName(PlanTier tier);

// The tier with that exact (lowercase) name; nullopt for anything else.
std::optional<PlanTier> ParsePlanTier(std::string_view text);

// A rate in requests per second: "100r/s", "600r/m" (= 10/s), "0.5r/s",
// or a bare "0". The number is decimal digits with an optional fraction
// ("1.5", not ".5", "1.", "1e3" or "+1"). nullopt when malformed or above
// 1e6 per second.
std::optional<double> ParseRate(std::string_view text);

// Parses a plan_define: the plan name and the arguments after it, each
// "key=value" with keys tier, getblock_rate, retrieval_rate (ParseRate),
// queue_limit and monthly_allowance (decimal, fits in uint64_t). Starts
// from the default plan of that name if there is one, else from an empty
// free-tier plan, and then tier= is required. Returns nullopt and sets
// *out on success (out may be null to only validate); on error leaves
// *out alone and returns an nginx-style message (lowercase, quotes the
// bad token, no full stop), one of:
//   invalid plan name "NAME"       (names are [A-Za-z0-9_-]{1,32})
//   invalid parameter "ARG"        (no "=", or an unknown key)
//   duplicate parameter "ARG"      (the key's second occurrence)
//   invalid tier "VALUE"
//   invalid rate "VALUE" in "KEY"
//   invalid number "VALUE" in "KEY"
//   plan "NAME" needs "tier="
std::optional<std::string> ParsePlanDefine(
    std::string_view name, const std::vector<std::string_view>& args,
    BlockPlan* out);

// Adds the plan, or replaces the one of the same name in place, so the
// order stays: defaults first, new plans appended as defined.
void DefinePlan(std::vector<BlockPlan>* plans, BlockPlan plan);

// The plan of that exact name, or nullptr. Valid until plans changes.
const BlockPlan* FindPlan(const std::vector<BlockPlan>& plans,
                          std::string_view name);

}  // namespace solgate
