#include "pubsub/ws_handshake.h"

#include <string>

#include "base/header_text.h"
#include "rpc/answers.h"
#include "rpc/rpc_request.h"

namespace solgate {
namespace {

// "Connection: keep-alive, Upgrade": one of its comma-separated tokens.
bool HasUpgradeToken(std::string_view connection) {
    while (!connection.empty()) {
        size_t comma = connection.find(',');
        if (SameToken(TrimmedOws(connection.substr(0, comma)), "upgrade")) {
            return true;
        }
        if (comma == std::string_view::npos) {
            break;
        }
        connection.remove_prefix(comma + 1);
    }
    return false;
}

bool Base64Letter(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
           (c >= '0' && c <= '9') || c == '+' || c == '/';
}

// Sixteen bytes in base64: 22 letters and "==".
bool SixteenBytesKey(std::string_view key) {
    key = TrimmedOws(key);
    if (key.size() != 24 || key.substr(22) != "==") {
        return false;
    }
    for (char c : key.substr(0, 22)) {
        if (!Base64Letter(c)) {
            return false;
        }
    }
    return true;
}

enum Refused { kNoUpgradeToken, kBadKey, kOtherVersion, kWithBody };

std::string_view Refusal(Refused why) {
    static const std::string kBodies[] = {
        ErrorAnswer(kInvalidRequest,
                    "Invalid request: a WebSocket upgrade must say "
                    "\"Connection: Upgrade\""),
        ErrorAnswer(kInvalidRequest,
                    "Invalid request: a WebSocket upgrade needs a "
                    "Sec-WebSocket-Key of 16 bytes in base64 (RFC 6455)"),
        ErrorAnswer(kInvalidRequest,
                    "Invalid request: only WebSocket version 13 is served "
                    "(Sec-WebSocket-Version: 13)"),
        ErrorAnswer(kInvalidRequest,
                    "Invalid request: a WebSocket upgrade carries no body"),
    };
    return kBodies[why];
}

}  // namespace

std::optional<WsHandshakeRefusal> JudgeWsHandshake(
    std::optional<std::string_view> connection,
    std::optional<std::string_view> key,
    std::optional<std::string_view> version, bool has_body) {
    if (!connection || !HasUpgradeToken(*connection)) {
        return WsHandshakeRefusal{400, Refusal(kNoUpgradeToken)};
    }
    if (!version || TrimmedOws(*version) != "13") {
        return WsHandshakeRefusal{426, Refusal(kOtherVersion)};
    }
    if (!key || !SixteenBytesKey(*key)) {
        return WsHandshakeRefusal{400, Refusal(kBadKey)};
    }
    if (has_body) {
        return WsHandshakeRefusal{400, Refusal(kWithBody)};
    }
    return std::nullopt;
}

}  // namespace solgate
