// The admin endpoint (solgate_admin) as libcore answers it: GET .../state,
// POST .../cordon?upstream=ID&reason=TEXT, POST .../uncordon?upstream=ID
// (with network=NAME when there are several networks). The module hands
// over the URI, the method and the decoded query arguments; libcore picks
// the endpoint, checks the arguments, acts, and writes the answer and the
// line for the log.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/network.h"

namespace solgate {

struct AdminRequest {
    std::string_view uri;       // the request's path
    bool get = false;           // GET or HEAD
    bool post = false;
    std::optional<std::string_view> network;
    std::optional<std::string_view> upstream;
    std::optional<std::string_view> reason;
};

struct AdminAnswer {
    unsigned http_status = 200;
    std::string body;           // JSON
    std::string log;            // for the error log; "" when nothing to say
    int log_level = 6;          // its level, nginx's numbering (NOTICE)
    std::string_view allow;     // 405: the methods the endpoint takes
};

// {"ok":true|false,"message":"..."} for everything but the state document.
// A cordon, uncordon or drain of a network with `state` is saved to its
// state file before it is answered (store/operator_state.h); one that
// cannot be saved is in force in the zone, but answered 500 and logged at
// ERR, so that no 200 ever stands for a change a restart would lose.
AdminAnswer HandleAdmin(const std::vector<const Network*>& networks,
                        const AdminRequest& request, int64_t now_ms,
                        int64_t wall_ms);

}  // namespace solgate
