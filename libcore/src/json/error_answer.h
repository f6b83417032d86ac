// The code of a JSON-RPC error answer ({"jsonrpc":"2.0","error":{"code":
// -32005,...},"id":1}), for failover on what a node says about itself.
// Read only for small answers that already look like errors, so it goes
// straight to yajl, the reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace solgate {

// The integer "code" of the "error" object of one JSON-RPC response
// object; nullopt for a result, a batch, a code that is no integer, or a
// body that is not valid JSON.
std::optional<int64_t> ParseErrorCode(std::string_view body);

}  // namespace solgate
