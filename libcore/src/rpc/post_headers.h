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

struct PostHeaders {
    std::optional<std::string_view> content_encoding;  // the first's value
    size_t content_encodings = 0;   // how many Content-Encoding headers
    size_t content_types = 0;       // how many Content-Type headers
};

std::optional<PostRefusal> JudgePostHeaders(const PostHeaders& headers);

}  // namespace solgate
