// The Solana JSON-RPC methods Solgate knows by name: metric labels take
// only these (anything else is "other"), and `nginx -t` warns on
// methods= names that are none of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace solgate {

// Index into SolanaMethodName: the named methods, then kOtherMethod and
// kBatchMethod ("batch" is what a whole batch counts as).
size_t SolanaMethodCount();
std::string_view SolanaMethodName(size_t index);
size_t SolanaMethodIndex(std::string_view method);  // kOtherMethod if unknown
extern const size_t kOtherMethod;   // label "other"
extern const size_t kBatchMethod;   // label "batch"

// A deprecated method agave 2.0 removed (getRecentBlockhash, getFees,
// getConfirmedBlock, ...): still a label, but a node may rightly not have it.
bool IsRemovedMethodIndex(size_t index);

// How long an answer may rightly take, for the latency histogram.
enum class MethodClass : uint8_t {
    kRead = 0,   // most calls
    kHeavy,      // getProgramAccounts, getBlock, getSignaturesForAddress, ...
    kWrite,      // sendTransaction, requestAirdrop
    kCount
};
MethodClass ClassOfMethod(std::string_view method);
// The same for a SolanaMethodIndex (kRead past the last one).
MethodClass ClassOfMethodIndex(size_t index);
std::string_view MethodClassName(MethodClass c);   // "read", "heavy", "write"

}  // namespace solgate
