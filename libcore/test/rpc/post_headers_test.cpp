// A JSON-RPC POST's Content-Encoding and Content-Type, judged before its
// body is read.
#include "rpc/post_headers.h"

#include <gtest/gtest.h>

#include <string>

namespace solgate {
namespace {

PostHeaders With(std::optional<std::string_view> encoding,
                 size_t content_types = 1) {
    PostHeaders headers;
    headers.content_encoding = encoding;
    headers.content_encodings = encoding ? 1 : 0;
    headers.content_types = content_types;
    return headers;
}

TEST(PostHeaders, ABodySentAsItIsGoesOn) {
    EXPECT_FALSE(JudgePostHeaders(With(std::nullopt)));
    EXPECT_FALSE(JudgePostHeaders(With(std::nullopt, 0)));
    EXPECT_FALSE(JudgePostHeaders(With("identity")));
    EXPECT_FALSE(JudgePostHeaders(With(" Identity\t")));
    EXPECT_FALSE(JudgePostHeaders(With("")));
}

TEST(PostHeaders, ACompressedBodyIs415) {
    for (std::string coding : {"gzip", "br", "deflate", "identity, gzip",
                               "identityx"}) {
        auto refusal = JudgePostHeaders(With(coding));
        ASSERT_TRUE(refusal) << coding;
        EXPECT_EQ(refusal->http_status, 415u);
        EXPECT_EQ(refusal->body,
                  "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32600,"
                  "\"message\":\"Invalid request: send the body "
                  "uncompressed (no Content-Encoding)\"},\"id\":null}");
    }
}

TEST(PostHeaders, TwoContentEncodingsAreAListOfCodings) {
    PostHeaders headers = With("identity");
    headers.content_encodings = 2;
    auto refusal = JudgePostHeaders(headers);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->http_status, 415u);
}

TEST(PostHeaders, TwoContentTypesAre400) {
    auto refusal = JudgePostHeaders(With(std::nullopt, 2));
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->http_status, 400u);
    EXPECT_NE(refusal->body.find("more than one Content-Type header"),
              std::string::npos);
}

}  // namespace
}  // namespace solgate
