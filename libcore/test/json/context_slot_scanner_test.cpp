#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "json/context_slot_scanner.h"

namespace solgate {
namespace {

using State = ContextSlotScanner::State;

struct Outcome {
    State state;
    uint64_t slot;

    bool operator==(const Outcome& other) const {
        return state == other.state && slot == other.slot;
    }
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
    const char* names[] = {"kMore", "kFound", "kNotFound"};
    return os << names[static_cast<int>(o.state)] << " slot=" << o.slot;
}

// Feeds body cut at the given offsets (ascending), then ends it.
Outcome FeedCutAt(const std::string& body, const std::vector<size_t>& cuts) {
    ContextSlotScanner scanner;
    size_t from = 0;
    for (size_t cut : cuts) {
        scanner.Feed(body.data() + from, cut - from);
        from = cut;
    }
    scanner.Feed(body.data() + from, body.size() - from);
    State state = scanner.Finish();
    return {state, scanner.slot()};
}

Outcome FeedWhole(const std::string& body) { return FeedCutAt(body, {}); }

Outcome FeedByteByByte(const std::string& body) {
    ContextSlotScanner scanner;
    for (char c : body) {
        scanner.Feed(&c, 1);
    }
    State state = scanner.Finish();
    return {state, scanner.slot()};
}

// What Feed alone says once the whole body is in, before Finish.
State FeedOnly(const std::string& body) {
    ContextSlotScanner scanner;
    return scanner.Feed(body.data(), body.size());
}

const Outcome kNotFound{State::kNotFound, 0};

Outcome Found(uint64_t slot) { return {State::kFound, slot}; }

std::string Envelope(const std::string& context, const std::string& value) {
    return R"({"jsonrpc":"2.0","result":{"context":)" + context +
           R"(,"value":)" + value + R"(},"id":1})";
}

const std::string kTypical = Envelope(
    R"({"apiVersion":"2.0.15","slot":341234567})",
    R"({"data":["AAAA","base64"],"executable":false,"lamports":1,)"
    R"("owner":"11111111111111111111111111111111","rentEpoch":0})");

// --- finding the slot --------------------------------------------------------

TEST(ContextSlotScanner, FindsSlotInTypicalResponse) {
    EXPECT_EQ(FeedOnly(kTypical), State::kFound);
    EXPECT_EQ(FeedWhole(kTypical), Found(341234567));
}

TEST(ContextSlotScanner, AnyKeyOrder) {
    std::vector<std::string> top = {
        R"("jsonrpc":"2.0")", R"("id":"a}\"b")", "RESULT"};
    std::vector<std::string> result = {"CONTEXT", R"("value":{"slot":1})"};
    std::vector<std::string> context = {R"("apiVersion":"2.0.15")",
                                        R"("slot":42)", R"("x":[{}])"};
    auto join = [](const std::vector<std::string>& members) {
        std::string out = "{";
        for (const auto& m : members) {
            out += (out.size() > 1 ? "," : "") + m;
        }
        return out + "}";
    };
    std::sort(top.begin(), top.end());
    int bodies = 0;
    do {
        std::sort(result.begin(), result.end());
        do {
            std::sort(context.begin(), context.end());
            do {
                std::string body = join(top);
                std::string result_json = join(result);
                result_json.replace(result_json.find("CONTEXT"), 7,
                                    "\"context\":" + join(context));
                body.replace(body.find("RESULT"), 6,
                             "\"result\":" + result_json);
                EXPECT_EQ(FeedWhole(body), Found(42)) << body;
                EXPECT_EQ(FeedOnly(body), State::kFound) << body;
                bodies++;
            } while (std::next_permutation(context.begin(), context.end()));
        } while (std::next_permutation(result.begin(), result.end()));
    } while (std::next_permutation(top.begin(), top.end()));
    EXPECT_EQ(bodies, 6 * 2 * 6);
}

TEST(ContextSlotScanner, WhitespaceEverywhere) {
    std::string body =
        " \n{ \"result\" :\t{ \"context\" : { \"slot\" :\r\n 7 } } , "
        "\"id\" : 1 } \n";
    EXPECT_EQ(FeedWhole(body), Found(7));
}

TEST(ContextSlotScanner, OnlyTheEnvelopePathCounts) {
    // "context" and "slot" off the path (top level, inside value, inside
    // other context members) are decoys.
    std::string body =
        R"({"context":{"slot":1},"slot":2,"result":{"value":{"context":)"
        R"({"slot":3}},"context":{"inner":{"slot":4},"slot":5}}})";
    EXPECT_EQ(FeedWhole(body), Found(5));
}

TEST(ContextSlotScanner, EscapedKeysAreDecoded) {
    std::string body =
        R"({"res\u0075lt":{"context":{"sl\u006ft":9}},"id":1})";
    EXPECT_EQ(FeedWhole(body), Found(9));
}

TEST(ContextSlotScanner, SlotLimits) {
    EXPECT_EQ(FeedWhole(Envelope(R"({"slot":0})", "1")), Found(0));
    EXPECT_EQ(FeedWhole(Envelope(R"({"slot":18446744073709551615})", "1")),
              Found(UINT64_MAX));
    EXPECT_EQ(FeedWhole(Envelope(R"({"slot":18446744073709551616})", "1")),
              kNotFound);
    EXPECT_EQ(FeedWhole(Envelope(R"({"slot":99999999999999999999999})", "1")),
              kNotFound);
}

TEST(ContextSlotScanner, SlotMustBeNonNegativeInteger) {
    for (const char* slot : {"-1", "-0", "1.5", "1.0", "1e3", "1E3", "\"5\"",
                             "null", "true", "[5]", "{\"n\":5}"}) {
        std::string body = Envelope(std::string("{\"slot\":") + slot + "}",
                                    "1");
        EXPECT_EQ(FeedWhole(body), kNotFound) << slot;
        EXPECT_EQ(FeedOnly(body), State::kNotFound) << slot;
    }
}

// --- chunk boundaries --------------------------------------------------------

std::vector<std::string> SampleBodies() {
    return {
        kTypical,
        R"({"id":1,"result":{"value":[1,2.5,"x\"y",null,true],)"
        R"("context":{"slot":18446744073709551615,"apiVersion":"2.0.15"}},)"
        R"("jsonrpc":"2.0"})",
        " { \"result\" : { \"context\" : { \"slot\" : 12 } } } ",
        R"({"jsonrpc":"2.0","error":{"code":-32005,"message":"m"},"id":1})",
        R"({"jsonrpc":"2.0","result":123456,"id":1})",
        R"({"jsonrpc":"2.0","result":{"context":{"slot":1.5}},"id":1})",
        R"({"jsonrpc":"2.0","result":{"context":{"slot":-7}},"id":1})",
        R"({"jsonrpc":"2.0","result":{"value":1},"id":1})",
        R"([{"jsonrpc":"2.0","result":{"context":{"slot":1}},"id":1}])",
        R"({"result":{"context":{"slot":12)",  // cut off in the number
        R"({"result":{"context":{"slot":12 x}}})",
        "{\"result\":{\"value\":\"caf\xc3\xa9\",\"context\":{\"slot\":3}}}",
    };
}

