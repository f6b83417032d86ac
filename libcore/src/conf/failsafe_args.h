// The failsafe directives of a solgate_network (or its defaults) block:
// retry_missing_data, broadcast, consensus and hedge. Each parse returns
// nullopt with *out set, or the message `nginx -t` prints.
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

// `consensus METHOD|METHOD... [participants=N] [agreement=M]
// [dispute=error|most_common];`: a finalized call of those methods goes to
// N upstreams at once and M matching answers win.
struct Consensus {
    static constexpr uint32_t kMaxParticipants = 16;
    enum class Dispute : uint8_t { kError, kMostCommon };

    std::vector<std::string> methods;
    uint32_t participants = 3;
    uint32_t agreement = 2;
    Dispute dispute = Dispute::kError;
};

std::optional<std::string> ParseConsensus(
    const std::vector<std::string_view>& args, Consensus* out);

// `hedge METHOD|METHOD... [after=TIME] [max=N];`: a call of those methods
// that has no answer after TIME goes to another upstream too, up to N
// more times.
struct Hedge {
    static constexpr uint32_t kMaxHedges = 4;
    static constexpr uint32_t kMaxAfterMs = 60000;

    std::vector<std::string> methods;
    uint32_t after_ms = 100;
    uint32_t max = 1;
};

std::optional<std::string> ParseHedge(
    const std::vector<std::string_view>& args, Hedge* out);

}  // namespace solgate::conf
