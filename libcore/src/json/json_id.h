// Whether two JSON-RPC ids, each as written, are the same value. A node
// writes the id of its answer anew (agave's serde_json: "a\/b" comes back
// as "a/b", "caf\u00e9" as "café"), so a batch's answers cannot always be
// matched to its calls byte for byte.
#pragma once

#include <string>
#include <string_view>

namespace solgate {

// The value of a JSON string literal (quotes included) in UTF-8, escapes
// decoded (a \u surrogate pair as one character); false when `literal` is
// no well-formed string (a lone surrogate escape included).
bool DecodeJsonString(std::string_view literal, std::string* value);

// The same bytes, or two strings of the same value. Numbers and null are
// compared as written.
bool SameJsonId(std::string_view a, std::string_view b);

}  // namespace solgate