TEST(ContextSlotScanner, EverySplitPointGivesTheSameAnswer) {
    for (const std::string& body : SampleBodies()) {
        Outcome whole = FeedWhole(body);
        for (size_t cut = 0; cut <= body.size(); cut++) {
            ASSERT_EQ(FeedCutAt(body, {cut}), whole)
                << body << " cut at " << cut;
        }
        EXPECT_EQ(FeedByteByByte(body), whole) << body;
    }
}

TEST(ContextSlotScanner, EveryPairOfSplitPointsGivesTheSameAnswer) {
    const std::string body = SampleBodies()[1];
    Outcome whole = FeedWhole(body);
    ASSERT_EQ(whole, Found(UINT64_MAX));
    for (size_t a = 0; a <= body.size(); a++) {
        for (size_t b = a; b <= body.size(); b++) {
            ASSERT_EQ(FeedCutAt(body, {a, b}), whole) << a << "," << b;
        }
    }
}

TEST(ContextSlotScanner, EmptyChunksAreHarmless) {
    ContextSlotScanner scanner;
    EXPECT_EQ(scanner.Feed(nullptr, 0), State::kMore);
    EXPECT_EQ(scanner.Feed(kTypical.data(), 10), State::kMore);
    EXPECT_EQ(scanner.Feed(nullptr, 0), State::kMore);
    EXPECT_EQ(scanner.Feed(kTypical.data() + 10, kTypical.size() - 10),
              State::kFound);
    EXPECT_EQ(scanner.slot(), 341234567u);
}

// --- deciding "not found" as early as possible --------------------------------

// Feeds prefix and expects the answer from Feed itself, with no more body.
void ExpectDecidedBy(const std::string& prefix, State expected) {
    ContextSlotScanner scanner;
    EXPECT_EQ(scanner.Feed(prefix.data(), prefix.size()), expected) << prefix;
    EXPECT_EQ(scanner.state(), expected) << prefix;
}

TEST(ContextSlotScanner, ErrorResponseIsNotFoundAtTheErrorKey) {
    ExpectDecidedBy(R"({"jsonrpc":"2.0","error":)", State::kNotFound);
    ExpectDecidedBy(R"({"id":1,"error")", State::kNotFound);
    std::string body =
        R"({"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is )"
        R"(behind by 42 slots","data":{"numSlotsBehind":42}},"id":1})";
    EXPECT_EQ(FeedWhole(body), kNotFound);
    // "error" only counts at the top level.
    ExpectDecidedBy(R"({"result":{"error":1,"context":{"slot":3})",
                    State::kFound);
}

