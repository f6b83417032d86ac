#include "json/error_answer.h"

#include <gtest/gtest.h>

namespace solgate {
namespace {

TEST(ErrorAnswer, TheCodeOfOneErrorAnswer) {
    EXPECT_EQ(ParseErrorCode(R"({"jsonrpc":"2.0","error":{"code":-32005,)"
                             R"("message":"Node is behind by 80 slots",)"
                             R"("data":{"numSlotsBehind":80}},"id":1})"),
              -32005);
    // members in any order, escapes in the message
    EXPECT_EQ(ParseErrorCode(R"({"id":"x","error":{"message":"a\"b",)"
                             R"("data":{"code":1},"code":-32004},)"
                             R"("jsonrpc":"2.0"})"),
              -32004);
}

TEST(ErrorAnswer, AnythingElseHasNoCode) {
    EXPECT_FALSE(ParseErrorCode(R"({"jsonrpc":"2.0","result":1,"id":1})"));
    EXPECT_FALSE(ParseErrorCode(R"([{"jsonrpc":"2.0","error":{"code":-32005}}])"));
    EXPECT_FALSE(ParseErrorCode(R"({"error":{"code":-32005.5}})"));
    EXPECT_FALSE(ParseErrorCode(R"({"error":{"code":"-32005"}})"));
    EXPECT_FALSE(ParseErrorCode(R"({"error":{"code":-32005})"));  // cut short
    EXPECT_FALSE(ParseErrorCode(R"({"result":{"code":-32005}})"));
    EXPECT_FALSE(ParseErrorCode(""));
}

}  // namespace
}  // namespace solgate
