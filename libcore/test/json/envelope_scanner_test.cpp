#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "json/envelope_scanner.h"
#include "support/workloads.h"

namespace solgate {
namespace {

using Result = EnvelopeScanner::Result;

struct Outcome {
    bool fed = false;   // every Feed returned true
    bool ok = false;    // Finish
    Result result;
    std::string id;     // the id span, cut out of the body

    bool operator==(const Outcome& o) const {
        return fed == o.fed && ok == o.ok &&
               result.has_result == o.result.has_result &&
               result.has_error == o.result.has_error &&
               result.error_code == o.result.error_code &&
               result.id_offset == o.result.id_offset &&
               result.id_length == o.result.id_length &&
               result.total == o.result.total;
    }
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
    return os << "fed=" << o.fed << " ok=" << o.ok
              << " result=" << o.result.has_result
              << " error=" << o.result.has_error
              << " code=" << o.result.error_code
              << " id@" << o.result.id_offset << "+" << o.result.id_length
              << " total=" << o.result.total;
}

// Feeds body cut into pieces of at most `piece` bytes (0: whole).
Outcome ScanPieces(const std::string& body, size_t piece) {
    EnvelopeScanner scanner;
    Outcome out;
    out.fed = true;
    if (piece == 0) {
        piece = body.size() + 1;
    }
    for (size_t at = 0; at < body.size(); at += piece) {
        size_t n = std::min(piece, body.size() - at);
        out.fed = scanner.Feed(body.data() + at, n) && out.fed;
    }
    out.ok = scanner.Finish();
    out.result = scanner.result();
    if (out.ok && out.result.id_offset + out.result.id_length <= body.size()) {
        out.id = body.substr(out.result.id_offset, out.result.id_length);
    }
    return out;
}

Outcome Scan(const std::string& body) { return ScanPieces(body, 0); }

Outcome ScanSplitAt(const std::string& body, size_t cut) {
    EnvelopeScanner scanner;
    Outcome out;
    out.fed = scanner.Feed(body.data(), cut);
    out.fed = scanner.Feed(body.data() + cut, body.size() - cut) && out.fed;
    out.ok = scanner.Finish();
    out.result = scanner.result();
    return out;
}

// Whole, byte by byte and cut in two at every point: all must agree.
Outcome ScanEveryWay(const std::string& body) {
    Outcome whole = Scan(body);
    EXPECT_EQ(ScanPieces(body, 1), whole) << body;
    EXPECT_EQ(ScanPieces(body, 3), whole) << body;
    for (size_t cut = 0; cut <= body.size(); cut++) {
        Outcome split = ScanSplitAt(body, cut);
        split.id = whole.id;
        EXPECT_EQ(split, whole) << "cut at " << cut << ": " << body;
    }
    return whole;
}

TEST(EnvelopeScanner, TypicalResult) {
    std::string body =
        R"({"jsonrpc":"2.0","result":{"blockHeight":290,"blockTime":null,)"
        R"("blockhash":"9Xz","transactions":[]},"id":1})";
    Outcome o = ScanEveryWay(body);
    ASSERT_TRUE(o.ok);
    EXPECT_TRUE(o.fed);
    EXPECT_TRUE(o.result.has_result);
    EXPECT_FALSE(o.result.has_error);
    EXPECT_EQ(o.id, "1");
    EXPECT_EQ(o.result.id_offset, body.size() - 2);
    EXPECT_EQ(o.result.id_length, 1u);
    EXPECT_EQ(o.result.total, body.size());
}

TEST(EnvelopeScanner, TrailingWhitespace) {
    std::string body = R"({"jsonrpc":"2.0","result":0,"id":42})" "\n";
    Outcome o = ScanEveryWay(body);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.id, "42");
    EXPECT_EQ(o.result.total, body.size());
    EXPECT_TRUE(Scan(body + " \r\n\t").ok);
    Outcome lead = Scan("\n  " + body);
    ASSERT_TRUE(lead.ok);
    EXPECT_EQ(lead.id, "42");
}

TEST(EnvelopeScanner, IdFirst) {
    std::string body = R"({"id":"req-7","jsonrpc":"2.0","result":[1,2]})";
    Outcome o = ScanEveryWay(body);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.id, R"("req-7")");
    EXPECT_EQ(o.result.id_offset, 6u);
    EXPECT_EQ(o.result.id_length, 7u);
}

