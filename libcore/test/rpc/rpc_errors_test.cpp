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

}  // namespace
}  // namespace solgate
