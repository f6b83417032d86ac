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

}  // namespace solgate::conf
