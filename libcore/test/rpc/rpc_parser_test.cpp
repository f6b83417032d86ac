#include <gtest/gtest.h>

#include <string>

#include "rpc/rpc_request.h"

namespace solgate {
namespace {

RpcRequest Parse(const std::string& body) {
    return ParseRpcRequest(body.data(), body.size());
}

TEST(RpcParser, SingleCallReadsMethodIdAndConfig) {
    auto req = Parse(R"({"jsonrpc":"2.0","id":7,"method":"getBalance",)"
                     R"("params":["Addr",{"commitment":"confirmed",)"
                     R"("minContextSlot":123}]})");
    ASSERT_EQ(req.shape, RpcRequest::Shape::kSingle);
    ASSERT_EQ(req.calls.size(), 1u);
    const RpcCall& call = req.calls[0];
    EXPECT_FALSE(call.error);
    EXPECT_EQ(call.method, "getBalance");
    EXPECT_EQ(call.id_raw, "7");
    EXPECT_EQ(call.commitment, SG_COMMITMENT_CONFIRMED);
    EXPECT_EQ(call.min_context_slot, 123u);
}

// Each batch element's text, as the client wrote it, whichever reader
// (the plain lexer, or yajl for escapes and UTF-8) read the body.
TEST(RpcParser, BatchElementsKeepTheirSpans) {
    for (const std::string& second :
         {std::string(R"({"id":2,"method":"getSlot"})"),
          std::string(R"({"id":"é","method":"getBalance","params":["x"]})")}) {
        std::string first = R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})";
        std::string body = " [ " + first + " ,\n" + second + "]";
        auto req = ParseRpcRequestWithYajl(body.data(), body.size());
        auto plain = Parse(body);
        for (const RpcRequest* r : {&req, &plain}) {
            ASSERT_EQ(r->calls.size(), 2u);
            EXPECT_EQ(body.substr(r->calls[0].span_begin,
                                  r->calls[0].span_end - r->calls[0].span_begin),
                      first);
            EXPECT_EQ(body.substr(r->calls[1].span_begin,
                                  r->calls[1].span_end - r->calls[1].span_begin),
                      second);
        }
    }
}

TEST(RpcParser, IdIsKeptByteForByte) {
    struct Case {
        const char* id_json;
    } cases[] = {
        {"1"}, {"-5"}, {"1.50"}, {"1e3"}, {"12345678901234567890123"},
        {"\"abc\""}, {"\"a\\\"b\\\\c\\u00e9\""}, {"null"}, {"\"\""},
    };
    for (const auto& c : cases) {
        std::string body = std::string(R"({"jsonrpc":"2.0","id":)") +
                           c.id_json + R"(,"method":"getSlot"})";
        auto req = Parse(body);
        ASSERT_EQ(req.shape, RpcRequest::Shape::kSingle) << c.id_json;
        EXPECT_EQ(req.calls[0].id_raw, c.id_json);
        EXPECT_FALSE(req.calls[0].error) << c.id_json;
    }
}

TEST(RpcParser, IdWithSpacesAroundColon) {
    auto req = Parse("{ \"id\" :\n \"x y\" , \"jsonrpc\":\"2.0\", "
                     "\"method\":\"getSlot\" }");
    EXPECT_EQ(req.calls[0].id_raw, "\"x y\"");
    EXPECT_FALSE(req.calls[0].error);
}

TEST(RpcParser, MissingIdIsEmpty) {
    auto req = Parse(R"({"jsonrpc":"2.0","method":"getSlot"})");
    EXPECT_TRUE(req.calls[0].id_raw.empty());
    EXPECT_FALSE(req.calls[0].error);
}

TEST(RpcParser, InvalidJsonIsParseError) {
    for (const char* body : {"", "{", "{\"jsonrpc\":", "nope", "{}}",
                             "{\"a\":1,}", "[1,2", "\xff\xfe"}) {
        auto req = Parse(body);
        EXPECT_EQ(req.shape, RpcRequest::Shape::kUnreadable) << body;
        EXPECT_EQ(req.error.code, kParseError) << body;
    }
}

TEST(RpcParser, ScalarBodyIsInvalidRequest) {
    for (const char* body : {"1", "\"getSlot\"", "null", "true"}) {
        auto req = Parse(body);
        EXPECT_EQ(req.shape, RpcRequest::Shape::kUnreadable) << body;
        EXPECT_EQ(req.error.code, kInvalidRequest) << body;
    }
}

TEST(RpcParser, EmptyBatchIsInvalidRequest) {
    auto req = Parse("[]");
    EXPECT_EQ(req.shape, RpcRequest::Shape::kUnreadable);
    EXPECT_EQ(req.error.code, kInvalidRequest);
}

TEST(RpcParser, BatchReadsEveryCall) {
    auto req = Parse(R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"},)"
                     R"({"jsonrpc":"2.0","id":"b","method":"getHealth"},)"
                     R"(5])");
    ASSERT_EQ(req.shape, RpcRequest::Shape::kBatch);
    ASSERT_EQ(req.calls.size(), 3u);
    EXPECT_EQ(req.calls[0].method, "getSlot");
    EXPECT_EQ(req.calls[1].id_raw, "\"b\"");
    EXPECT_FALSE(req.calls[1].error);
    EXPECT_EQ(req.calls[2].error.code, kInvalidRequest);
}

