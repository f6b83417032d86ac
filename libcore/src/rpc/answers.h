// The answers Solgate writes itself rather than an upstream: the JSON-RPC
// error for an HTTP error status nginx answers (a body too large, a slow
// client, a method other than POST), and the answer when every upstream
// failed. Local answers to calls (getGenesisHash, the getBlock guard, bad
// params) are the router's (routing/router.h).
#pragma once

#include <string>
#include <string_view>

#include "rpc/rpc_request.h"

namespace solgate {

// {"jsonrpc":"2.0","error":{...},"id":null} for an HTTP error status: 413,
// 408 and 405 say what went wrong, other 4xx are -32600 Invalid request,
// 5xx -32603 Internal error. Static storage (built on the first call).
std::string_view StatusAnswer(unsigned http_status);

// {"jsonrpc":"2.0","error":{"code":code,"message":message},"id":null}: an
// error about the request as a whole, whose id is not read.
std::string ErrorAnswer(int code, std::string_view message);

// `code` and `message` for every call of the request (an array for a
// batch), each with its own id.
std::string FailRequest(const RpcRequest& request, int code,
                        std::string_view message);

// The answer (HTTP 502) when `attempts` upstreams were tried and none
// could serve the request.
std::string AllFailedAnswer(const RpcRequest& request, size_t attempts);
std::string AllFailedMessage(size_t attempts);
constexpr unsigned kAllFailedHttpStatus = 502;
// nginx's status of a request whose client closed the connection first.
constexpr unsigned kClientClosedStatus = 499;

// Whether an upstream's answer, from its first bytes, is a JSON-RPC error
// (an "error" member before any "result"); a batch's array is not.
bool LooksLikeRpcError(std::string_view first_bytes);

// The answer (HTTP 502) when a write (sendTransaction, requestAirdrop)
// failed after it may have reached the upstream: retrying it elsewhere
// could send it twice, so the client decides.
std::string WriteNotRetriedAnswer(const RpcRequest& request,
                                  std::string_view upstream_cause);
std::string WriteNotRetriedMessage(std::string_view upstream_cause);

}  // namespace solgate
