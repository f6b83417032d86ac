#include "rpc/rpc_errors.h"

#include <gtest/gtest.h>

namespace solgate {
namespace {

// The methods whose answer a node that has not caught up may lack: each
// named, and nothing else (most are told apart by their length first).
TEST(MayLackData, NamesTheMethodsANodeBehindMayLack) {
    for (const char* method :
         {"getBlock", "getConfirmedBlock", "getBlockTime", "getBlocks",
          "getBlocksWithLimit", "getConfirmedBlocks",
          "getConfirmedBlocksWithLimit", "getTransaction",
          "getConfirmedTransaction", "getSignaturesForAddress",
          "getConfirmedSignaturesForAddress2", "getProgramAccounts",
          "getTokenLargestAccounts", "getHighestSnapshotSlot"}) {
        EXPECT_TRUE(MayLackData(method)) << method;
    }
    for (const char* method :
         {"", "getSlot", "getBalance", "getBlockHeight", "getblock",
          "getBlocksX", "getTokenLargestAccountz", "sendTransaction"}) {
        EXPECT_FALSE(MayLackData(method)) << method;
    }
    EXPECT_FALSE(MayLackData(std::string(70, 'g')));
}

TEST(IsClientMistake, TheRequestsFaultNotTheNodes) {
    for (int64_t code : {-32600, -32700, -32602, -32002, -32003, -32015,
                         -32016}) {
        EXPECT_TRUE(IsClientMistake(code, true)) << code;
    }
    // "method not found": a stranger's method is the client's mistake, a
    // Solana method the node lacks is the node's
    EXPECT_TRUE(IsClientMistake(-32601, false));
    EXPECT_FALSE(IsClientMistake(-32601, true));
    for (int64_t code : {-32005, -32004, -32007, -32603, -32000, 0, 1}) {
        EXPECT_FALSE(IsClientMistake(code, false)) << code;
    }
}

}  // namespace
}  // namespace solgate
