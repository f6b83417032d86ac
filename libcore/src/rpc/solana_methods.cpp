#include "rpc/solana_methods.h"

#include <algorithm>


namespace solgate {
namespace {

// The HTTP methods of agave's JSON-RPC API, in byte order (and the deprecated names
// clients still send), then the two labels of their own.
constexpr std::string_view kNames[] = {
    "getAccountInfo", "getBalance", "getBlock", "getBlockCommitment",
    "getBlockHeight", "getBlockProduction", "getBlockTime", "getBlocks",
    "getBlocksWithLimit", "getClusterNodes", "getConfirmedBlock",
    "getConfirmedBlocks", "getConfirmedBlocksWithLimit",
    "getConfirmedSignaturesForAddress2", "getConfirmedTransaction",
    "getEpochInfo", "getEpochSchedule", "getFeeCalculatorForBlockhash",
    "getFeeForMessage", "getFeeRateGovernor", "getFees",
    "getFirstAvailableBlock", "getGenesisHash", "getHealth",
    "getHighestSnapshotSlot", "getIdentity", "getInflationGovernor",
    "getInflationRate", "getInflationReward", "getLargestAccounts",
    "getLatestBlockhash", "getLeaderSchedule", "getMaxRetransmitSlot",
    "getMaxShredInsertSlot", "getMinimumBalanceForRentExemption",
    "getMultipleAccounts", "getProgramAccounts", "getRecentBlockhash",
    "getRecentPerformanceSamples", "getRecentPrioritizationFees",
    "getSignatureStatuses", "getSignaturesForAddress", "getSlot",
    "getSlotLeader", "getSlotLeaders", "getSnapshotSlot",
    "getStakeActivation", "getStakeMinimumDelegation", "getSupply",
    "getTokenAccountBalance", "getTokenAccountsByDelegate",
    "getTokenAccountsByOwner", "getTokenLargestAccounts", "getTokenSupply",
    "getTransaction", "getTransactionCount", "getVersion", "getVoteAccounts",
    "isBlockhashValid", "minimumLedgerSlot", "requestAirdrop",
    "sendTransaction", "simulateTransaction"};
constexpr size_t kNamed = sizeof(kNames) / sizeof(kNames[0]);

// SolanaMethodIndex searches the list by halves: it must stay sorted.
constexpr bool Sorted() {
    for (size_t i = 1; i < kNamed; i++) {
        if (!(kNames[i - 1] < kNames[i])) {
            return false;
        }
    }
    return true;
}
static_assert(Sorted(), "kNames must be in byte order");

}  // namespace

const size_t kOtherMethod = kNamed;
const size_t kBatchMethod = kNamed + 1;

size_t SolanaMethodCount() { return kNamed + 2; }

std::string_view SolanaMethodName(size_t index) {
    if (index < kNamed) {
        return kNames[index];
    }
    return index == kBatchMethod ? "batch" : "other";
}

size_t SolanaMethodIndex(std::string_view method) {
    const std::string_view* end = kNames + kNamed;
    const std::string_view* at = std::lower_bound(kNames, end, method);
    if (at != end && *at == method) {
        return static_cast<size_t>(at - kNames);
    }
    return method == "batch" ? kBatchMethod : kOtherMethod;
}

MethodClass ClassOfMethod(std::string_view method) {
    if (method == "sendTransaction" || method == "requestAirdrop") {
        return MethodClass::kWrite;
    }
    if (method == "getProgramAccounts" || method == "getBlock" ||
        method == "getConfirmedBlock" || method == "getBlocks" ||
        method == "getSignaturesForAddress" ||
        method == "getTokenAccountsByOwner" || method == "getLargestAccounts" ||
        method == "getMultipleAccounts" || method == "batch") {
        return MethodClass::kHeavy;
    }
    return MethodClass::kRead;
}

std::string_view MethodClassName(MethodClass c) {
    switch (c) {
    case MethodClass::kRead:
        return "read";
    case MethodClass::kHeavy:
        return "heavy";
    case MethodClass::kWrite:
        return "write";
    case MethodClass::kCount:
        break;
    }
    return "read";
}

}  // namespace solgate
