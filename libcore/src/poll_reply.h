// Reading the small JSON-RPC replies the poller gets (getHealth, getSlot,
// getMaxShredInsertSlot, getGenesisHash).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "transport.h"

namespace solgate {

// The reply's "result" when the call succeeded: no transport error, HTTP
// 200, valid JSON, a "result" member and no "error" member.
std::optional<uint64_t> ReplyU64(const HttpResult& reply);
std::optional<std::string> ReplyString(const HttpResult& reply);
// getHealth counts as healthy when there was no transport error and no
// JSON-RPC error.
bool ReplyHealthy(const HttpResult& reply);

std::string RequestBody(std::string_view method, std::string_view params = {});

}  // namespace solgate
