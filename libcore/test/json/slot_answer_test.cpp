#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "json/json_mutations.h"
#include "json/slot_answer.h"

namespace solgate {
namespace {

std::string SpanOf(const std::string& body, const SlotAnswer& answer) {
    return body.substr(answer.begin, answer.end - answer.begin);
}

TEST(SlotAnswer, ReadsTypicalAnswer) {
    std::string body = R"({"jsonrpc":"2.0","result":341234567,"id":1})";
    auto answer = ParseSlotAnswer(body);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->slot, 341234567u);
    EXPECT_EQ(SpanOf(body, *answer), "341234567");
    EXPECT_EQ(answer->begin, body.find("341234567"));
}

TEST(SlotAnswer, AnyKeyOrderAndExtraMembers) {
    std::vector<std::string> members = {
        R"("jsonrpc":"2.0")", R"("id":"x")", R"("result":99)",
        R"("extra":{"result":[1,{"error":2}]})"};
    std::sort(members.begin(), members.end());
    int bodies = 0;
    do {
        std::string body = "{";
        for (const auto& m : members) {
            body += (body.size() > 1 ? "," : "") + m;
        }
        body += "}";
        auto answer = ParseSlotAnswer(body);
        ASSERT_TRUE(answer) << body;
        EXPECT_EQ(answer->slot, 99u);
        EXPECT_EQ(SpanOf(body, *answer), "99") << body;
        bodies++;
    } while (std::next_permutation(members.begin(), members.end()));
    EXPECT_EQ(bodies, 24);
}

TEST(SlotAnswer, WhitespaceAroundTheNumber) {
    std::string body =
        "\r\n { \"id\" : 7 ,\n\t\"result\" :\n  1234 \t, \"jsonrpc\": \"2.0\" "
        "}\n\n";
    auto answer = ParseSlotAnswer(body);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->slot, 1234u);
    EXPECT_EQ(SpanOf(body, *answer), "1234");
}

TEST(SlotAnswer, NumberRightBeforeTheClosingBrace) {
    std::string body = R"({"jsonrpc":"2.0","id":null,"result":0})";
    auto answer = ParseSlotAnswer(body);
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->slot, 0u);
    EXPECT_EQ(answer->end, body.size() - 1);
    EXPECT_EQ(SpanOf(body, *answer), "0");
}

TEST(SlotAnswer, Limits) {
    auto max = ParseSlotAnswer(
        R"({"jsonrpc":"2.0","result":18446744073709551615,"id":1})");
    ASSERT_TRUE(max);
    EXPECT_EQ(max->slot, UINT64_MAX);
    EXPECT_FALSE(ParseSlotAnswer(
        R"({"jsonrpc":"2.0","result":18446744073709551616,"id":1})"));
}

TEST(SlotAnswer, RejectsWhatIsNotASlotAnswer) {
    for (const char* body : {
             // not a non-negative integer
             R"({"jsonrpc":"2.0","result":-1,"id":1})",
             R"({"jsonrpc":"2.0","result":-0,"id":1})",
             R"({"jsonrpc":"2.0","result":1.5,"id":1})",
             R"({"jsonrpc":"2.0","result":1.0,"id":1})",
             R"({"jsonrpc":"2.0","result":1e3,"id":1})",
             R"({"jsonrpc":"2.0","result":"5","id":1})",
             R"({"jsonrpc":"2.0","result":null,"id":1})",
             R"({"jsonrpc":"2.0","result":[5],"id":1})",
             R"({"jsonrpc":"2.0","result":{"context":{"slot":5}},"id":1})",
             // errors, batches, not JSON-RPC
             R"({"jsonrpc":"2.0","error":{"code":-32005,"message":"x"},"id":1})",
             R"({"jsonrpc":"2.0","result":5,"error":null,"id":1})",
             R"([{"jsonrpc":"2.0","result":5,"id":1}])",
             R"({"jsonrpc":"2.0","id":1})",
             R"({"result":5,"id":1})",
             R"({"jsonrpc":"1.0","result":5,"id":1})",
             R"({"jsonrpc":"2.0","result":5})",
             R"({"jsonrpc":"2.0","result":5,"id":[1]})",
             R"({"jsonrpc":"2.0","result":5,"result":6,"id":1})",
             "5", "null", "",
             // invalid JSON, trailing garbage
             R"({"jsonrpc":"2.0","result":5,"id":1)",
             R"({"jsonrpc":"2.0","result":05,"id":1})",
             R"({"jsonrpc":"2.0","result":5,"id":1}x)",
             R"({"jsonrpc":"2.0","result":5,"id":1}{})",
             R"({"jsonrpc":"2.0","result":5,"id":1} 1)",
             R"({"jsonrpc":"2.0","result":5,"id":1,})",
             "{\"jsonrpc\":\"2.0\",\"result\":5,\"id\":\"\xff\"}",
         }) {
        EXPECT_FALSE(ParseSlotAnswer(body)) << body;
    }
}

