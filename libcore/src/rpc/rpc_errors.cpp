#include "rpc/rpc_errors.h"

#include <cstdint>

namespace solgate {

RpcErrorClass ClassifyRpcError(int64_t code) {
    switch (code) {
    case -32001:   // block cleaned up (ledger pruned)
    case -32004:   // block not available for slot
    case -32008:   // no snapshot
    case -32010:   // transaction history not available (key excluded)
    case -32011:   // transaction history not available
    case -32014:   // block status not available yet
        return RpcErrorClass::kMissingData;
    case -32007:   // slot skipped, or missing due to ledger jump
    case -32009:   // slot skipped, or missing in long-term storage
        return RpcErrorClass::kSkippedSlot;
    case -32005:   // node unhealthy / behind
    case -32012:   // scan error
    case kMinContextSlotNotReached:
    case -32019:   // failed to query long-term storage
        return RpcErrorClass::kServerRetryable;
    case -32002:   // transaction simulation failed
    case -32003:   // transaction signature verification failure
    case -32006:   // transaction precompile verification failure
    case -32013:   // transaction signature length mismatch
    case -32015:   // unsupported transaction version
    case -32018:   // filter (e.g. getProgramAccounts) not allowed
    case -32602:   // invalid params
        return RpcErrorClass::kClient;
    default:
        return RpcErrorClass::kOther;
    }
}

bool IsClientMistake(int64_t code, bool node_must_have) {
    switch (code) {
    case -32600:   // invalid request
    case -32700:   // parse error
        return true;
    case -32601:   // method not found
        return !node_must_have;
    case kMinContextSlotNotReached:
        // the client's minContextSlot, past every node it was tried on
        return true;
    default:
        return ClassifyRpcError(code) == RpcErrorClass::kClient;
    }
}

bool MayLackData(std::string_view method) {
    static constexpr std::string_view kMethods[] = {
        "getBlock",         "getConfirmedBlock",
        "getBlockTime",     "getBlocks",
        "getBlocksWithLimit", "getConfirmedBlocks",
        "getConfirmedBlocksWithLimit", "getTransaction",
        "getConfirmedTransaction", "getSignaturesForAddress",
        "getConfirmedSignaturesForAddress2", "getProgramAccounts",
        "getTokenLargestAccounts", "getHighestSnapshotSlot",
    };
    // the lengths of those names, a bit each: most methods (every call of
    // a batch passes here) are told apart by their length alone
    constexpr uint64_t kLengths = [] {
        uint64_t bits = 0;
        for (std::string_view m : kMethods) {
            bits |= uint64_t{1} << m.size();
        }
        return bits;
    }();
    if (method.size() >= 64 || ((kLengths >> method.size()) & 1) == 0) {
        return false;
    }
    for (std::string_view m : kMethods) {
        if (m == method) {
            return true;
        }
    }
    return false;
}

}  // namespace solgate
