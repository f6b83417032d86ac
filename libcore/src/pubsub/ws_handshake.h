// A client's WebSocket upgrade as RFC 6455 (4.2.1) has it, judged before
// it goes to a node: a malformed one is answered here, with a JSON-RPC
// error, never handed to a node that would answer it in its own words.
#pragma once

#include <optional>
#include <string_view>

namespace solgate {

struct WsHandshakeRefusal {
    unsigned http_status;    // 400 malformed; 426 another version than 13
    std::string_view body;   // the JSON-RPC error, id null (static memory)
};

// Each header's value, nullopt when absent. has_body: the upgrade carries
// a request body (Content-Length above 0, or chunked).
std::optional<WsHandshakeRefusal> JudgeWsHandshake(
    std::optional<std::string_view> connection,
    std::optional<std::string_view> key,
    std::optional<std::string_view> version, bool has_body);

}  // namespace solgate