TEST(SlotAnswer, ReplaceKeepsEveryOtherByte) {
    struct Case {
        std::string body;
        std::string expected;
    } cases[] = {
        {R"({"jsonrpc":"2.0","result":341234567,"id":"a\"b"})",
         R"({"jsonrpc":"2.0","result":5,"id":"a\"b"})"},
        {R"({"id":1.50, "result" : 9 ,"jsonrpc":"2.0"})",
         R"({"id":1.50, "result" : 5 ,"jsonrpc":"2.0"})"},
        {"{ \"id\" : \"\\u00e9\\n\" ,\n \"jsonrpc\":\"2.0\",\n \"result\":0\n}\n",
         "{ \"id\" : \"\\u00e9\\n\" ,\n \"jsonrpc\":\"2.0\",\n \"result\":5\n}\n"},
    };
    for (const auto& c : cases) {
        auto answer = ParseSlotAnswer(c.body);
        ASSERT_TRUE(answer) << c.body;
        EXPECT_EQ(ReplaceSlot(c.body, *answer, 5), c.expected);
    }
}

TEST(SlotAnswer, ReplaceWithLongerAndShorterNumbers) {
    std::string body = R"({"jsonrpc":"2.0","result":1000,"id":-2.5e1})";
    auto answer = ParseSlotAnswer(body);
    ASSERT_TRUE(answer);
    for (uint64_t slot : {uint64_t{0}, uint64_t{7}, uint64_t{1000},
                          uint64_t{341234567}, UINT64_MAX}) {
        std::string replaced = ReplaceSlot(body, *answer, slot);
        auto again = ParseSlotAnswer(replaced);
        ASSERT_TRUE(again) << replaced;
        EXPECT_EQ(again->slot, slot);
        EXPECT_EQ(replaced.substr(0, answer->begin),
                  body.substr(0, answer->begin));
        EXPECT_EQ(replaced.substr(again->end), body.substr(answer->end));
    }
}

TEST(SlotAnswer, ReplaceWithASpanOutsideTheBodyChangesNothing) {
    std::string body = R"({"jsonrpc":"2.0","result":1,"id":1})";
    EXPECT_EQ(ReplaceSlot(body, SlotAnswer{1, 30, 99}, 5), body);
    EXPECT_EQ(ReplaceSlot(body, SlotAnswer{1, 10, 5}, 5), body);
}

TEST(SlotNumber, OnlyPlainDigitsThatFit) {
    EXPECT_EQ(ParseSlotNumber("0"), 0u);
    EXPECT_EQ(ParseSlotNumber("341234567"), 341234567u);
    EXPECT_EQ(ParseSlotNumber("18446744073709551615"), UINT64_MAX);
    EXPECT_EQ(ParseSlotNumber("9999999999999999999"), 9999999999999999999u);
    EXPECT_EQ(ParseSlotNumber("10000000000000000000"), 10000000000000000000u);
    EXPECT_EQ(ParseSlotNumber("01234567890123456789"), 1234567890123456789u);
    for (const char* bad : {"", "-1", "1.5", "1e3", "18446744073709551616",
                            "99999999999999999999", "000000000000000000001",
                            "20000000000000000000", "19999999999999999999",
                            "36893488147419103231", "1844674407370955161x",
                            " 1", "1 "}) {
        EXPECT_FALSE(ParseSlotNumber(bad)) << bad;
    }
}

}  // namespace
}  // namespace solgate

