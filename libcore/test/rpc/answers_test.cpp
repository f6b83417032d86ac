// The answers Solgate writes for HTTP error statuses and failed requests.
#include <gtest/gtest.h>

#include <string>

#include "rpc/answers.h"

namespace solgate {
namespace {

TEST(StatusAnswer, EachStatusClass) {
    EXPECT_EQ(StatusAnswer(413),
              R"({"jsonrpc":"2.0","error":{"code":-32600,"message":)"
              R"("Invalid request: body larger than client_max_body_size"},)"
              R"("id":null})");
    EXPECT_EQ(StatusAnswer(408),
              R"({"jsonrpc":"2.0","error":{"code":-32600,"message":)"
              R"("Invalid request: timed out reading the request body"},)"
              R"("id":null})");
    EXPECT_EQ(StatusAnswer(405),
              R"({"jsonrpc":"2.0","error":{"code":-32600,"message":)"
              R"("Invalid request: JSON-RPC requests must be sent with POST"},)"
              R"("id":null})");
    EXPECT_EQ(StatusAnswer(400),
              R"({"jsonrpc":"2.0","error":{"code":-32600,"message":)"
              R"("Invalid request"},"id":null})");
    EXPECT_EQ(StatusAnswer(499), StatusAnswer(400));
    EXPECT_EQ(StatusAnswer(500),
              R"({"jsonrpc":"2.0","error":{"code":-32603,"message":)"
              R"("Internal error"},"id":null})");
    EXPECT_EQ(StatusAnswer(504), StatusAnswer(500));
}

TEST(ErrorAnswer, IdNull) {
    EXPECT_EQ(ErrorAnswer(-32600, "Invalid request: \"x\""),
              R"({"jsonrpc":"2.0","error":{"code":-32600,"message":)"
              R"("Invalid request: \"x\""},"id":null})");
}

TEST(AllFailedAnswer, OneErrorPerCallOfABatch) {
    std::string body = R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"},)"
                       R"({"jsonrpc":"2.0","id":"b","method":"getSlot"}])";
    std::string out =
        AllFailedAnswer(ParseRpcRequest(body.data(), body.size()), 2);
    EXPECT_EQ(out.front(), '[');
    EXPECT_NE(out.find(R"("id":1})"), std::string::npos);
    EXPECT_NE(out.find(R"("id":"b"})"), std::string::npos);
    EXPECT_NE(out.find("(2 tried)"), std::string::npos);
    EXPECT_EQ(kAllFailedHttpStatus, 502u);
}

}  // namespace
}  // namespace solgate
