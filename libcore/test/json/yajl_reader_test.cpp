// YajlReader: statuses, chunking, reuse, and the event contract it shares
// with the plain lexer.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "json/plain_json.h"
#include "json/yajl_reader.h"

namespace solgate {
namespace {

// Logs every event as "name text @end", end being where the token ends in
// the whole text: chunk_start (set by the test) plus the reader's offset.
struct Recorder {
    std::vector<std::string> log;
    size_t consumed = 0;
    size_t chunk_start = 0;
    size_t stop_at = SIZE_MAX;   // the event (counted from 0) that stops
    size_t throw_at = SIZE_MAX;  // the event that throws

    bool Event(const char* name, std::string_view text = {}) {
        if (log.size() == throw_at) {
            throw std::runtime_error("handler");
        }
        log.push_back(std::string(name) + " " + std::string(text) + " @" +
                      std::to_string(chunk_start + consumed));
        return log.size() != stop_at + 1;
    }
    bool OnNull() { return Event("null"); }
    bool OnBool(bool value) { return Event(value ? "true" : "false"); }
    bool OnNumber(std::string_view raw) { return Event("number", raw); }
    bool OnString(std::string_view text) { return Event("string", text); }
    bool OnStartMap() { return Event("{"); }
    bool OnKey(std::string_view key) { return Event("key", key); }
    bool OnEndMap() { return Event("}"); }
    bool OnStartArray() { return Event("["); }
    bool OnEndArray() { return Event("]"); }
};

struct Read {
    YajlRead status;
    std::vector<std::string> log;
};

Read ReadWhole(const std::string& text) {
    Recorder recorder;
    YajlReader<Recorder> reader(recorder, &recorder.consumed);
    YajlRead status = reader.ReadWhole(text);
    return {status, recorder.log};
}

// Feeds text cut at the given ascending offsets, then completes it.
Read ReadCutAt(const std::string& text, const std::vector<size_t>& cuts) {
    Recorder recorder;
    YajlReader<Recorder> reader(recorder, &recorder.consumed);
    size_t from = 0;
    YajlRead status = YajlRead::kOk;
    // Offsets are in the last chunk that was not empty.
    for (size_t cut : cuts) {
        recorder.chunk_start = cut > from ? from : recorder.chunk_start;
        status = reader.Feed(std::string_view(text).substr(from, cut - from));
        from = cut;
    }
    recorder.chunk_start = text.size() > from ? from : recorder.chunk_start;
    status = reader.Feed(std::string_view(text).substr(from));
    if (status == YajlRead::kOk) {
        status = reader.Complete();
    }
    return {status, recorder.log};
}

const char* const kTexts[] = {
    R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})",
    R"( { "a" : [ 1 , -2.5e3 , true , false , null , "x" ] , "b" : { } } )",
    R"([[],{},[[{"k":[0]}]]])",
    R"(42)",
    R"(-0.5E+7)",
    R"("plain")",
    R"(null)",
    "[1,\n2,\t3]\r\n",
    R"({"esc":"a\"b\\c\u00e9\n","utf8":"é✓"})",
    R"([12345678901234567890123,"\ud83d\ude00"])",
};

TEST(YajlReader, DeliversEveryEventWithTheOffsetPastItsToken) {
    Read read = ReadWhole(R"({"a":[1,true,null,"x"],"b":{}})");
    EXPECT_EQ(read.status, YajlRead::kOk);
    std::vector<std::string> expected = {
        "{  @1",     "key a @4",  "[  @6",     "number 1 @7",
        "true  @12", "null  @17", "string x @21", "]  @22",
        "key b @26", "{  @28",    "}  @29",    "}  @30",
    };
    EXPECT_EQ(read.log, expected);
}

TEST(YajlReader, NumberEndingTheTextArrivesOnComplete) {
    Recorder recorder;
    YajlReader<Recorder> reader(recorder, &recorder.consumed);
    EXPECT_EQ(reader.Feed("42"), YajlRead::kOk);
    EXPECT_TRUE(recorder.log.empty());   // "42" may still go on
    EXPECT_EQ(reader.Complete(), YajlRead::kOk);
    EXPECT_EQ(recorder.log, std::vector<std::string>{"number 42 @2"});
}

// The plain lexer and yajl drive one handler alike: where the lexer does
// not give up, the events and their offsets are the same.
TEST(YajlReader, SameEventsAndOffsetsAsThePlainLexer) {
    int compared = 0;
    for (const char* text : kTexts) {
        Recorder plain;
        if (LexPlainJson(text, plain, &plain.consumed) != PlainJson::kDone) {
            continue;   // escapes, UTF-8: yajl's alone
        }
        compared++;
        Read yajl = ReadWhole(text);
        EXPECT_EQ(yajl.status, YajlRead::kOk) << text;
        EXPECT_EQ(yajl.log, plain.log) << text;
    }
    EXPECT_EQ(compared, 8);
}

TEST(YajlReader, StopsWhereThePlainLexerStops) {
    std::string text = kTexts[1];
    for (size_t stop = 0; stop < 14; stop++) {   // 14 events in all
        Recorder plain;
        plain.stop_at = stop;
        ASSERT_EQ(LexPlainJson(text, plain, &plain.consumed),
                  PlainJson::kStopped);
        Recorder yajl;
        yajl.stop_at = stop;
        YajlReader<Recorder> reader(yajl, &yajl.consumed);
        EXPECT_EQ(reader.ReadWhole(text), YajlRead::kStopped);
        EXPECT_EQ(yajl.log, plain.log) << "stop at " << stop;
    }
}

