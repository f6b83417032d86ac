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

// Written in runs of plain bytes between the escapes: each ASCII byte, at
// the start, in the middle and twice, as writing one at a time would.
TEST(JsonWriter, EveryByteIsWrittenAsOneAtATimeWouldBe) {
    // the expected text byte by byte, by the rules themselves
    auto one_by_one = [](const std::string& in) {
        static const char kHex[] = "0123456789abcdef";
        std::string out = "\"";
        for (unsigned char u : in) {
            if (u == '"') out += "\\\"";
            else if (u == '\\') out += "\\\\";
            else if (u == '\n') out += "\\n";
            else if (u == '\r') out += "\\r";
            else if (u == '\t') out += "\\t";
            else if (u < 0x20) {
                out += "\\u00";
                out.push_back(kHex[u >> 4]);
                out.push_back(kHex[u & 0xf]);
            } else {
                out.push_back(static_cast<char>(u));   // ASCII only here
            }
        }
        return out + "\"";
    };
    for (int b = 0; b < 0x80; b++) {
        for (const std::string& text :
             {std::string(1, static_cast<char>(b)),
              "ab" + std::string(1, static_cast<char>(b)) + "cd",
              std::string(2, static_cast<char>(b)) + "x"}) {
            std::string out;
            AppendJsonString(out, text);
            EXPECT_EQ(out, one_by_one(text)) << "byte " << b;
        }
    }
    std::string out = "kept ";
    AppendJsonString(out, "Block 230000000 not available \"here\"");
    EXPECT_EQ(out, "kept \"Block 230000000 not available \\\"here\\\"\"");
}

}  // namespace
}  // namespace solgate
