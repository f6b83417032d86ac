// What Solgate reads from a JSON-RPC request body: enough to route it and
// to answer it locally, never the whole params tree.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rpc/cluster.h"

namespace solgate {

// JSON-RPC error codes Solgate answers with.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
// Solana's "node is unhealthy".
constexpr int kNodeUnhealthy = -32005;
// Solana's "block not available": the node has not indexed the slot yet.
constexpr int kBlockNotAvailable = -32004;
// Solgate's: a consensus found too few matching answers (a server error,
// in the range JSON-RPC leaves to implementations).
constexpr int kConsensusDispute = -32090;
// Solgate's: a network holds ws_max_connections subscription connections.
constexpr int kWsConnectionsFull = -32091;

struct RpcError {
    int code = 0;
    std::string message;

    explicit operator bool() const { return code != 0; }
};

// getBlock's options (params[1], an object or the legacy encoding string),
// as written; they choose the response body, so they key the block cache.
struct BlockOptions {
    bool seen = false;          // params[1] is present
    bool readable = true;       // an object of scalars, or a string
    bool unknown_option = false;
    std::string encoding;       // empty: the default
    std::string transaction_details;
    std::optional<bool> rewards;
    std::string max_version;    // raw number text; empty when absent
};

struct RpcCall {
    // The id exactly as the client wrote it (number, string with its
    // escapes, or null); empty when absent or not a valid id type, in which
    // case answers carry null.
    std::string id_raw;
    std::string method;
    std::optional<sg_commitment_t> commitment;
    std::optional<uint64_t> min_context_slot;
    // params[0] when it is a non-negative integer (getBlock's slot).
    std::optional<uint64_t> first_param_u64;
    bool has_params = false;
    bool first_param_seen = false;
    BlockOptions block_options;
    // A batch element's text in the body, [begin, end) (its object),
    // so a part of a batch can be forwarded as the client wrote it.
    size_t span_begin = 0;
    size_t span_end = 0;
    // The call is malformed: answer it with this error, never forward it.
    RpcError error;
};

// sendTransaction and requestAirdrop: a second attempt could act twice.
inline bool IsWriteMethod(std::string_view method) {
    return method == "sendTransaction" || method == "requestAirdrop";
}

// A call without id: JSON-RPC answers none, not even an error (invalid
// params); only an invalid request object is answered, with a null id.
inline bool IsNotification(const RpcCall& call) {
    return call.id_raw.empty() &&
           call.error.code != kInvalidRequest;
}

struct RpcRequest {
    // kSubscription: a WebSocket upgrade, no calls: it goes whole to an
    // upstream with a pubsub endpoint (ws=), whatever it subscribes to.
    enum class Shape { kUnreadable, kSingle, kBatch, kSubscription };

    Shape shape = Shape::kUnreadable;
    // Set when the body as a whole is not a request (code -32700/-32600).
    RpcError error;
    std::vector<RpcCall> calls;
    // A batch's body as the client sent it (the calls' spans point into
    // it), so the calls that go upstream can be sent as they were written.
    // A view of the parsed text: valid while the caller keeps that text
    // (the nginx request body, until routing is decided).
    std::string_view batch_text;

    // A single call that is a notification.
    bool IsNotification() const {
        return shape == Shape::kSingle && calls.size() == 1 &&
               solgate::IsNotification(calls[0]);
    }

    bool HasWrite() const {
        for (const RpcCall& call : calls) {
            if (IsWriteMethod(call.method)) {
                return true;
            }
        }
        return false;
    }
};

// Nesting deeper than this is refused before yajl's stack or ours grows
// without bound; real Solana params nest a handful of levels.
constexpr size_t kMaxNestingDepth = 64;

// `room`: an earlier request's calls, whose capacity the new calls take
// (their content is dropped), so a warm thread allocates none.
RpcRequest ParseRpcRequest(const char* body, size_t len,
                           std::vector<RpcCall> room = {});
// The same into `request`, whose content is dropped and whose calls'
// storage is reused.
void ParseRpcRequestInto(const char* body, size_t len, RpcRequest& request);
// Makes `request` as RpcRequest{} is, keeping its calls' storage. Every
// member of RpcRequest is reset here. Inline: once per request, twice
// for a request kept whole (RoutedRequest::Clear, then the parse).
inline void ResetRequest(RpcRequest& request) {
    request.shape = RpcRequest::Shape::kUnreadable;
    request.error = RpcError{};
    request.calls.clear();
    request.batch_text = {};
}
// The same through yajl alone (the reference the plain lexer is checked
// against in tests).
RpcRequest ParseRpcRequestWithYajl(const char* body, size_t len);

}  // namespace solgate