TEST(YajlReader, ChunksSplitAtEveryByteReadAsTheWholeText) {
    for (const char* text : kTexts) {
        std::string s = text;
        Read whole = ReadWhole(s);
        ASSERT_EQ(whole.status, YajlRead::kOk) << s;
        for (size_t cut = 0; cut <= s.size(); cut++) {
            Read split = ReadCutAt(s, {cut});
            EXPECT_EQ(split.status, YajlRead::kOk) << s << " cut " << cut;
            EXPECT_EQ(split.log, whole.log) << s << " cut " << cut;
        }
        std::vector<size_t> every_byte;
        for (size_t cut = 1; cut < s.size(); cut++) {
            every_byte.push_back(cut);
        }
        Read bytes = ReadCutAt(s, every_byte);
        EXPECT_EQ(bytes.status, YajlRead::kOk) << s;
        EXPECT_EQ(bytes.log, whole.log) << s;
    }
}

TEST(YajlReader, CancelFromAnEventIsFinal) {
    Recorder recorder;
    recorder.stop_at = 2;
    YajlReader<Recorder> reader(recorder, &recorder.consumed);
    EXPECT_EQ(reader.Feed(R"({"a":1,"b")"), YajlRead::kStopped);
    EXPECT_EQ(recorder.log.size(), 3u);
    EXPECT_EQ(recorder.log.back(), "number 1 @6");
    recorder.stop_at = SIZE_MAX;
    // Neither yajl nor the handler sees more.
    EXPECT_EQ(reader.Feed(R"(:2})"), YajlRead::kStopped);
    EXPECT_EQ(reader.Complete(), YajlRead::kStopped);
    EXPECT_EQ(recorder.log.size(), 3u);
}

TEST(YajlReader, InvalidTextsAreRefused) {
    const char* invalid[] = {
        "", " ", "{", "[1,]", "{\"a\"}", "{\"a\":1,}", "01", "1 2", "nul",
        "{} x", "[1]]", "\"a\nb\"", "\"\xff\"", "\"\xc3\"", "[1e]", "-",
        "{'a':1}", "/* c */ 1", "[\"\\x\"]",
    };
    for (const char* text : invalid) {
        EXPECT_EQ(ReadWhole(text).status, YajlRead::kInvalid)
            << "text: " << text;
    }
}

TEST(YajlReader, AnErrorIsFinal) {
    Recorder recorder;
    YajlReader<Recorder> reader(recorder, &recorder.consumed);
    EXPECT_EQ(reader.Feed("[1,]"), YajlRead::kInvalid);
    size_t events = recorder.log.size();
    EXPECT_EQ(reader.Feed("[2]"), YajlRead::kInvalid);
    EXPECT_EQ(reader.Complete(), YajlRead::kInvalid);
    EXPECT_EQ(recorder.log.size(), events);
}

TEST(YajlReader, ATextThatEndsEarlyIsRefusedOnComplete) {
    for (const char* text : {"{\"a\":", "[1", "\"abc", "tru", "{"}) {
        Recorder recorder;
        YajlReader<Recorder> reader(recorder, &recorder.consumed);
        EXPECT_EQ(reader.Feed(text), YajlRead::kOk) << text;
        EXPECT_EQ(reader.Complete(), YajlRead::kInvalid) << text;
    }
}

TEST(YajlReader, ResetStartsANewText) {
    Recorder recorder;
    YajlReader<Recorder> reader(recorder, &recorder.consumed);
    EXPECT_EQ(reader.ReadWhole("[1,]"), YajlRead::kInvalid);
    reader.Reset();
    recorder.log.clear();
    EXPECT_EQ(reader.ReadWhole("[7]"), YajlRead::kOk);
    EXPECT_EQ(recorder.log,
              (std::vector<std::string>{"[  @1", "number 7 @2", "]  @3"}));

    reader.Reset();
    recorder.log.clear();
    recorder.stop_at = 0;
    EXPECT_EQ(reader.Feed("{}"), YajlRead::kStopped);
    reader.Reset();
    recorder.log.clear();
    recorder.stop_at = SIZE_MAX;
    EXPECT_EQ(reader.ReadWhole("\"x\""), YajlRead::kOk);
    EXPECT_EQ(recorder.log, std::vector<std::string>{"string x @3"});
    // A text was read whole: more is trailing garbage until a Reset.
    EXPECT_EQ(reader.Feed(" \n"), YajlRead::kOk);
    EXPECT_EQ(reader.Feed("["), YajlRead::kInvalid);

    // Mid-text: what was fed before is forgotten.
    reader.Reset();
    recorder.log.clear();
    EXPECT_EQ(reader.Feed("[1, {\"a\":"), YajlRead::kOk);
    reader.Reset();
    recorder.log.clear();
    EXPECT_EQ(reader.ReadWhole("5"), YajlRead::kOk);
    EXPECT_EQ(recorder.log, std::vector<std::string>{"number 5 @1"});
}

TEST(YajlReader, AnExceptionFromTheHandlerLeavesAReaderToReset) {
    Recorder recorder;
    recorder.throw_at = 1;
    YajlReader<Recorder> reader(recorder, &recorder.consumed);
    EXPECT_THROW(reader.Feed("[1,2]"), std::runtime_error);
    reader.Reset();
    recorder.throw_at = SIZE_MAX;
    recorder.log.clear();
    EXPECT_EQ(reader.ReadWhole("[3]"), YajlRead::kOk);
    EXPECT_EQ(recorder.log.size(), 3u);
}

}  // namespace
}  // namespace solgate
