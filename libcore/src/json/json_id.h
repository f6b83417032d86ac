// A JSON string's value. A node writes the id of its answer anew (agave's
// serde_json: "a\/b" comes back as "a/b", "caf\u00e9" as "café"), so a
// batch's answers are matched to its calls by their ids' values when their
// bytes differ.
#pragma once

#include <string>
#include <string_view>

namespace solgate {

// The value of a JSON string literal (quotes included) in UTF-8, escapes
// decoded (a \u surrogate pair as one character); false when `literal` is
// no well-formed string (a lone surrogate escape included).
bool DecodeJsonString(std::string_view literal, std::string* value);

}  // namespace solgate