TEST(EnvelopeScanner, StringIdWithEscapes) {
    std::string body =
        R"({"jsonrpc":"2.0","result":true,"id":"a\"b\\\"}c\u0022"})";
    Outcome o = ScanEveryWay(body);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.id, R"("a\"b\\\"}c\u0022")");
    EXPECT_EQ(Scan(R"({"result":1,"id":"abc"})").result.id_length, 5u);
    EXPECT_EQ(Scan(R"({"result":1,"id":""})").id, R"("")");
}

TEST(EnvelopeScanner, NullAndNumberIds) {
    Outcome o = ScanEveryWay(R"({"jsonrpc":"2.0","result":null,"id":null})");
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.id, "null");
    EXPECT_EQ(o.result.id_length, 4u);
    EXPECT_EQ(Scan(R"({"result":1,"id":-12.5e3})").id, "-12.5e3");
    EXPECT_EQ(Scan(R"({"result":1,"id" : 18446744073709551616 })").id,
              "18446744073709551616");
}

TEST(EnvelopeScanner, NestedKeysIgnored) {
    std::string body =
        R"({"jsonrpc":"2.0","result":{"id":7,"error":{"code":5},)"
        R"("result":[{"id":"x","jsonrpc":1},{"error":"e"}],)"
        R"("meta":{"err":null,"id":[1,{"id":2}]}},"id":"top"})";
    Outcome o = ScanEveryWay(body);
    ASSERT_TRUE(o.ok);
    EXPECT_TRUE(o.result.has_result);
    EXPECT_FALSE(o.result.has_error);
    EXPECT_EQ(o.result.error_code, 0);
    EXPECT_EQ(o.id, R"("top")");
}

TEST(EnvelopeScanner, KeysLookAlikeInStrings) {
    // "id" and braces inside string values, and keys that only look like
    // envelope keys.
    std::string body =
        R"({"jsonrpc":"2.0","x":"\"id\":9}","ids":1,"i":2,"idd":3,)"
        R"("result":"{\"error\":1}","errorx":{},"id":5})";
    Outcome o = ScanEveryWay(body);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.id, "5");
    EXPECT_FALSE(o.result.has_error);
}

TEST(EnvelopeScanner, EscapedTopLevelKeys) {
    Outcome o = Scan(R"({"\u0069\u0064":3,"r\u0065sult":1})");
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.id, "3");
    EXPECT_TRUE(o.result.has_result);
    // Same key twice, once escaped: a duplicate.
    EXPECT_FALSE(Scan(R"({"id":3,"i\u0064":4,"result":1})").ok);
    // Escapes that decode to something else are other keys.
    EXPECT_FALSE(Scan(R"({"i\"d":3,"result":1})").ok);
    EXPECT_FALSE(Scan(R"({"\u0130d":3,"result":1})").ok);
}

TEST(EnvelopeScanner, ErrorEnvelopes) {
    std::string skipped =
        R"({"jsonrpc":"2.0","error":{"code":-32007,"message":"Slot 5 was )"
        R"(skipped, or missing due to ledger jump to recent snapshot"},)"
        R"("id":1})";
    Outcome o = ScanEveryWay(skipped);
    ASSERT_TRUE(o.ok);
    EXPECT_FALSE(o.result.has_result);
    EXPECT_TRUE(o.result.has_error);
    EXPECT_EQ(o.result.error_code, -32007);
    EXPECT_EQ(o.id, "1");

    std::string with_data =
        R"({"jsonrpc":"2.0","error":{"message":"Slot 9 was not confirmed",)"
        R"("data":{"code":77,"id":3,"error":{"code":1}},"code":-32009},)"
        R"("id":"b"})";
    o = ScanEveryWay(with_data);
    ASSERT_TRUE(o.ok);
    EXPECT_TRUE(o.result.has_error);
    EXPECT_EQ(o.result.error_code, -32009);
    EXPECT_EQ(o.id, R"("b")");
}