namespace solgate {
namespace {

// The fast path for the canonical shape must agree with the full parser.
TEST(SlotAnswerFastPath, AgreesWithTheParserOnCanonicalAndNearCanonicalBodies) {
    const char* bodies[] = {
        R"({"jsonrpc":"2.0","result":300000000,"id":1})",
        R"({"jsonrpc":"2.0","result":300000000,"id":"abc"})",
        R"({"jsonrpc":"2.0","result":0,"id":null})",
        "{\"jsonrpc\":\"2.0\",\"result\":42,\"id\":7}\n",
        R"({"jsonrpc":"2.0","result":42,"id":"a\"b"})",
        R"({"jsonrpc":"2.0","result":42,"id":1.5})",
        R"({"jsonrpc":"2.0","result":42,"id":-3})",
        R"({"jsonrpc":"2.0","result":42,"id":007})",
        R"({"jsonrpc":"2.0","result":042,"id":1})",
        R"({"jsonrpc":"2.0","result":42,"id":1}x)",
        R"({"jsonrpc":"2.0","result":42,"id":1,"extra":2})",
        R"({"jsonrpc":"2.0","result":18446744073709551616,"id":1})",
        R"({"jsonrpc":"2.0","result":42,"id":"unterminated})",
    };
    for (const char* body : bodies) {
        auto answer = ParseSlotAnswer(body);
        // the oracle: the same body with a space after the first brace,
        // which the fast path never takes
        std::string spaced = std::string("{ ") + (body + 1);
        auto oracle = ParseSlotAnswer(spaced);
        ASSERT_EQ(answer.has_value(), oracle.has_value()) << body;
        if (answer) {
            EXPECT_EQ(answer->slot, oracle->slot) << body;
            EXPECT_EQ(answer->begin + 1, oracle->begin) << body;
            EXPECT_EQ(answer->end + 1, oracle->end) << body;
        }
    }
}

}  // namespace
}  // namespace solgate

namespace solgate {
namespace {

// The canonical reader and the plain lexer, in front of yajl, must answer
// every body as yajl alone does.
void ExpectSameAsYajl(const std::string& body) {
    auto fast = ParseSlotAnswer(body);
    auto reference = ParseSlotAnswerWithYajl(body);
    ASSERT_EQ(fast.has_value(), reference.has_value()) << "body: " << body;
    if (fast) {
        EXPECT_EQ(fast->slot, reference->slot) << "body: " << body;
        EXPECT_EQ(fast->begin, reference->begin) << "body: " << body;
        EXPECT_EQ(fast->end, reference->end) << "body: " << body;
    }
}

const char* const kAnswers[] = {
    R"({"jsonrpc":"2.0","result":300000000,"id":1})",
    R"({"id":"x","jsonrpc":"2.0","result":12})",
    " {\"result\": 7 , \"id\" : null,\n\"jsonrpc\":\"2.0\", "
    "\"extra\":[1,{\"a\":[true,false,-1.5e3]}]} ",
    R"({"jsonrpc":"2.0","result":5,"id":"\u00e9"})",
    "{\"jsonrpc\":\"2.0\",\"result\":5,\"id\":\"\xc3\xa9\"}",
    R"({"jsonrpc":"2.0","id":1,"result":5,"error":null})",
    R"({"jsonrpc":"2.0","error":{"code":-32005,"message":"x"},"id":1})",
    R"({"jsonrpc":"2.0","id":1,"result":0})",
    R"({"jsonrpc":"2.0","id":1,"result":01})",
    R"({"jsonrpc":"2.0","id":1,"result":1})",
    R"([{"jsonrpc":"2.0","id":1,"result":1}])",
    R"({"jsonrpc":"2.0","id":1,"result":1} x)",
    R"({"jsonrpc":"2.0","id":1,"result":1,)",
};

TEST(SlotAnswerReaders, CorpusReadsAsYajlReadsIt) {
    for (const char* body : kAnswers) {
        ExpectSameAsYajl(body);
    }
    std::string deep = R"({"jsonrpc":"2.0","id":1,"result":1,"x":)";
    for (size_t levels : {62, 63, 64, 200}) {
        ExpectSameAsYajl(deep + std::string(levels, '[') +
                         std::string(levels, ']') + "}");
    }
}

// Random edits of answers: every one reads as yajl reads it.
TEST(SlotAnswerReaders, MutationsReadAsYajlReadsThem) {
    std::mt19937 rng(5);
    for (int i = 0; i < 20000; i++) {
        std::string body = MutateJson(kAnswers[rng() % 4], rng);
        ExpectSameAsYajl(body);
        if (::testing::Test::HasFailure()) {
            return;   // one body is enough to debug
        }
    }
}

}  // namespace
}  // namespace solgate
