// The headers of a JSON-RPC POST that say how to read its body, judged
// before the body is read: Solgate reads the bytes as sent (no
// Content-Encoding, or identity) and sends them to nodes under one
// Content-Type, which it sets itself.  Anything else is answered here with
// a JSON-RPC error, never handed to a node that would read it otherwise.
#pragma once

#include <optional>
#include <string_view>

namespace solgate {

struct PostRefusal {
    unsigned http_status;    // 415 a compressed body; 400 malformed
    std::string_view body;   // the JSON-RPC error, id null (static memory)
};

// content_encoding: the header's value, nullopt when absent.
// content_types: how many Content-Type headers the request has.
std::optional<PostRefusal> JudgePostHeaders(
    std::optional<std::string_view> content_encoding, size_t content_types);

}  // namespace solgate