TEST(EnvelopeScanner, ErrorCodeOnlyWhenInteger) {
    auto code = [](const std::string& error) {
        Outcome o =
            Scan(R"({"jsonrpc":"2.0","error":)" + error + R"(,"id":1})");
        EXPECT_TRUE(o.ok) << error;
        return o.result.error_code;
    };
    EXPECT_EQ(code(R"({"code":-32600})"), -32600);
    EXPECT_EQ(code(R"({"code" : 7 , "message":"m"})"), 7);
    EXPECT_EQ(code(R"({"message":"no code"})"), 0);
    EXPECT_EQ(code(R"({})"), 0);
    EXPECT_EQ(code(R"({"code":-1.5})"), 0);
    EXPECT_EQ(code(R"({"code":1e3})"), 0);
    EXPECT_EQ(code(R"({"code":"-32007"})"), 0);
    EXPECT_EQ(code(R"({"code":null})"), 0);
    EXPECT_EQ(code(R"({"code":99999999999999999999})"), 0);
    EXPECT_EQ(code(R"({"code":9223372036854775807})"), INT64_MAX);
    EXPECT_EQ(code(R"({"code":-9223372036854775808})"), INT64_MIN);
    EXPECT_EQ(code(R"({"code":9223372036854775808})"), 0);
    EXPECT_EQ(code(R"({"code":[-5],"data":{"code":3}})"), 0);
}

TEST(EnvelopeScanner, PrettyPrinted) {
    std::string body =
        "{\n  \"jsonrpc\" : \"2.0\",\n  \"result\" : {\n    \"a\" : [ 1 , "
        "2 ] ,\n    \"b\" : { }\n  } ,\n  \"id\" :\t\"x y\"\r\n}\n";
    Outcome o = ScanEveryWay(body);
    ASSERT_TRUE(o.ok);
    EXPECT_EQ(o.id, "\"x y\"");
}

TEST(EnvelopeScanner, Malformed) {
    const std::vector<std::string> bad = {
        "",
        "   ",
        "[1,2]",
        R"("text")",
        "null",
        R"({})",
        R"({"jsonrpc":"2.0","result":1})",                // no id
        R"({"jsonrpc":"2.0","id":1})",                    // neither
        R"({"result":1,"error":{"code":1},"id":1})",      // both
        R"({"error":{"code":1},"id":1,"result":null})",   // both
        R"({"result":1,"id":1,"id":2})",                  // duplicates
        R"({"jsonrpc":"2.0","jsonrpc":"2.0","result":1,"id":1})",
        R"({"result":1,"result":2,"id":1})",
        R"({"error":{},"error":{},"id":1})",
        R"({"result":[1,2},"id":1})",                     // mismatched
        R"({"result":{"a":1],"id":1})",
        R"({"result":{"a":1,"id":1})",                    // unclosed
        R"({"result":1,"id":1)",
        R"({"result":1,"id":1}})",                        // extra close
        R"({"result":1,"id":1} x)",                       // trailing bytes
        R"({"result":1,"id":1}{"result":1,"id":2})",
        R"({"result":1,"id":1},)",
        R"({"result":1,"id":1,})",                        // trailing comma
        R"({"result":[1,],"id":1})",
        R"({"result":[,1],"id":1})",
        R"({"result":1 "id":1})",                         // no comma
        R"({"result" 1,"id":1})",                         // no colon
        R"({"result"::1,"id":1})",
        R"({result:1,"id":1})",                           // bare key
        R"({"result":abc,"id":1})",                       // bad literal
        R"({"result":1x,"id":1})",
        R"({"result":"a\qb","id":1})",                    // bad escape
        "{\"result\":\"a\x01" "b\",\"id\":1}",            // raw control
        "{\"result\":\"a\nb\",\"id\":1}",
        R"({"result":"unterminated,"id":1})",
        R"({"result":1,"id":{"n":1}})",                   // id not scalar
        R"({"result":1,"id":[1]})",
        R"({"result":1,"id":true})",
        R"({"error":"boom","id":1})",                     // error not object
        R"({"error":null,"id":1})",
        R"({"i\u00zzd":1,"result":1})",                   // bad \u in key
        std::string(1, '\0') + R"({"result":1,"id":1})",
    };
    for (const std::string& body : bad) {
        EXPECT_FALSE(Scan(body).ok) << body;
        EXPECT_FALSE(ScanPieces(body, 1).ok) << body;
        for (size_t cut = 0; cut <= body.size(); cut++) {
            EXPECT_FALSE(ScanSplitAt(body, cut).ok) << cut << ": " << body;
        }
    }
}

