// What an answer votes for: the same for answers that mean the same.
#include <gtest/gtest.h>

#include "json/consensus_vote.h"

namespace solgate {
namespace {

TEST(ConsensusVote, KeysSortedAndFormattingIgnored) {
    auto a = ConsensusVote(
        R"({"jsonrpc":"2.0","result":{"b":1,"a":[true,null,"x"]},"id":1})");
    auto b = ConsensusVote(
        "{ \"id\" : 7, \"result\" : { \"a\" : [ true , null , \"\\u0078\" ] ,"
        " \"b\" : 1 }, \"jsonrpc\" : \"2.0\" }");
    ASSERT_TRUE(a);
    EXPECT_EQ(*a, *b);
    EXPECT_EQ(*a, R"(r:{"a":[true,null,"x"],"b":1})");
}

TEST(ConsensusVote, AnEnvelopesSlotAndApiVersionDoNotCount) {
    auto a = ConsensusVote(
        R"({"jsonrpc":"2.0","result":{"context":{"slot":100,"apiVersion":"2.0.1"},"value":5},"id":1})");
    auto b = ConsensusVote(
        R"({"jsonrpc":"2.0","result":{"context":{"apiVersion":"1.18.0","slot":98},"value":5},"id":1})");
    auto c = ConsensusVote(
        R"({"jsonrpc":"2.0","result":{"context":{"slot":100},"value":6},"id":1})");
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(*a, *b);
    EXPECT_NE(*a, *c);
    // a result that only looks like one keeps its slot
    auto d = ConsensusVote(R"({"jsonrpc":"2.0","result":{"slot":1},"id":1})");
    auto e = ConsensusVote(R"({"jsonrpc":"2.0","result":{"slot":2},"id":1})");
    EXPECT_NE(*d, *e);
}

TEST(ConsensusVote, AnErrorVotesAsItsCode) {
    auto a = ConsensusVote(
        R"({"jsonrpc":"2.0","error":{"code":-32004,"message":"Block not available for slot 5"},"id":1})");
    auto b = ConsensusVote(
        R"({"jsonrpc":"2.0","error":{"code":-32004,"message":"other words","data":{}},"id":2})");
    ASSERT_TRUE(a);
    EXPECT_EQ(*a, "e:-32004");
    EXPECT_EQ(*a, *b);
}

TEST(ConsensusVote, WhatIsNoResponseDoesNotVote) {
    EXPECT_FALSE(ConsensusVote(""));
    EXPECT_FALSE(ConsensusVote("<html>502</html>"));
    EXPECT_FALSE(ConsensusVote(R"([{"jsonrpc":"2.0","result":1,"id":1}])"));
    EXPECT_FALSE(ConsensusVote(R"({"jsonrpc":"2.0","id":1})"));
    EXPECT_FALSE(ConsensusVote(R"({"jsonrpc":"2.0","error":{"message":"x"},"id":1})"));
    EXPECT_FALSE(ConsensusVote(R"({"jsonrpc":"2.0","result":1,"id":1)"));
    // a key twice: readers keep the first or the last one
    EXPECT_FALSE(ConsensusVote(R"({"jsonrpc":"2.0","result":1,"result":2,"id":1})"));
    EXPECT_FALSE(ConsensusVote(
        R"({"jsonrpc":"2.0","result":{"context":{"slot":1},"value":{"a":1,"a":2}},"id":1})"));
}

}  // namespace
}  // namespace solgate
