#include "conf/failsafe_args.h"

#include "conf/conf_messages.h"
#include "conf/conf_words.h"

namespace solgate::conf {

namespace {

// The METHOD|METHOD... word every policy starts with.
std::optional<std::string> ParseMethodList(std::string_view directive,
                                           std::string_view word,
                                           std::vector<std::string>* out) {
    if (auto bad = CheckMethods(word)) {
        return "invalid methods " + Quoted(word) + " in " +
               Quoted(directive) + ": " + std::string(*bad);
    }
    std::string_view rest = word;
    while (!rest.empty()) {
        size_t bar = rest.find('|');
        out->emplace_back(rest.substr(0, bar));
        rest = bar == std::string_view::npos ? std::string_view()
                                             : rest.substr(bar + 1);
    }
    return std::nullopt;
}

// The first write method named (by name: a glob never is one), if any;
// a write is sent once, never compared or hedged.
const std::string* WriteNamed(const std::vector<std::string>& methods) {
    for (const std::string& method : methods) {
        if (method == "sendTransaction" || method == "requestAirdrop") {
            return &method;
        }
    }
    return nullptr;
}

// An option given twice: its last value would win unseen (checked once
// each is read, so that a misspelt one is named for what it is).
std::optional<std::string> Repeated(std::string_view directive,
                                    const std::vector<std::string_view>& args) {
    if (auto key = RepeatedOption(args, 1)) {
        return Quoted(*key) + " given twice in " + Quoted(directive);
    }
    return std::nullopt;
}

std::optional<std::string> BadCount(std::string_view directive,
                                    std::string_view key,
                                    std::string_view value, uint64_t max) {
    return "invalid " + Quoted(key) + " " + Quoted(value) + " in " +
           Quoted(directive) + ": must be a number from 1 to " +
           std::to_string(max);
}

}  // namespace

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
    return Repeated("retry_missing_data", args);
}

std::optional<std::string> ParseBroadcast(
    const std::vector<std::string_view>& args, Broadcast* out) {
    *out = Broadcast{};
    if (args.empty() || args.size() > 2) {
        return "\"broadcast\" takes methods and an optional \"to=\"";
    }
    if (auto error = ParseMethodList("broadcast", args[0], &out->methods)) {
        return error;
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

std::optional<std::string> ParseConsensus(
    const std::vector<std::string_view>& args, Consensus* out) {
    *out = Consensus{};
    if (args.empty()) {
        return "\"consensus\" takes methods, then \"participants=\", "
               "\"agreement=\" and \"dispute=\"";
    }
    if (auto error = ParseMethodList("consensus", args[0], &out->methods)) {
        return error;
    }
    if (const std::string* write = WriteNamed(out->methods)) {
        return "\"consensus\" never compares " + *write +
               ": a write is sent once (see \"broadcast\")";
    }
    for (size_t i = 1; i < args.size(); i++) {
        std::string_view option = args[i];
        if (auto value = OptionValue(option, "participants=")) {
            auto n = ParseCount(*value, 1, Consensus::kMaxParticipants);
            if (!n) {
                return BadCount("consensus", "participants=", *value,
                                Consensus::kMaxParticipants);
            }
            out->participants = static_cast<uint32_t>(*n);
        } else if (auto value = OptionValue(option, "agreement=")) {
            auto n = ParseCount(*value, 1, Consensus::kMaxParticipants);
            if (!n) {
                return BadCount("consensus", "agreement=", *value,
                                Consensus::kMaxParticipants);
            }
            out->agreement = static_cast<uint32_t>(*n);
        } else if (auto value = OptionValue(option, "dispute=")) {
            if (*value == "error") {
                out->dispute = Consensus::Dispute::kError;
            } else if (*value == "most_common") {
                out->dispute = Consensus::Dispute::kMostCommon;
            } else {
                return "invalid \"dispute=\" " + Quoted(*value) +
                       " in \"consensus\": must be \"error\" or "
                       "\"most_common\"";
            }
        } else {
            return "invalid parameter " + Quoted(option) +
                   " in \"consensus\", expected \"participants=\", "
                   "\"agreement=\" or \"dispute=\"";
        }
    }
    if (auto twice = Repeated("consensus", args)) {
        return twice;
    }
    if (out->agreement > out->participants) {
        return "\"agreement=" + std::to_string(out->agreement) +
               "\" in \"consensus\" is more than its " +
               std::to_string(out->participants) + " participants";
    }
    return std::nullopt;
}

std::optional<std::string> ParseHedge(
    const std::vector<std::string_view>& args, Hedge* out) {
    *out = Hedge{};
    if (args.empty()) {
        return "\"hedge\" takes methods, then \"after=\" and \"max=\"";
    }
    if (auto error = ParseMethodList("hedge", args[0], &out->methods)) {
        return error;
    }
    if (const std::string* write = WriteNamed(out->methods)) {
        return "\"hedge\" never sends " + *write +
               " twice: a write is not hedged (see \"broadcast\")";
    }
    for (size_t i = 1; i < args.size(); i++) {
        std::string_view option = args[i];
        if (auto value = OptionValue(option, "after=")) {
            auto ms = ParseDurationMs(*value, Hedge::kMaxAfterMs);
            if (!ms || *ms == 0) {
                return "invalid \"after=\" " + Quoted(*value) +
                       " in \"hedge\": must be a time from 1ms to 60s, "
                       "such as 100ms";
            }
            out->after_ms = static_cast<uint32_t>(*ms);
        } else if (auto value = OptionValue(option, "max=")) {
            auto n = ParseCount(*value, 1, Hedge::kMaxHedges);
            if (!n) {
                return BadCount("hedge", "max=", *value, Hedge::kMaxHedges);
            }
            out->max = static_cast<uint32_t>(*n);
        } else {
            return "invalid parameter " + Quoted(option) +
                   " in \"hedge\", expected \"after=\" or \"max=\"";
        }
    }
    return Repeated("hedge", args);
}

}  // namespace solgate::conf