TEST(EnvelopeScanner, FeedReportsFailureEarlyAndStaysFailed) {
    EnvelopeScanner scanner;
    std::string head = R"({"result":1,"result")";
    EXPECT_FALSE(scanner.Feed(head.data(), head.size()));
    std::string rest = R"(:2,"id":1})";
    EXPECT_FALSE(scanner.Feed(rest.data(), rest.size()));
    EXPECT_FALSE(scanner.Finish());

    // Truncated input is not malformed until Finish.
    EnvelopeScanner cut;
    std::string part = R"({"jsonrpc":"2.0","result":{"x":"ab)";
    EXPECT_TRUE(cut.Feed(part.data(), part.size()));
    EXPECT_TRUE(cut.Feed(nullptr, 0));
    EXPECT_FALSE(cut.Finish());

    // A missing id is known when the top-level object closes.
    EnvelopeScanner no_id;
    std::string body = R"({"result":1})";
    EXPECT_FALSE(no_id.Feed(body.data(), body.size()));
}

TEST(EnvelopeScanner, DepthLimit) {
    auto nested = [](size_t levels) {
        return R"({"result":)" + std::string(levels, '[') +
               std::string(levels, ']') + R"(,"id":1})";
    };
    // The top-level object is one level.
    EXPECT_TRUE(Scan(nested(EnvelopeScanner::kMaxDepth - 1)).ok);
    EXPECT_FALSE(Scan(nested(EnvelopeScanner::kMaxDepth)).ok);
}

TEST(EnvelopeScanner, FiveMegabyteBlock) {
    std::string body = testing::MakeJsonBlock(5 << 20, R"("cube-\"runner\"-1")");
    ASSERT_GE(body.size(), 5u << 20);
    for (size_t piece : {size_t{0}, size_t{16384}, size_t{4093}}) {
        Outcome o = ScanPieces(body, piece);
        ASSERT_TRUE(o.ok) << piece;
        EXPECT_TRUE(o.fed);
        EXPECT_TRUE(o.result.has_result);
        EXPECT_EQ(o.id, R"("cube-\"runner\"-1")");
        EXPECT_EQ(o.result.id_offset + o.result.id_length + 2, body.size());
        EXPECT_EQ(o.result.total, body.size());
    }
    // Cut in two at a hundred arbitrary points.
    Outcome whole = Scan(body);
    for (size_t cut = 1; cut < body.size(); cut += body.size() / 97) {
        Outcome split = ScanSplitAt(body, cut);
        split.id = whole.id;
        ASSERT_EQ(split, whole) << cut;
    }
}

// A 5 MB block of base64-encoded transactions (long strings), in 16 KB
// pieces. (The scanner's speed on it and on the json block above is
// measured by tools/bench/core_bench: scanner.)
TEST(EnvelopeScanner, FiveMegabyteBase64Block) {
    std::string base64 = R"({"jsonrpc":"2.0","result":{"transactions":[)";
    while (base64.size() < (5u << 20)) {
        base64 += R"({"transaction":[")" + std::string(1200, 'A') +
                  R"(","base64"],"meta":{"fee":5000,"err":null}},)";
    }
    base64 += R"({}]},"id":9})";
    Outcome o = ScanPieces(base64, 16384);
    ASSERT_TRUE(o.ok);
    EXPECT_TRUE(o.fed);
    EXPECT_TRUE(o.result.has_result);
    EXPECT_EQ(o.id, "9");
    EXPECT_EQ(o.result.total, base64.size());
}

}  // namespace
}  // namespace solgate
