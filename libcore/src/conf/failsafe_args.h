// The failsafe directives of a solgate_network (or its defaults) block:
// `retry_missing_data on|off [attempts=N] [delay=TIME];`. Each parse
// returns nullopt with *out set, or the message `nginx -t` prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "solgate/solgate.h"

namespace solgate::conf {

struct RetryMissingData {
    static constexpr uint32_t kMaxAttempts = 10;
    static constexpr uint32_t kMaxDelayMs = 10000;

    bool on = SG_DEFAULT_RETRY_MISSING_DATA != 0;
    // more upstreams asked after a missing-data answer, and the wait before
    // each of them
    uint32_t attempts = SG_DEFAULT_RETRY_ATTEMPTS;
    uint32_t delay_ms = SG_DEFAULT_RETRY_DELAY_MS;
};

// args: the words after the directive name.
std::optional<std::string> ParseRetryMissingData(
    const std::vector<std::string_view>& args, RetryMissingData* out);

// `broadcast METHOD|METHOD... [to=N|all];`: a call of those methods goes
// to N upstreams at once (0: all of them).
struct Broadcast {
    static constexpr uint32_t kMaxTo = 64;

    std::vector<std::string> methods;   // names or globs
    uint32_t to = 0;
};

std::optional<std::string> ParseBroadcast(
    const std::vector<std::string_view>& args, Broadcast* out);

}  // namespace solgate::conf
