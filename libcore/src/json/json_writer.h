// Writers for the JSON-RPC 2.0 envelopes Solgate answers with. The field
// order matches what Solana validators emit ({"jsonrpc","result"|"error",
// "id"}), so a local answer is indistinguishable from an upstream's.
#pragma once

#include <string>
#include <string_view>

namespace solgate {

// Appends `value` as a JSON string literal, quotes included.
void AppendJsonString(std::string& out, std::string_view value);

// `id_raw` and `result_raw` are JSON texts written as they are; an empty
// id_raw is written as null.
void AppendResultEnvelope(std::string& out, std::string_view id_raw,
                          std::string_view result_raw);

// `data_raw` is a JSON text, omitted when empty.
void AppendErrorEnvelope(std::string& out, std::string_view id_raw, int code,
                         std::string_view message,
                         std::string_view data_raw = {});

}  // namespace solgate
