// A JSON-RPC POST's Content-Encoding and Content-Type, judged before its
// body is read.
#include "rpc/post_headers.h"

#include <gtest/gtest.h>

#include <string>

namespace solgate {
namespace {

TEST(PostHeaders, ABodySentAsItIsGoesOn) {
    EXPECT_FALSE(JudgePostHeaders(std::nullopt, 1));
    EXPECT_FALSE(JudgePostHeaders(std::nullopt, 0));
    EXPECT_FALSE(JudgePostHeaders("identity", 1));
    EXPECT_FALSE(JudgePostHeaders(" Identity\t", 1));
    EXPECT_FALSE(JudgePostHeaders("", 1));
}

TEST(PostHeaders, ACompressedBodyIs415) {
    for (std::string coding : {"gzip", "br", "deflate", "identity, gzip",
                               "identityx"}) {
        auto refusal = JudgePostHeaders(coding, 1);
        ASSERT_TRUE(refusal) << coding;
        EXPECT_EQ(refusal->http_status, 415u);
        EXPECT_EQ(refusal->body,
                  "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,"
                  "\"message\":\"Invalid request: send the body "
                  "uncompressed (no Content-Encoding)\"},\"id\":null}");
    }
}

TEST(PostHeaders, TwoContentTypesAre400) {
    auto refusal = JudgePostHeaders(std::nullopt, 2);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->http_status, 400u);
    EXPECT_NE(refusal->body.find("more than one Content-Type header"),
              std::string::npos);
}

}  // namespace
}  // namespace solgate
