// The code of a JSON-RPC error answer ({"jsonrpc":"2.0","error":{"code":
// -32005,...},"id":1}), for failover on what a node says about itself.
// Read only for small answers that already look like errors, so it goes
// straight to yajl, the reference.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace solgate {

// The integer "code" of the "error" object of one JSON-RPC response
// object; nullopt for a result, a batch, a code that is no integer, or a
// body that is not valid JSON.
std::optional<int64_t> ParseErrorCode(std::string_view body);

// The same from the first bytes of a longer answer (a failed simulation's
// logs run for kilobytes), when they are laid out as agave writes them:
// {"jsonrpc":"2.0","error":{"code":N, ... ; nullopt otherwise.
std::optional<int64_t> LeadingErrorCode(std::string_view first_bytes);

// The "message" of the "error" object of one JSON-RPC response object,
// decoded; nullopt as for ParseErrorCode, or when it has no string message.
std::optional<std::string> ParseErrorMessage(std::string_view body);
// The same of a batch's answer (an array): the first element's that has an
// error.
std::optional<std::string> ParseBatchErrorMessage(std::string_view body);

// A message as an HTTP status line's reason phrase: printable ASCII (any
// other byte '?'), at most kMaxReasonPhrase bytes (cut with "...").
// Clients that show only the status line (@solana/kit: "HTTP error (429):
// <reason>") then show why.
constexpr size_t kMaxReasonPhrase = 160;
std::string ReasonPhrase(std::string_view message);

}  // namespace solgate