TEST(RpcParser, WrongTypesAreInvalidRequest) {
    const char* bodies[] = {
        R"({"jsonrpc":"2.0","id":1,"method":5})",
        R"({"jsonrpc":"2.0","id":1})",
        R"({"id":1,"method":"getSlot"})",
        R"({"jsonrpc":"1.0","id":1,"method":"getSlot"})",
        R"({"jsonrpc":2,"id":1,"method":"getSlot"})",
        R"({"jsonrpc":"2.0","id":{"a":1},"method":"getSlot"})",
        R"({"jsonrpc":"2.0","id":[1],"method":"getSlot"})",
        R"({"jsonrpc":"2.0","id":true,"method":"getSlot"})",
    };
    for (const char* body : bodies) {
        auto req = Parse(body);
        ASSERT_EQ(req.shape, RpcRequest::Shape::kSingle) << body;
        EXPECT_EQ(req.calls[0].error.code, kInvalidRequest) << body;
    }
}

TEST(RpcParser, InvalidIdIsNotEchoed) {
    auto req = Parse(R"({"jsonrpc":"2.0","id":{"x":1},"method":"getSlot"})");
    EXPECT_TRUE(req.calls[0].id_raw.empty());
}

TEST(RpcParser, ScalarParamsAreInvalidParams) {
    auto req = Parse(R"({"jsonrpc":"2.0","id":1,"method":"getSlot",)"
                     R"("params":"x"})");
    EXPECT_EQ(req.calls[0].error.code, kInvalidParams);
}

TEST(RpcParser, UnknownCommitmentIsInvalidParams) {
    for (const char* commitment : {"\"recent\"", "\"max\"", "1", "null",
                                   "\"Finalized\""}) {
        std::string body =
            std::string(R"({"jsonrpc":"2.0","id":1,"method":"getSlot",)"
                        R"("params":[{"commitment":)") +
            commitment + "}]}";
        auto req = Parse(body);
        EXPECT_EQ(req.calls[0].error.code, kInvalidParams) << commitment;
    }
}

TEST(RpcParser, MinContextSlotMustBeU64) {
    for (const char* value : {"-1", "1.5", "\"5\"", "18446744073709551616"}) {
        std::string body =
            std::string(R"({"jsonrpc":"2.0","id":1,"method":"getSlot",)"
                        R"("params":[{"minContextSlot":)") +
            value + "}]}";
        auto req = Parse(body);
        EXPECT_EQ(req.calls[0].error.code, kInvalidParams) << value;
    }
    auto max = Parse(R"({"jsonrpc":"2.0","id":1,"method":"getSlot",)"
                     R"("params":[{"minContextSlot":18446744073709551615}]})");
    EXPECT_EQ(max.calls[0].min_context_slot, UINT64_MAX);
}

TEST(RpcParser, FirstParamSlot) {
    auto req = Parse(R"({"jsonrpc":"2.0","id":1,"method":"getBlock",)"
                     R"("params":[430, {"encoding":"json"}]})");
    EXPECT_EQ(req.calls[0].first_param_u64, 430u);
    auto neg = Parse(R"({"jsonrpc":"2.0","id":1,"method":"getBlock",)"
                     R"("params":[-4]})");
    EXPECT_FALSE(neg.calls[0].first_param_u64);
    EXPECT_TRUE(neg.calls[0].first_param_seen);
}

TEST(RpcParser, NestedValuesInsideConfigAreIgnored) {
    auto req = Parse(R"({"jsonrpc":"2.0","id":1,"method":"getProgramAccounts",)"
                     R"("params":["P",{"filters":[{"memcmp":{"offset":0,)"
                     R"("commitment":"bogus"}}],"commitment":"processed"}]})");
    EXPECT_FALSE(req.calls[0].error);
    EXPECT_EQ(req.calls[0].commitment, SG_COMMITMENT_PROCESSED);
}

TEST(RpcParser, DeepNestingIsRefused) {
    std::string body(100000, '[');
    auto req = Parse(body);
    EXPECT_EQ(req.shape, RpcRequest::Shape::kUnreadable);
    EXPECT_EQ(req.error.code, kInvalidRequest);

    std::string deep_params = R"({"jsonrpc":"2.0","id":1,"method":"x","params":)";
    deep_params += std::string(200, '[') + std::string(200, ']') + "}";
    auto req2 = Parse(deep_params);
    EXPECT_EQ(req2.error.code, kInvalidRequest);
}

TEST(RpcParser, NestingJustUnderTheLimitIsAccepted) {
    // The call object is level 1 and params level 2.
    std::string body = R"({"jsonrpc":"2.0","id":1,"method":"x","params":)";
    size_t levels = kMaxNestingDepth - 1;
    body += std::string(levels, '[') + std::string(levels, ']') + "}";
    auto req = Parse(body);
    EXPECT_EQ(req.shape, RpcRequest::Shape::kSingle);
}

TEST(RpcParser, TrailingGarbageIsParseError) {
    auto req = Parse(R"({"jsonrpc":"2.0","id":1,"method":"getSlot"} x)");
    EXPECT_EQ(req.error.code, kParseError);
    auto ws = Parse("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getSlot\"}\n");
    EXPECT_EQ(ws.shape, RpcRequest::Shape::kSingle);
}

TEST(RpcParser, LargeBatch) {
    std::string body = "[";
    for (int i = 0; i < 1000; i++) {
        if (i) body += ",";
        body += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) +
                R"(,"method":"getSlot"})";
    }
    body += "]";
    auto req = Parse(body);
    ASSERT_EQ(req.calls.size(), 1000u);
    EXPECT_EQ(req.calls[999].id_raw, "999");
}

}  // namespace
}  // namespace solgate