TEST(ContextSlotScanner, NonEnvelopeResultsAreNotFoundImmediately) {
    ExpectDecidedBy(R"({"jsonrpc":"2.0","result":null)", State::kNotFound);
    ExpectDecidedBy(R"({"jsonrpc":"2.0","result":true)", State::kNotFound);
    ExpectDecidedBy(R"({"jsonrpc":"2.0","result":"abc")", State::kNotFound);
    ExpectDecidedBy(R"({"jsonrpc":"2.0","result":[)", State::kNotFound);
    // A number is only complete once the byte after it is seen.
    ExpectDecidedBy(R"({"jsonrpc":"2.0","result":5)", State::kMore);
    ExpectDecidedBy(R"({"jsonrpc":"2.0","result":5,)", State::kNotFound);
    ExpectDecidedBy(R"({"result":{"context":7,)", State::kNotFound);
    ExpectDecidedBy(R"({"result":{"context":[)", State::kNotFound);
    ExpectDecidedBy(R"({"result":{"context":"x")", State::kNotFound);
}

TEST(ContextSlotScanner, ClosedPathObjectsWithoutSlotAreNotFound) {
    ExpectDecidedBy(R"({"jsonrpc":"2.0","id":1})", State::kNotFound);
    ExpectDecidedBy(R"({"result":{"value":1})", State::kNotFound);
    ExpectDecidedBy(R"({"result":{"context":{"apiVersion":"2.0"})",
                    State::kNotFound);
    ExpectDecidedBy("{}", State::kNotFound);
}

TEST(ContextSlotScanner, NonObjectTopLevelIsNotFoundAtFirstToken) {
    ExpectDecidedBy("[", State::kNotFound);  // a batch
    ExpectDecidedBy(" \n [{\"result\":{}}]", State::kNotFound);
    ExpectDecidedBy("\"result\"", State::kNotFound);
    ExpectDecidedBy("null", State::kNotFound);
    ExpectDecidedBy("12 ", State::kNotFound);
}

TEST(ContextSlotScanner, InvalidJsonIsNotFound) {
    for (const char* body :
         {"nope", "{,}", "{\"result\" 5}", "{\"result\":{\"context\":{\"slot\":}",
          "{\"result\":{'context':1}}", "}", "{\"a\":1,}",
          "{\"result\":{\"value\":\"\xff\",\"context\":{\"slot\":1}}}",
          "{\"result\":{\"context\":{\"slot\":01}}}",
          "{\"result\":{\"context\":{\"slot\":5x}}}",
          "{\"result\":{\"context\":{\"slot\":1-}}}"}) {
        EXPECT_EQ(FeedOnly(body), State::kNotFound) << body;
        EXPECT_EQ(FeedWhole(body), kNotFound) << body;
    }
}

TEST(ContextSlotScanner, TooDeepBeforeContextIsNotFound) {
    size_t limit = ContextSlotScanner::kMaxScanDepth;
    auto nested = [](size_t levels) {
        return std::string(levels, '[') + std::string(levels, ']');
    };
    // The top-level and result maps are open, so "value" may nest
    // limit - 2 levels.
    auto body = [&](size_t levels) {
        return "{\"result\":{\"value\":" + nested(levels) +
               ",\"context\":{\"slot\":5}}}";
    };
    EXPECT_EQ(FeedWhole(body(limit - 2)), Found(5));
    EXPECT_EQ(FeedWhole(body(limit - 1)), kNotFound);
}

// --- Finish ------------------------------------------------------------------

TEST(ContextSlotScanner, FinishSemantics) {
    {
        ContextSlotScanner scanner;  // nothing fed at all
        EXPECT_EQ(scanner.Finish(), State::kNotFound);
        EXPECT_EQ(scanner.slot(), 0u);
    }
    {
        ContextSlotScanner scanner;  // the body stopped half-way
        std::string half = kTypical.substr(0, kTypical.find("slot"));
        EXPECT_EQ(scanner.Feed(half.data(), half.size()), State::kMore);
        EXPECT_EQ(scanner.Finish(), State::kNotFound);
        // Final: the rest of the body no longer changes anything.
        std::string rest = kTypical.substr(half.size());
        EXPECT_EQ(scanner.Feed(rest.data(), rest.size()), State::kNotFound);
        EXPECT_EQ(scanner.Finish(), State::kNotFound);
    }
    {
        ContextSlotScanner scanner;  // found, then the body ends
        EXPECT_EQ(scanner.Feed(kTypical.data(), kTypical.size()),
                  State::kFound);
        EXPECT_EQ(scanner.Finish(), State::kFound);
        EXPECT_EQ(scanner.Finish(), State::kFound);
        EXPECT_EQ(scanner.slot(), 341234567u);
    }
    {
        ContextSlotScanner scanner;  // the body ends right after the digits
        std::string cut = R"({"result":{"context":{"slot":12)";
        EXPECT_EQ(scanner.Feed(cut.data(), cut.size()), State::kMore);
        EXPECT_EQ(scanner.Finish(), State::kNotFound);
    }
}

