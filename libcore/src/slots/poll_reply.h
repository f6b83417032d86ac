// Reading the small JSON-RPC replies the poller gets (getHealth, getSlot,
// getMaxShredInsertSlot, getGenesisHash).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/transport.h"

namespace solgate {

// The reply's "result" when the call succeeded: no transport error, HTTP
// 200, valid JSON, a "result" member and no "error" member.
std::optional<uint64_t> ReplyU64(const HttpResult& reply);
std::optional<std::string> ReplyString(const HttpResult& reply);
// getHealth counts as healthy when there was no transport error and no
// JSON-RPC error.
bool ReplyHealthy(const HttpResult& reply);

std::string RequestBody(std::string_view method, std::string_view params = {});

// The start of a body (160 bytes), printable, for the log: control bytes
// as spaces, a run of spaces as one.
std::string Excerpt(const std::string& body);

// Why a reply is not an answer at all, for the log ("" when it is HTTP
// 200): a TLS failure as "TLS: ..." (base/tls_failure.h), the transport
// error, or the status and the start of the body.
std::string HttpFailure(const HttpResult& reply);

}  // namespace solgate
