#include "rpc/solana_methods.h"

#include <cstring>


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

// Kept in byte order, so the list reads (and is extended) easily.
constexpr bool Sorted() {
    for (size_t i = 1; i < kNamed; i++) {
        if (!(kNames[i - 1] < kNames[i])) {
            return false;
        }
    }
    return true;
}
static_assert(Sorted(), "kNames must be in byte order");

// The names by length: nearly all start with "get", so a binary search
// spends its time in memcmp; by length, a call compares one or two names.
constexpr size_t kLongestName = 40;

struct ByLength {
    uint8_t begin[kLongestName + 2] = {};  // into order, per length
    uint8_t order[kNamed] = {};            // indices into kNames
};

constexpr ByLength IndexByLength() {
    ByLength t;
    for (size_t i = 0; i < kNamed; i++) {
        t.begin[kNames[i].size() + 1]++;
    }
    for (size_t len = 1; len <= kLongestName + 1; len++) {
        t.begin[len] = static_cast<uint8_t>(t.begin[len] + t.begin[len - 1]);
    }
    uint8_t next[kLongestName + 1] = {};
    for (size_t i = 0; i < kNamed; i++) {
        size_t len = kNames[i].size();
        t.order[t.begin[len] + next[len]++] = static_cast<uint8_t>(i);
    }
    return t;
}

constexpr bool NamesFit() {
    for (std::string_view name : kNames) {
        if (name.empty() || name.size() > kLongestName) {
            return false;
        }
    }
    return kNamed < 255;
}
static_assert(NamesFit(), "a name is empty or longer than kLongestName");

constexpr ByLength kByLength = IndexByLength();

// Whether the `len` bytes at a and b are the same (len >= 4, as every
// name is): in words of eight (or four), the last one overlapping the one
// before, loaded inline, where memcmp was a call for every request.
bool SameBytes(const char* a, const char* b, size_t len) {
    auto same = [a, b](size_t at, auto word) {
        decltype(word) x;
        decltype(word) y;
        std::memcpy(&x, a + at, sizeof(x));
        std::memcpy(&y, b + at, sizeof(y));
        return x == y;
    };
    if (len < 8) {
        return same(0, uint32_t{}) && same(len - 4, uint32_t{});
    }
    for (size_t at = 0; at + 8 < len; at += 8) {
        if (!same(at, uint64_t{})) {
            return false;
        }
    }
    return same(len - 8, uint64_t{});
}

constexpr bool NamesHaveFourBytes() {
    for (std::string_view name : kNames) {
        if (name.size() < 4) {
            return false;
        }
    }
    return true;
}
static_assert(NamesHaveFourBytes(), "SameBytes compares words of four");

// The latency classes other than kRead, by name (every one is in kNames).
constexpr std::string_view kWriteMethods[] = {"requestAirdrop",
                                              "sendTransaction"};
constexpr std::string_view kHeavyMethods[] = {
    "getBlock",           "getBlocks",           "getConfirmedBlock",
    "getLargestAccounts", "getMultipleAccounts", "getProgramAccounts",
    "getSignaturesForAddress", "getTokenAccountsByOwner"};

// The deprecated names agave 2.0 removed: a node of 2.0 or later answers
// them "method not found", rightly (the client must move to getBlock,
// getLatestBlockhash, getFeeForMessage, ...).
constexpr std::string_view kRemovedMethods[] = {
    "getConfirmedBlock",
    "getConfirmedBlocks",
    "getConfirmedBlocksWithLimit",
    "getConfirmedSignaturesForAddress2",
    "getConfirmedTransaction",
    "getFeeCalculatorForBlockhash",
    "getFeeRateGovernor",
    "getFees",
    "getRecentBlockhash",
    "getSnapshotSlot",
    "getStakeActivation"};

constexpr size_t NamedIndex(std::string_view name) {
    for (size_t i = 0; i < kNamed; i++) {
        if (kNames[i] == name) {
            return i;
        }
    }
    return kNamed;
}

// The class of each SolanaMethodIndex, so a request that has its method's
// index (Finish counts it by that) takes its class from a table, not from
// a dozen name compares. "batch" is heavy, "other" a read.
struct Classes {
    MethodClass of[kNamed + 2] = {};   // kRead
};

constexpr Classes ClassTable() {
    Classes t;
    for (std::string_view name : kHeavyMethods) {
        t.of[NamedIndex(name)] = MethodClass::kHeavy;
    }
    for (std::string_view name : kWriteMethods) {
        t.of[NamedIndex(name)] = MethodClass::kWrite;
    }
    t.of[kNamed + 1] = MethodClass::kHeavy;   // kBatchMethod
    return t;
}

struct Removed {
    bool is[kNamed + 2] = {};
};

constexpr Removed RemovedTable() {
    Removed t;
    for (std::string_view name : kRemovedMethods) {
        t.is[NamedIndex(name)] = true;
    }
    return t;
}

constexpr bool AllClassedNamesAreNamed() {
    for (std::string_view name : kHeavyMethods) {
        if (NamedIndex(name) == kNamed) {
            return false;
        }
    }
    for (std::string_view name : kWriteMethods) {
        if (NamedIndex(name) == kNamed) {
            return false;
        }
    }
    for (std::string_view name : kRemovedMethods) {
        if (NamedIndex(name) == kNamed) {
            return false;
        }
    }
    return true;
}
static_assert(AllClassedNamesAreNamed(),
              "a heavy, write or removed method is missing from kNames");

constexpr Classes kClasses = ClassTable();
constexpr Removed kRemoved = RemovedTable();

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
    size_t len = method.size();
    if (len >= 1 && len <= kLongestName) {
        for (size_t k = kByLength.begin[len]; k < kByLength.begin[len + 1];
             k++) {
            std::string_view name = kNames[kByLength.order[k]];
            if (name[len - 1] == method[len - 1] &&
                SameBytes(name.data(), method.data(), len)) {
                return kByLength.order[k];
            }
        }
    }
    return method == "batch" ? kBatchMethod : kOtherMethod;
}

bool IsRemovedMethodIndex(size_t index) {
    return index < kNamed && kRemoved.is[index];
}

MethodClass ClassOfMethod(std::string_view method) {
    return ClassOfMethodIndex(SolanaMethodIndex(method));
}

MethodClass ClassOfMethodIndex(size_t index) {
    return index < kNamed + 2 ? kClasses.of[index] : MethodClass::kRead;
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
