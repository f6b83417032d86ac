// JsonValueEvents: the nine events folded into values, keys and closes,
// the depth each is seen at, and the nesting bound, under both readers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "json/json_events.h"
#include "json/plain_json.h"
#include "json/yajl_reader.h"

namespace solgate {
namespace {

const char* KindName(JsonKind kind) {
    switch (kind) {
    case JsonKind::kNull: return "null";
    case JsonKind::kBool: return "bool";
    case JsonKind::kNumber: return "number";
    case JsonKind::kString: return "string";
    case JsonKind::kMap: return "map";
    case JsonKind::kArray: return "array";
    }
    return "?";
}

// Logs "depth:what" for every folded event; may stop at a container.
template <size_t kMaxDepth>
struct Walk : JsonValueEvents<Walk<kMaxDepth>, kMaxDepth> {
    std::vector<std::string> log;
    size_t consumed = 0;
    bool refuse_containers = false;

    void Note(const std::string& what) {
        log.push_back(std::to_string(this->depth()) + ":" + what);
    }
    bool OnValue(JsonKind kind, std::string_view text) {
        Note(std::string(KindName(kind)) + " " + std::string(text));
        bool container = kind == JsonKind::kMap || kind == JsonKind::kArray;
        return !(container && refuse_containers);
    }
    bool OnKey(std::string_view key) {
        Note("key " + std::string(key));
        return true;
    }
    bool OnClose() {
        Note("close");
        return true;
    }
    void Restart() { this->ResetNesting(); }
};

template <size_t kMaxDepth>
YajlRead ReadWithYajl(const std::string& text, Walk<kMaxDepth>& walk) {
    YajlReader<Walk<kMaxDepth>> reader(walk, &walk.consumed);
    return reader.ReadWhole(text);
}

TEST(JsonValueEvents, FoldsEventsIntoValuesSeenAtTheirDepth) {
    Walk<8> walk;
    std::string text = R"({"a":[1,true,false,null,"x"],"b":{}})";
    ASSERT_EQ(LexPlainJson(text, walk, &walk.consumed), PlainJson::kDone);
    std::vector<std::string> expected = {
        "0:map ",       "1:key a",    "1:array ",    "2:number 1",
        "2:bool true",  "2:bool false", "2:null null", "2:string x",
        "2:close",      "1:key b",    "1:map ",      "2:close",
        "1:close",
    };
    EXPECT_EQ(walk.log, expected);
    EXPECT_EQ(walk.depth(), 0u);
    EXPECT_FALSE(walk.too_deep());

    Walk<8> yajl;
    EXPECT_EQ(ReadWithYajl(text, yajl), YajlRead::kOk);
    EXPECT_EQ(yajl.log, expected);
}

TEST(JsonValueEvents, NestingUpToTheBoundIsRead) {
    for (const char* text : {"[[[1]]]", "[[[]],[[]],{\"a\":[]}]"}) {
        Walk<3> plain;
        EXPECT_EQ(LexPlainJson(text, plain, &plain.consumed), PlainJson::kDone)
            << text;
        EXPECT_FALSE(plain.too_deep()) << text;
        Walk<3> yajl;
        EXPECT_EQ(ReadWithYajl(text, yajl), YajlRead::kOk) << text;
        EXPECT_FALSE(yajl.too_deep()) << text;
        EXPECT_EQ(yajl.log, plain.log) << text;
    }
}

TEST(JsonValueEvents, AContainerPastTheBoundStopsBeforeTheHandlerSeesIt) {
    for (const char* text : {"[[[[1]]]]", "[[[{}]]]", "[1,[2,[3,{\"a\":{}}]]]",
                             "{\"a\":{\"b\":{\"c\":[]}}}"}) {
        Walk<3> plain;
        EXPECT_EQ(LexPlainJson(text, plain, &plain.consumed),
                  PlainJson::kStopped)
            << text;
        EXPECT_TRUE(plain.too_deep()) << text;
        EXPECT_EQ(plain.depth(), 3u) << text;
        for (const std::string& event : plain.log) {
            bool opens = event.find("map") != std::string::npos ||
                         event.find("array") != std::string::npos;
            EXPECT_FALSE(opens && event[0] == '3') << text << " " << event;
        }

        Walk<3> yajl;
        EXPECT_EQ(ReadWithYajl(text, yajl), YajlRead::kStopped) << text;
        EXPECT_TRUE(yajl.too_deep()) << text;
        EXPECT_EQ(yajl.log, plain.log) << text;
    }
}

TEST(JsonValueEvents, AContainerTheHandlerRefusesIsNotCounted) {
    Walk<8> walk;
    walk.refuse_containers = true;
    EXPECT_EQ(LexPlainJson("[1]", walk, &walk.consumed), PlainJson::kStopped);
    EXPECT_EQ(walk.depth(), 0u);
    EXPECT_FALSE(walk.too_deep());
    EXPECT_EQ(walk.log, std::vector<std::string>{"0:array "});
}

TEST(JsonValueEvents, ResetNestingReadsAgainFromTheTop) {
    Walk<2> walk;
    EXPECT_EQ(ReadWithYajl("[[[0]]]", walk), YajlRead::kStopped);
    EXPECT_TRUE(walk.too_deep());
    walk.Restart();
    walk.log.clear();
    EXPECT_EQ(walk.depth(), 0u);
    EXPECT_FALSE(walk.too_deep());
    EXPECT_EQ(ReadWithYajl("[[0]]", walk), YajlRead::kOk);
    EXPECT_EQ(walk.log, (std::vector<std::string>{"0:array ", "1:array ",
                                                  "2:number 0", "2:close",
                                                  "1:close"}));
}

}  // namespace
}  // namespace solgate
