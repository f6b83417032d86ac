// Reading the poller's small JSON-RPC replies, and what the log says when
// one is not an answer.
#include <gtest/gtest.h>

#include <string>

#include "slots/poll_reply.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::Error;
using testing::Result;

HttpResult Reply(const std::string& body, long status = 200) {
    HttpResult reply;
    reply.http_status = status;
    reply.body = body;
    return reply;
}

HttpResult TransportError(int code, const std::string& text) {
    HttpResult reply;
    reply.transport_error = code;
    reply.error_text = text;
    return reply;
}

TEST(ReplyU64, ReadsANonNegativeIntegerResult) {
    EXPECT_EQ(ReplyU64(Reply(Result("0"))), 0u);
    EXPECT_EQ(ReplyU64(Reply(Result("312345678"))), 312345678u);
    EXPECT_EQ(ReplyU64(Reply(Result("9223372036854775807"))),
              9223372036854775807u);
    // Member order and whitespace do not matter.
    EXPECT_EQ(ReplyU64(Reply(R"( {"id":1, "result" : 42 ,"jsonrpc":"2.0"} )")),
              42u);
}

TEST(ReplyU64, RefusesWhatIsNotAnInteger) {
    for (const char* raw : {"-1", "1.5", "1e3", "\"42\"", "null", "true",
                            "[42]", "{\"slot\":42}"}) {
        EXPECT_FALSE(ReplyU64(Reply(Result(raw)))) << raw;
    }
}

TEST(ReplyU64, RefusesNumbersPastInt64) {
    EXPECT_FALSE(ReplyU64(Reply(Result("9223372036854775808"))));
    EXPECT_FALSE(ReplyU64(Reply(Result("18446744073709551616"))));
}

TEST(ReplyU64, RefusesErrorsAndAnythingButHttp200) {
    EXPECT_FALSE(ReplyU64(Reply(Error(-32005))));
    // An "error" member wins over a "result" next to it.
    EXPECT_FALSE(ReplyU64(Reply(
        R"({"jsonrpc":"2.0","result":5,"error":{"code":1},"id":1})")));
    EXPECT_FALSE(ReplyU64(Reply(Result("5"), 500)));
    EXPECT_FALSE(ReplyU64(Reply(Result("5"), 201)));
    EXPECT_FALSE(ReplyU64(TransportError(7, "connection refused")));
    HttpResult both = Reply(Result("5"));
    both.transport_error = 28;
    EXPECT_FALSE(ReplyU64(both));
}

TEST(ReplyU64, RefusesMalformedReplies) {
    for (const char* body : {"", "not json", R"({"result":5)", "[1,2]", "5",
                             R"({"jsonrpc":"2.0","id":1})",
                             R"([{"jsonrpc":"2.0","result":5,"id":1}])"}) {
        EXPECT_FALSE(ReplyU64(Reply(body))) << body;
    }
}

