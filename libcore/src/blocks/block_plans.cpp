#include "blocks/block_plans.h"

#include <charconv>
#include <utility>

#include "conf/conf_messages.h"

namespace solgate {

using conf::Quoted;

static BlockPlan MakePlan(const char* name, PlanTier tier,
                          double getblock_rate, double retrieval_rate,
                          uint64_t queue_limit, uint64_t monthly_allowance) {
    BlockPlan plan;
    plan.name = name;
    plan.tier = tier;
    plan.getblock_rate = getblock_rate;
    plan.retrieval_rate = retrieval_rate;
    plan.queue_limit = queue_limit;
    plan.monthly_allowance = monthly_allowance;
    return plan;
}

std::vector<BlockPlan> DefaultBlockPlans() {
    return {
        MakePlan("free", PlanTier::kFree, 10, 0, 0, 0),
        MakePlan("operator", PlanTier::kOperator, 50, 0, 0, 0),
        MakePlan("blade_runner", PlanTier::kArchive, 100, 5, 1000, 100000),
        MakePlan("nexus", PlanTier::kArchive, 500, 25, 10000, 2000000),
    };
}

std::string_view PlanTierName(PlanTier tier) {
    switch (tier) {
    case PlanTier::kFree:
        return "free";
    case PlanTier::kOperator:
        return "operator";
    case PlanTier::kArchive:
        return "archive";
    }
    return "free";
}

std::optional<PlanTier> ParsePlanTier(std::string_view text) {
    for (PlanTier tier :
         {PlanTier::kFree, PlanTier::kOperator, PlanTier::kArchive}) {
        if (text == PlanTierName(tier)) {
            return tier;
        }
    }
    return std::nullopt;
}

static bool IsDigits(std::string_view text) {
    if (text.empty()) {
        return false;
    }
    for (char c : text) {
        if (c < '0' || c > '9') {
            return false;
        }
    }
    return true;
}

static bool EndsWith(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() &&
           text.substr(text.size() - suffix.size()) == suffix;
}

std::optional<double> ParseRate(std::string_view text) {
    if (text == "0") {
        return 0.0;
    }
    double per = 0;
    if (EndsWith(text, "r/s")) {
        per = 1;
    } else if (EndsWith(text, "r/m")) {
        per = 60;
    } else {
        return std::nullopt;
    }
    std::string_view number = text.substr(0, text.size() - 3);
    size_t dot = number.find('.');
    if (!IsDigits(number.substr(0, dot)) ||
        (dot != std::string_view::npos &&
         !IsDigits(number.substr(dot + 1)))) {
        return std::nullopt;
    }
    double value = 0;
    auto [end, ec] = std::from_chars(number.data(),
                                     number.data() + number.size(), value,
                                     std::chars_format::fixed);
    if (ec != std::errc() || end != number.data() + number.size()) {
        return std::nullopt;
    }
    double rate = value / per;
    if (!(rate >= 0) || rate > 1e6) {
        return std::nullopt;
    }
    return rate;
}

static std::optional<uint64_t> ParseCount(std::string_view text) {
    if (!IsDigits(text)) {
        return std::nullopt;
    }
    uint64_t value = 0;
    auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

static bool IsPlanName(std::string_view name) {
    if (name.empty() || name.size() > 32) {
        return false;
    }
    for (char c : name) {
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) {
            return false;
        }
    }
    return true;
}

std::optional<std::string> ParsePlanDefine(
    std::string_view name, const std::vector<std::string_view>& args,
    BlockPlan* out) {
    if (!IsPlanName(name)) {
        return "invalid plan name " + Quoted(name);
    }
    std::vector<BlockPlan> defaults = DefaultBlockPlans();
    const BlockPlan* base = FindPlan(defaults, name);
    BlockPlan plan;
    if (base != nullptr) {
        plan = *base;
    } else {
        plan.name = std::string(name);
    }

    static constexpr std::string_view kKeys[] = {
        "tier", "getblock_rate", "retrieval_rate", "queue_limit",
        "monthly_allowance"};
    bool seen[sizeof(kKeys) / sizeof(kKeys[0])] = {};
    for (std::string_view arg : args) {
        size_t eq = arg.find('=');
        if (eq == std::string_view::npos) {
            return "invalid parameter " + Quoted(arg);
        }
        std::string_view key = arg.substr(0, eq);
        std::string_view value = arg.substr(eq + 1);
        size_t k = 0;
        while (k < sizeof(kKeys) / sizeof(kKeys[0]) && kKeys[k] != key) {
            k++;
        }
        if (k == sizeof(kKeys) / sizeof(kKeys[0])) {
            return "invalid parameter " + Quoted(arg);
        }
        if (seen[k]) {
            return "duplicate parameter " + Quoted(arg);
        }
        seen[k] = true;
        if (key == "tier") {
            std::optional<PlanTier> tier = ParsePlanTier(value);
            if (!tier) {
                return "invalid tier " + Quoted(value);
            }
            plan.tier = *tier;
        } else if (key == "getblock_rate" || key == "retrieval_rate") {
            std::optional<double> rate = ParseRate(value);
            if (!rate) {
                return "invalid rate " + Quoted(value) + " in " +
                       Quoted(key);
            }
            (key == "getblock_rate" ? plan.getblock_rate
                                    : plan.retrieval_rate) = *rate;
        } else {
            std::optional<uint64_t> count = ParseCount(value);
            if (!count) {
                return "invalid number " + Quoted(value) + " in " +
                       Quoted(key);
            }
            (key == "queue_limit" ? plan.queue_limit
                                  : plan.monthly_allowance) = *count;
        }
    }
    if (base == nullptr && !seen[0]) {
        return "plan " + Quoted(name) + " needs \"tier=\"";
    }
    if (out != nullptr) {
        *out = std::move(plan);
    }
    return std::nullopt;
}

void DefinePlan(std::vector<BlockPlan>* plans, BlockPlan plan) {
    if (plans == nullptr) {
        return;
    }
    for (BlockPlan& existing : *plans) {
        if (existing.name == plan.name) {
            existing = std::move(plan);
            return;
        }
    }
    plans->push_back(std::move(plan));
}

const BlockPlan* FindPlan(const std::vector<BlockPlan>& plans,
                          std::string_view name) {
    for (const BlockPlan& plan : plans) {
        if (plan.name == name) {
            return &plan;
        }
    }
    return nullptr;
}

}  // namespace solgate
