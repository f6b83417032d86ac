// solgate_shared_state and solgate_host_id: where a fleet's hosts share
// their state (a Redis server) and how this host names itself there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace solgate {

struct FleetConf {
    static constexpr uint32_t kDefaultTimeoutMs = 200;
    // well under the fleet lease's time, so a slow answer never leaves a
    // lease held by a host that does not poll
    static constexpr uint32_t kMaxTimeoutMs = 1000;

    std::string host;
    uint16_t port = 6379;
    std::string password;     // empty: no AUTH
    uint32_t db = 0;
    std::string prefix = "solgate:";
    uint32_t timeout_ms = kDefaultTimeoutMs;
    std::string host_id;      // solgate_host_id, else the host name

    // redis://HOST:PORT/DB, never the password (for logs and the state).
    std::string Describe() const;
};

// args: the words after `solgate_shared_state`
// (redis://[:PASSWORD@]HOST:PORT[/DB] [prefix=NAME] [timeout=TIME]).
// The error to report, or nullopt with *out set.
std::optional<std::string> ParseSharedState(
    const std::vector<std::string_view>& args, FleetConf* out);

// A host id: 1 to 64 of [A-Za-z0-9._-]. The error, or nullopt.
std::optional<std::string> CheckHostId(std::string_view id);

}  // namespace solgate