TEST(ReplyString, ReadsAStringResult) {
    EXPECT_EQ(ReplyString(Reply(Result(
                  "\"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d\""))),
              "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d");
    EXPECT_EQ(ReplyString(Reply(Result("\"\""))), "");
    EXPECT_EQ(ReplyString(Reply(Result(R"("a\"b\u0041")"))), "a\"bA");
}

TEST(ReplyString, RefusesOtherResultsErrorsAndFailures) {
    EXPECT_FALSE(ReplyString(Reply(Result("42"))));
    EXPECT_FALSE(ReplyString(Reply(Result("null"))));
    EXPECT_FALSE(ReplyString(Reply(Error(-32601))));
    EXPECT_FALSE(ReplyString(Reply(Result("\"x\""), 404)));
    EXPECT_FALSE(ReplyString(TransportError(6, "could not resolve")));
    EXPECT_FALSE(ReplyString(Reply(R"({"result":"x")")));
}

TEST(ReplyHealthy, AResultOfAnyKindWithoutAnError) {
    EXPECT_TRUE(ReplyHealthy(Reply(Result("\"ok\""))));
    EXPECT_TRUE(ReplyHealthy(Reply(Result("null"))));
    EXPECT_FALSE(ReplyHealthy(Reply(
        R"({"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is )"
        R"(behind by 42 slots"},"id":1})")));
    EXPECT_FALSE(ReplyHealthy(Reply(R"({"jsonrpc":"2.0","id":1})")));
    EXPECT_FALSE(ReplyHealthy(Reply("garbage")));
    EXPECT_FALSE(ReplyHealthy(TransportError(28, "timed out")));
    // Read as implemented: a non-200 status is unhealthy even with a result.
    EXPECT_FALSE(ReplyHealthy(Reply(Result("\"ok\""), 503)));
}

TEST(RequestBody, MethodAndOptionalParams) {
    EXPECT_EQ(RequestBody("getHealth"),
              R"({"jsonrpc":"2.0","id":1,"method":"getHealth"})");
    EXPECT_EQ(RequestBody("getSlot", R"([{"commitment":"processed"}])"),
              R"({"jsonrpc":"2.0","id":1,"method":"getSlot",)"
              R"("params":[{"commitment":"processed"}]})");
    // What the poller sends reads back as a call of that method.
    EXPECT_NE(RequestBody("getMaxShredInsertSlot").find(
                  "\"method\":\"getMaxShredInsertSlot\""),
              std::string::npos);
}

TEST(Excerpt, AtMost160PrintableBytes) {
    EXPECT_EQ(Excerpt(""), "");
    EXPECT_EQ(Excerpt("short body"), "short body");
    EXPECT_EQ(Excerpt(std::string(200, 'a')), std::string(160, 'a'));
    EXPECT_EQ(Excerpt("line one\nline\ttwo\r\x01"), "line one line two");
    EXPECT_EQ(Excerpt("\n  502 Bad Gateway (simulated)\n"),
              "502 Bad Gateway (simulated)");
    // an error page's indentation takes no room
    EXPECT_EQ(Excerpt("<html>\n    <head>\n        <title>501"),
              "<html> <head> <title>501");
    // Bytes at or above 0x20 stay, UTF-8 included.
    EXPECT_EQ(Excerpt("caf\xc3\xa9 ~"), "caf\xc3\xa9 ~");
}

TEST(HttpFailure, TransportErrorsThenStatusesThenNothing) {
    EXPECT_EQ(HttpFailure(TransportError(7, "Failed to connect")),
              "transport error 7: Failed to connect");
    HttpResult late = TransportError(28, "Operation timed out");
    late.http_status = 200;
    EXPECT_EQ(HttpFailure(late), "transport error 28: Operation timed out");
    EXPECT_EQ(HttpFailure(Reply("<html>Bad Gateway</html>\n", 502)),
              "HTTP 502: <html>Bad Gateway</html>");
    EXPECT_EQ(HttpFailure(Reply(std::string(300, 'z'), 429)),
              "HTTP 429: " + std::string(160, 'z'));
    EXPECT_EQ(HttpFailure(Reply("", 0)), "HTTP 0");
    EXPECT_EQ(HttpFailure(Reply(" \n", 502)), "HTTP 502");
    // HTTP 200 is an answer, even a JSON-RPC error or malformed JSON.
    EXPECT_EQ(HttpFailure(Reply(Error(-32005))), "");
    EXPECT_EQ(HttpFailure(Reply("not json")), "");
}

TEST(HttpFailure, TlsFailuresAreNamedSo) {
    EXPECT_EQ(HttpFailure(TransportError(
                  60, "SSL certificate problem: self-signed certificate")),
              "TLS: SSL certificate problem: self-signed certificate");
    EXPECT_EQ(HttpFailure(TransportError(77, "error setting certificate file")),
              "TLS: error setting certificate file");
    EXPECT_EQ(HttpFailure(Reply("<title>400 No required SSL certificate was "
                                "sent</title>",
                                400)),
              "TLS: HTTP 400 \"No required SSL certificate was sent\"");
    EXPECT_EQ(HttpFailure(TransportError(56, "Recv failure: Connection reset "
                                             "by peer")),
              "transport error 56: Recv failure: Connection reset by peer");
}

}  // namespace
}  // namespace solgate
