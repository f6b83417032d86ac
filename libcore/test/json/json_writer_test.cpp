// The JSON-RPC envelope writers.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "json/json_writer.h"

namespace solgate {
namespace {

TEST(JsonWriter, EscapesStrings) {
    std::string out;
    AppendJsonString(out, std::string("a\"b\\c\n\x01", 7));
    EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001\"");
}

TEST(JsonWriter, Envelopes) {
    std::string out;
    AppendResultEnvelope(out, "", "5");
    EXPECT_EQ(out, R"({"jsonrpc":"2.0","result":5,"id":null})");
    out.clear();
    AppendErrorEnvelope(out, "\"q\"", -32005, "Node is unhealthy",
                        R"({"numSlotsBehind":3})");
    EXPECT_EQ(out, R"({"jsonrpc":"2.0","error":{"code":-32005,"message":)"
                   R"("Node is unhealthy","data":{"numSlotsBehind":3}},)"
                   R"("id":"q"})");
}

TEST(JsonWriter, BytesThatAreNoUtf8GoOutAsReplacementCharacters) {
    std::string out;
    AppendJsonString(out, std::string("a\xff" "b\xed\xa0\x80" "c\xc3\xa9", 9));
    EXPECT_EQ(out, "\"a\\ufffdb\\ufffd\\ufffd\\ufffdc\xc3\xa9\"");
}

}  // namespace
}  // namespace solgate
