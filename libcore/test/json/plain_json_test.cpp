// The plain lexer must parse every request exactly as yajl does: it either
// gives the same result or gives up (and yajl parses it).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "json/json_mutations.h"
#include "json/plain_json.h"
#include "rpc/rpc_request.h"

namespace solgate {
namespace {

std::string Describe(const RpcRequest& r) {
    std::string out = std::to_string(static_cast<int>(r.shape)) + "|" +
                      std::to_string(r.error.code) + ":" + r.error.message;
    for (const RpcCall& c : r.calls) {
        out += "|id=" + c.id_raw + " m=" + c.method +
               " c=" + (c.commitment ? std::to_string(*c.commitment) : "-") +
               " mcs=" +
               (c.min_context_slot ? std::to_string(*c.min_context_slot)
                                   : "-") +
               " p0=" +
               (c.first_param_u64 ? std::to_string(*c.first_param_u64)
                                  : "-") +
               " hp=" + std::to_string(c.has_params) +
               std::to_string(c.first_param_seen) +
               " e=" + std::to_string(c.error.code) + ":" + c.error.message;
        const BlockOptions& o = c.block_options;
        out += " bo=" + std::to_string(o.seen) + std::to_string(o.readable) +
               std::to_string(o.unknown_option) + o.encoding + "/" +
               o.transaction_details + "/" +
               (o.rewards ? std::to_string(*o.rewards) : "-") + "/" +
               o.max_version;
    }
    return out;
}

void ExpectSameAsYajl(const std::string& body) {
    RpcRequest fast = ParseRpcRequest(body.data(), body.size());
    RpcRequest reference = ParseRpcRequestWithYajl(body.data(), body.size());
    EXPECT_EQ(Describe(fast), Describe(reference)) << "body: " << body;
}

const char* const kCorpus[] = {
    R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})",
    R"( { "jsonrpc" : "2.0" , "id" : "a b" , "method" : "getSlot" } )",
    R"({"jsonrpc":"2.0","id":null,"method":"getBalance","params":["x",{"commitment":"finalized","minContextSlot":5}]})",
    R"({"jsonrpc":"2.0","id":-1.5e3,"method":"getBlock","params":[7,{"encoding":"base64","rewards":false,"maxSupportedTransactionVersion":0}]})",
    R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getHealth"}])",
    R"([])", R"({})", R"([1,2,3])", R"("x")", R"(42)", R"(null)", R"(true)",
    R"({"jsonrpc":"2.0","id":1,"method":"getSlot","params":[{"commitment":"bogus"}]})",
    R"({"jsonrpc":"1.0","id":1,"method":"getSlot"})",
    R"({"jsonrpc":"2.0","id":{},"method":"getSlot"})",
    R"({"jsonrpc":"2.0","id":1,"method":7})",
    R"({"jsonrpc":"2.0","id":1,"method":"getBlock","params":[01]})",
    R"({"jsonrpc":"2.0","id":1,"method":"getBlock","params":[1.]})",
    R"({"jsonrpc":"2.0","id":1,"method":"getBlock","params":[-]})",
    R"({"jsonrpc":"2.0","id":1,"method":"getBlock","params":[1e]})",
    R"({"jsonrpc":"2.0","id":1,"method":"getBlock","params":[18446744073709551616]})",
    R"({"jsonrpc":"2.0","id":"\u0041","method":"getSlot"})",
    R"({"jsonrpc":"2.0","id":"é","method":"getSlot"})",
    R"({"jsonrpc":"2.0","id":1,"method":"getSlot"} x)",
    R"({"jsonrpc":"2.0","id":1,"method":"getSlot"},)",
    R"({"jsonrpc":"2.0","id":1,"method":"getSlot",})",
    R"({"jsonrpc":"2.0","id":1 "method":"getSlot"})",
    R"({"jsonrpc":"2.0","id":tru,"method":"getSlot"})",
    R"({"jsonrpc":"2.0","id":1,"method":"getSlot")",
    R"({"jsonrpc":"2.0","id":1,"method":"getSlot"}})",
    R"([[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])",
    "",
    " ",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"getSlot\"}\n",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"get\tSlot\"}",
};

TEST(PlainJson, CorpusParsesAsYajlDoes) {
    for (const char* body : kCorpus) {
        ExpectSameAsYajl(body);
    }
}

// Random edits of valid requests: every one parses as yajl parses it.
TEST(PlainJson, MutationsParseAsYajlDoes) {
    const std::string seeds[] = {kCorpus[0], kCorpus[2], kCorpus[3],
                                 kCorpus[4]};
    std::mt19937 rng(7);
    for (int i = 0; i < 20000; i++) {
        std::string body = MutateJson(seeds[rng() % 4], rng);
        ExpectSameAsYajl(body);
        if (::testing::Test::HasFailure()) {
            return;   // one body is enough to debug
        }
    }
}

struct Counter {
    int events = 0;
    bool OnNull() { return ++events; }
    bool OnBool(bool) { return ++events; }
    bool OnNumber(std::string_view) { return ++events; }
    bool OnString(std::string_view) { return ++events; }
    bool OnStartMap() { return ++events; }
    bool OnKey(std::string_view) { return ++events; }
    bool OnEndMap() { return ++events; }
    bool OnStartArray() { return ++events; }
    bool OnEndArray() { return ++events; }
};

TEST(PlainJson, GivesUpOnWhatYajlMustDecide) {
    for (const char* text : {R"("a\"b")", "\"\xc3\xa9\"", "01", "1 2", "",
                             "[1,]", "{\"a\"}", "nul", "\"a\nb\""}) {
        Counter counter;
        size_t consumed = 0;
        EXPECT_EQ(LexPlainJson(text, counter, &consumed), PlainJson::kGaveUp)
            << text;
    }
    Counter counter;
    size_t consumed = 0;
    EXPECT_EQ(LexPlainJson(R"({"a":[1,true,null,"x"]})", counter, &consumed),
              PlainJson::kDone);
    EXPECT_EQ(counter.events, 9);
    EXPECT_EQ(consumed, 23u);
}

// The sixteen-byte scans, the last of a text among them, stop where the
// table does: at every start, in texts of every length up to 48, whose
// bytes are mostly plain with a stop byte (a quote, a backslash, a control
// byte, a byte >= 0x80) here and there, and 0x7f, which is plain.
TEST(PlainJson, StringBytesStopWhereTheTableSays) {
    std::mt19937 random(17);
    const char stops[] = {'"', '\\', '\n', '\0', '\x1f', '\x80', '\xff'};
    for (size_t len = 0; len <= 48; len++) {
        for (int round = 0; round < 300; round++) {
            std::string text(len, 'a');
            for (char& c : text) {
                int draw = static_cast<int>(random() % 40);
                c = draw == 0 ? stops[random() % sizeof(stops)]
                  : draw == 1 ? '\x7f'
                              : static_cast<char>(0x20 + random() % 0x5f);
                if (c == '"' || c == '\\') {
                    c = draw == 0 ? c : 'b';   // stops only where drawn
                }
            }
            const char* begin = text.data();
            const char* end = begin + len;
            for (size_t at = 0; at <= len; at++) {
                const char* expected = begin + at;
                while (expected < end &&
                       kPlainStringBytes
                           .plain[static_cast<unsigned char>(*expected)]) {
                    expected++;
                }
                ASSERT_EQ(SkipPlainStringBytes(begin + at, end, begin),
                          expected)
                    << "length " << len << " from " << at;
            }
        }
    }
}

}  // namespace
}  // namespace solgate