TEST(ContextSlotScanner, FinalAnswersNeverParseAgain) {
    ContextSlotScanner found;
    ASSERT_EQ(found.Feed(kTypical.data(), kTypical.size()), State::kFound);
    // A null pointer with a length proves the data is not even read.
    EXPECT_EQ(found.Feed(nullptr, 1 << 20), State::kFound);
    EXPECT_EQ(found.slot(), 341234567u);

    ContextSlotScanner not_found;
    ASSERT_EQ(not_found.Feed("[", 1), State::kNotFound);
    EXPECT_EQ(not_found.Feed(nullptr, 1 << 20), State::kNotFound);
    EXPECT_EQ(not_found.slot(), 0u);
}

// --- the work bound ------------------------------------------------------------

TEST(ContextSlotScanner, StopsBeforeAHugeValue) {
    std::string head =
        R"({"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.15",)"
        R"("slot":341234567},"value":)";
    // 5 MB that is not JSON at all: parsing any of it would fail.
    std::string invalid_tail(5 << 20, '\x01');

    ContextSlotScanner scanner;
    EXPECT_EQ(scanner.Feed(head.data(), head.size()), State::kFound);
    EXPECT_EQ(scanner.Feed(invalid_tail.data(), invalid_tail.size()),
              State::kFound);
    EXPECT_EQ(scanner.Finish(), State::kFound);
    EXPECT_EQ(scanner.slot(), 341234567u);
}

TEST(ContextSlotScanner, FoundInTheFirstOfManyChunks) {
    // A valid 5 MB response fed in 64 KB chunks, as nginx buffers would.
    std::string value = "{\"data\":[\"" + std::string(5 << 20, 'A') +
                        "\",\"base64\"]}";
    std::string body =
        Envelope(R"({"apiVersion":"2.0.15","slot":341234567})", value);
    const size_t chunk = 64 << 10;
    ContextSlotScanner scanner;
    size_t chunks_fed = 0;
    for (size_t at = 0; at < body.size(); at += chunk) {
        chunks_fed++;
        if (scanner.Feed(body.data() + at, std::min(chunk, body.size() - at)) !=
            State::kMore) {
            break;
        }
    }
    EXPECT_EQ(scanner.state(), State::kFound);
    EXPECT_EQ(chunks_fed, 1u);
    EXPECT_EQ(scanner.slot(), 341234567u);
}

TEST(ContextSlotScanner, ValueBeforeContextIsWalkedButFound) {
    std::string value = "[" + std::string(1 << 20, ' ') + "\"" +
                        std::string(1 << 20, 'B') + "\",{\"slot\":1}]";
    std::string body = R"({"result":{"value":)" + value +
                       R"(,"context":{"slot":77}},"id":1})";
    EXPECT_EQ(FeedWhole(body), Found(77));
    EXPECT_EQ(FeedCutAt(body, {body.size() / 3, body.size() / 2}), Found(77));
}

// --- ownership -----------------------------------------------------------------

TEST(ContextSlotScanner, MovableMidStream) {
    size_t half = kTypical.find("slot");  // before the answer
    ContextSlotScanner first;
    ASSERT_EQ(first.Feed(kTypical.data(), half), State::kMore);

    ContextSlotScanner second(std::move(first));
    EXPECT_EQ(first.Feed(kTypical.data(), 1), State::kNotFound);  // NOLINT
    EXPECT_EQ(first.Finish(), State::kNotFound);                  // NOLINT

    ContextSlotScanner third;
    third = std::move(second);
    EXPECT_EQ(third.Feed(kTypical.data() + half, kTypical.size() - half),
              State::kFound);
    EXPECT_EQ(third.slot(), 341234567u);
}

TEST(ContextSlotScanner, HeldByUniquePtr) {
    std::vector<std::unique_ptr<ContextSlotScanner>> scanners;
    for (int i = 0; i < 100; i++) {
        scanners.push_back(std::make_unique<ContextSlotScanner>());
        scanners.back()->Feed(kTypical.data(), i);  // some left undecided
    }
    EXPECT_EQ(scanners[99]->Feed(kTypical.data() + 99, kTypical.size() - 99),
              State::kFound);
    scanners.clear();  // undecided ones free their parser here
}

}  // namespace
}  // namespace solgate
