#include "json/error_answer.h"

#include <gtest/gtest.h>

#include <string>

#include "solgate/solgate.h"

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

// A long answer's first bytes (a failed simulation's logs run on): the
// code as agave writes it, first; any other layout is not guessed at.
TEST(ErrorAnswer, TheCodeAtTheStartOfALongAnswer) {
    std::string head = R"({"jsonrpc":"2.0","error":{"code":-32002,)"
                       R"("message":"Transaction simulation failed",)"
                       R"("data":{"logs":["Program 11111111 invoke [1]",)";
    EXPECT_FALSE(ParseErrorCode(head)) << "cut short";
    EXPECT_EQ(LeadingErrorCode(head), -32002);
    EXPECT_EQ(LeadingErrorCode(R"({"jsonrpc":"2.0","error":{"code":7})"), 7);
    EXPECT_FALSE(LeadingErrorCode(R"({"jsonrpc":"2.0","error":{"code":-32)"));
    EXPECT_FALSE(LeadingErrorCode(R"({"jsonrpc":"2.0","error":{"code":-3.5,)"));
    EXPECT_FALSE(LeadingErrorCode(R"({"jsonrpc":"2.0","error":{"code":"-1",)"));
    EXPECT_FALSE(LeadingErrorCode(R"({"id":1,"error":{"code":-32002,)"));
    EXPECT_FALSE(LeadingErrorCode(R"({"jsonrpc":"2.0","result":{"code":1,)"));
    EXPECT_FALSE(LeadingErrorCode(""));
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

namespace solgate {
namespace {

TEST(ErrorAnswer, TheMessageAsAReasonPhrase) {
    EXPECT_EQ(ParseErrorMessage(
                  R"({"jsonrpc":"2.0","error":{"code":-32003,"message":"Unauthorized: getBlock needs an API key"},"id":1})"),
              "Unauthorized: getBlock needs an API key");
    EXPECT_EQ(ParseErrorMessage(R"({"jsonrpc":"2.0","result":1,"id":1})"),
              std::nullopt);
    EXPECT_EQ(ParseErrorMessage(R"([{"jsonrpc":"2.0","error":{"code":1,"message":"x"},"id":1}])"),
              std::nullopt);
    EXPECT_EQ(ParseErrorMessage(R"({"error":{"message":"a\r\nb\u00e9"}})"),
              "a\r\nb\xc3\xa9");
    EXPECT_EQ(ReasonPhrase("a\r\nb\xc3\xa9"), "a??b??");
    std::string long_message(500, 'x');
    std::string cut = ReasonPhrase(long_message);
    EXPECT_EQ(cut.size(), kMaxReasonPhrase);
    EXPECT_EQ(cut.substr(cut.size() - 3), "...");

    char out[SG_MAX_REASON_PHRASE];
    const char answer[] = R"({"jsonrpc":"2.0","error":{"code":-32019,"message":"Rate limit"},"id":1})";
    size_t n = sg_error_reason(answer, sizeof(answer) - 1, out, sizeof(out));
    EXPECT_EQ(std::string(out, n), "Rate limit");
    EXPECT_EQ(sg_error_reason("{}", 2, out, sizeof(out)), 0u);
}

TEST(ErrorAnswer, ABatchsReasonIsItsFirstError) {
    EXPECT_EQ(ParseBatchErrorMessage(
                  R"([{"jsonrpc":"2.0","result":"x","id":1},)"
                  R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"first","data":{"message":"no"}},"id":2},)"
                  R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"second"},"id":3}])"),
              "first");
    EXPECT_EQ(ParseBatchErrorMessage(R"([{"jsonrpc":"2.0","result":{"message":"no"},"id":1}])"),
              std::nullopt);
    EXPECT_EQ(ParseBatchErrorMessage(R"({"jsonrpc":"2.0","error":{"code":1,"message":"x"},"id":1})"),
              std::nullopt);   // one answer, no batch
    EXPECT_EQ(ParseBatchErrorMessage("[1,"), std::nullopt);
    char out[SG_MAX_REASON_PHRASE];
    const char batch[] = R"([{"jsonrpc":"2.0","error":{"code":-32603,"message":"all failed"},"id":1}])";
    size_t n = sg_error_reason(batch, sizeof(batch) - 1, out, sizeof(out));
    EXPECT_EQ(std::string(out, n), "all failed");
}

}  // namespace
}  // namespace solgate
