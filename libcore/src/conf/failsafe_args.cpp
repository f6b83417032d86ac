#include "conf/failsafe_args.h"

#include "conf/conf_messages.h"
#include "conf/conf_words.h"

namespace solgate::conf {

std::optional<std::string> ParseRetryMissingData(
    const std::vector<std::string_view>& args, RetryMissingData* out) {
    *out = RetryMissingData{};
    if (args.empty() || (args[0] != "on" && args[0] != "off")) {
        return "\"retry_missing_data\" must start with \"on\" or \"off\"";
    }
    out->on = args[0] == "on";
    for (size_t i = 1; i < args.size(); i++) {
        std::string_view option = args[i];
        if (auto attempts = OptionValue(option, "attempts=")) {
            auto n = ParseCount(*attempts, 1, RetryMissingData::kMaxAttempts);
            if (!n) {
                return "invalid \"attempts=\" " + Quoted(*attempts) +
                       " in \"retry_missing_data\": must be a number from 1 "
                       "to " + std::to_string(RetryMissingData::kMaxAttempts);
            }
            out->attempts = static_cast<uint32_t>(*n);
        } else if (auto delay = OptionValue(option, "delay=")) {
            auto ms = ParseDurationMs(*delay, RetryMissingData::kMaxDelayMs);
            if (!ms) {
                return "invalid \"delay=\" " + Quoted(*delay) +
                       " in \"retry_missing_data\": must be a time from 0 to "
                       "10s, such as 150ms";
            }
            out->delay_ms = static_cast<uint32_t>(*ms);
        } else {
            return "invalid parameter " + Quoted(option) +
                   " in \"retry_missing_data\", expected \"attempts=\" or "
                   "\"delay=\"";
        }
    }
    return std::nullopt;
}

std::optional<std::string> ParseBroadcast(
    const std::vector<std::string_view>& args, Broadcast* out) {
    *out = Broadcast{};
    if (args.empty() || args.size() > 2) {
        return "\"broadcast\" takes methods and an optional \"to=\"";
    }
    if (auto bad = CheckMethods(args[0])) {
        return "invalid methods " + Quoted(args[0]) + " in \"broadcast\": " +
               std::string(*bad);
    }
    std::string_view rest = args[0];
    while (!rest.empty()) {
        size_t bar = rest.find('|');
        out->methods.emplace_back(rest.substr(0, bar));
        rest = bar == std::string_view::npos ? std::string_view()
                                             : rest.substr(bar + 1);
    }
    if (args.size() == 2) {
        auto to = OptionValue(args[1], "to=");
        if (!to) {
            return "invalid parameter " + Quoted(args[1]) +
                   " in \"broadcast\", expected \"to=\"";
        }
        if (*to != "all") {
            auto n = ParseCount(*to, 1, Broadcast::kMaxTo);
            if (!n) {
                return "invalid \"to=\" " + Quoted(*to) +
                       " in \"broadcast\": must be \"all\" or a number "
                       "from 1 to " + std::to_string(Broadcast::kMaxTo);
            }
            out->to = static_cast<uint32_t>(*n);
        }
    }
    return std::nullopt;
}

}  // namespace solgate::conf
