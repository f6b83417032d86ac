// What a JSON-RPC error code from a Solana node means for routing (eRPC's
// SVM taxonomy, agave's codes): whether another upstream may answer it.
#pragma once

#include <cstdint>
#include <string_view>

namespace solgate {

enum class RpcErrorClass : uint8_t {
    kOther = 0,      // not retried: the answer is the client's
    kMissingData,    // this node lacks the data; another may hold it
    kSkippedSlot,    // the slot may be skipped: one sweep, never a re-sweep
    kServerRetryable,  // the node cannot serve now (-32005 behind, ...)
    kClient,         // the request is wrong: never retried
};

// -32001 -32004 -32008 -32010 -32011 -32014: missing data; -32007 -32009:
// skipped slot; -32005 -32012 -32016 -32019: server side, retryable;
// -32002 -32003 -32006 -32013 -32015 -32018 -32602: client errors.
RpcErrorClass ClassifyRpcError(int64_t code);

// An error answer that says the client's request was wrong, not the node:
// kClient (invalid params, a transaction that fails simulation, ...), an
// invalid request or body (-32600, -32700), a minContextSlot no node it
// was tried on had reached (-32016), or "method not found" (-32601)
// for a method a current Solana node need not have (`node_must_have`
// false: unknown, or removed from agave); a node that lacks one of its
// methods (a full-API method without --full-rpc-api) fails every client.
bool IsClientMistake(int64_t code, bool node_must_have);

// The node's answer to a call whose minContextSlot it has not reached.
constexpr int64_t kMinContextSlotNotReached = -32016;

// Methods a healthy node may answer with missing data or a skipped slot
// (ledger history by slot or signature, secondary indexes): in a batch
// each goes to upstreams alone, so that retry_missing_data can ask another.
bool MayLackData(std::string_view method);

}  // namespace solgate
