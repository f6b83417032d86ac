#include "json/batch_merger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace solgate {
namespace {

using Slot = BatchMerger::Slot;

std::string Missing(std::string_view id) {
    return R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"none"},"id":)" +
           std::string(id) + "}";
}

std::string Apply(const std::vector<BatchMerger::Segment>& segments,
                  std::string_view chunk) {
    std::string out;
    for (const auto& s : segments) {
        if (s.input) {
            out.append(chunk.substr(s.offset, s.length));
        } else {
            out.append(s.text);
        }
    }
    return out;
}

// What a rewrite that replaces nothing was asked: each element's id and
// slot, in order.
struct Asked {
    std::vector<std::string> ids;
    std::vector<size_t> slots;
};

// The merged answer, fed in chunks of `step` bytes; with `asked`, under a
// rewrite that replaces nothing and records what it is asked there.
std::string Merge(const std::vector<Slot>& slots, std::string_view upstream,
                  size_t step, Asked* asked = nullptr) {
    BatchMerger merger(slots, Missing);
    if (asked != nullptr) {
        merger.SetRewrite([asked](size_t slot, std::string_view id, std::string_view)
                              -> std::optional<std::string> {
            asked->ids.emplace_back(id);
            asked->slots.push_back(slot);
            return std::nullopt;
        });
    }
    std::string out;
    for (size_t at = 0; at < upstream.size(); at += step) {
        std::string_view chunk = upstream.substr(at, step);
        out += Apply(merger.Feed(chunk), chunk);
    }
    return out + Apply(merger.Finish(), {});
}

const std::vector<Slot> kSlots = {
    {false, R"({"jsonrpc":"2.0","result":"genesis","id":1})", ""},
    {true, R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"none"},"id":2})", "2"},
    {false, R"({"jsonrpc":"2.0","error":{"code":-32004,"message":"guard"},"id":3})", ""},
    {true, R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"none"},"id":4})", "4"},
};

TEST(BatchMerger, LocalAnswersTakeTheirPlacesWhateverTheChunks) {
    const std::string upstream =
        " [ {\"jsonrpc\":\"2.0\",\"result\":5,\"id\":2} ,\n"
        "{\"jsonrpc\":\"2.0\",\"result\":{\"a\":[1,\"]\\\"}\"]},\"id\":4}]\n";
    const std::string want =
        R"([{"jsonrpc":"2.0","result":"genesis","id":1},)"
        R"({"jsonrpc":"2.0","result":5,"id":2} ,)"
        R"({"jsonrpc":"2.0","error":{"code":-32004,"message":"guard"},"id":3},)"
        "{\"jsonrpc\":\"2.0\",\"result\":{\"a\":[1,\"]\\\"}\"]},\"id\":4}]";
    for (size_t step = 1; step <= upstream.size(); step++) {
        EXPECT_EQ(Merge(kSlots, upstream, step), want) << "step " << step;
    }
}

TEST(BatchMerger, AMissingAnswerGetsItsTextAndExtrasAreKept) {
    EXPECT_EQ(Merge(kSlots, R"([{"id":2}])", 3),
              R"([{"jsonrpc":"2.0","result":"genesis","id":1},{"id":2},)"
              R"({"jsonrpc":"2.0","error":{"code":-32004,"message":"guard"},"id":3},)"
              R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"none"},"id":4}])");
    // the answers come by id, not by place: the one missing is id 2
    for (size_t step = 1; step < 30; step++) {
        EXPECT_EQ(Merge(kSlots, R"([ {"result":{"id":2},"id" : 4} ])", step),
                  R"([{"jsonrpc":"2.0","result":"genesis","id":1},)"
                  R"({"result":{"id":2},"id" : 4} ,)"
                  R"({"jsonrpc":"2.0","error":{"code":-32004,"message":"guard"},"id":3},)"
                  R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"none"},"id":2}])")
            << "step " << step;
    }
    // reordered answers: nobody is missing
    EXPECT_EQ(Merge(kSlots, R"([{"id":4},{"jsonrpc":"2.0","id":2}])", 5),
              R"([{"jsonrpc":"2.0","result":"genesis","id":1},{"id":4},)"
              R"({"jsonrpc":"2.0","error":{"code":-32004,"message":"guard"},"id":3},)"
              R"({"jsonrpc":"2.0","id":2}])");
    // string ids, escapes in keys and values
    EXPECT_EQ(Merge({{true, "missing", "\"a\\\"b\""}},
                    R"([{"x\"id":1,"id":"a\"b"}])", 2),
              R"([{"x\"id":1,"id":"a\"b"}])");
    const std::vector<Slot> one = {{true, "x", "1"}};
    BatchMerger merger(one, Missing);
    std::string_view up = R"([{"id":1},2])";
    std::string out = Apply(merger.Feed(up), up);
    out += Apply(merger.Finish(), {});   // after Feed's segments were read
    EXPECT_EQ(out, R"([{"id":1},2])");
    EXPECT_EQ(merger.extra_elements(), 1u);
    // no answer at all
    EXPECT_EQ(Merge({{false, "a", ""}, {true, "", "7"}}, "", 1),
              "[a," + Missing("7") + "]");
    // past kMaxExtraElements extras are dropped
    std::string many = "[";
    for (size_t i = 0; i < 100; i++) many += (i ? ",{\"id\":" : "{\"id\":") + std::to_string(i) + "}";
    many += "]";
    std::string merged = Merge({{true, "x", "0"}}, many, 7);
    size_t elements = static_cast<size_t>(std::count(merged.begin(), merged.end(), '{'));
    EXPECT_EQ(elements, 1 + BatchMerger::kMaxExtraElements) << merged;
}

std::string CutShort(std::string_view id) {
    return "cut:" + std::string(id);
}

TEST(BatchMerger, AnotherMissingAnswerStandsForTheCallsLeft) {
    const std::vector<Slot> slots = {{false, "a", ""}, {true, "", "7"}};
    BatchMerger merger(slots, Missing);
    merger.SetMissing(CutShort);
    EXPECT_EQ(Apply(merger.FeedLast(""), {}), "[a,cut:7]");
}

// An element dropped past kMaxExtraElements answers no call, even one
// whose id it carries: that call gets its missing answer, as when no
// element came for it.
TEST(BatchMerger, ADroppedElementLeavesItsCallToItsMissingAnswer) {
    const std::vector<Slot> slots = {{true, "x", "1"}, {true, "x", "2"}};
    std::string up = R"([{"id":9},{"id":8})";
    for (size_t k = 0; k < BatchMerger::kMaxExtraElements; k++) {
        up += ",{\"id\":" + std::to_string(100 + k) + "}";
    }
    up += R"(,{"id":2}])";
    std::string merged = Merge(slots, up, up.size());
    EXPECT_EQ(merged.find(R"({"id":2})"), std::string::npos) << merged;
    EXPECT_NE(merged.find(Missing("1")), std::string::npos) << merged;
    EXPECT_NE(merged.find(Missing("2")), std::string::npos) << merged;
}

// An element small enough to hold whole is offered to the rewrite, with the
// slot it answers and its id: a getSlot answer inside a batch is corrected
// so.
TEST(BatchMerger, SmallElementsAreOfferedToTheRewriteWithTheirSlot) {
    std::vector<Slot> slots = {{false, "L", ""}, {true, "m1", "1"},
                               {true, "m2", "\"s\""}};
    std::string big(3000, 'x');
    const std::string upstream = R"([{"result":5,"id":"s"},{"result":")" +
                                 big + R"(","id":1}])";
    for (size_t step : {1, 7, 64, 5000}) {
        BatchMerger merger(slots, Missing);
        std::vector<std::string> asked;
        std::vector<size_t> asked_slots;
        merger.SetRewrite([&](size_t slot, std::string_view id, std::string_view)
                              -> std::optional<std::string> {
            asked.emplace_back(id);
            asked_slots.push_back(slot);
            if (id == "\"s\"") {
                return std::string(R"({"result":9,"id":"s"})");
            }
            return std::nullopt;
        });
        std::string out;
        for (size_t at = 0; at < upstream.size(); at += step) {
            std::string_view chunk = std::string_view(upstream).substr(at, step);
            out += Apply(merger.Feed(chunk), chunk);
        }
        out += Apply(merger.Finish(), {});
        EXPECT_EQ(out, R"([L,{"result":9,"id":"s"},{"result":")" + big +
                           R"(","id":1}])")
            << "step " << step;
        EXPECT_EQ(asked, std::vector<std::string>{"\"s\""})
            << "the big element streams, unasked";
        EXPECT_EQ(asked_slots, std::vector<size_t>{2});
    }
}

// Keys and ids are read at once when they lie whole in a chunk and byte
// by byte when they do not: every shape of id is matched (or not) alike
// whatever the chunks, and the rewrite is asked with the same ids.
TEST(BatchMerger, IdsOfEveryShapeAreReadAlikeWhateverTheChunks) {
    const std::string long_id = "\"" + std::string(300, 'L') + "\"";
    std::vector<Slot> slots = {
        {true, "", "\"a,b}\""}, {true, "", "null"},   {true, "", "{\"x\":1}"},
        {true, "", "\"a\\\"b\""}, {true, "", "[1]"},  {true, "", long_id},
        {true, "", "5"},          {true, "", "6"},
    };
    // reordered, so each is matched by its id (the long one by its first
    // 257 bytes); "i\u0064" is no "id" key,
    // and the element with it alone leaves id 6 missing; an element
    // without an id (after one with an id, in one chunk) is asked with none
    const std::string upstream =
        "[{\"result\":{\"id\":7},\"id\" : 5 },{\"id\":\"a,b}\"},"
        "{\"id\":{\"x\":1}},{\"id\":null},{\"result\":0},{\"id\":\"a\\\"b\"},"
        "{\"jsonrpc\":\"2.0\",\"id\":[1]},{\"id\":" + long_id + "},"
        "{\"i\\u0064\":6}]";
    Asked whole_asked;
    std::string whole = Merge(slots, upstream, upstream.size(), &whole_asked);
    EXPECT_EQ(whole, upstream.substr(0, upstream.size() - 1) + "," +
                         Missing("6") + "]");
    EXPECT_EQ(whole_asked.ids,
              (std::vector<std::string>{"5", "\"a,b}\"", "{\"x\":1}", "null",
                                        "", "\"a\\\"b\"", "[1]",
                                        std::string(long_id, 0, 257), ""}));
    for (size_t step = 1; step < upstream.size(); step++) {
        Asked asked;
        EXPECT_EQ(Merge(slots, upstream, step, &asked), whole) << "step " << step;
        EXPECT_EQ(asked.ids, whole_asked.ids) << "step " << step;
    }
}

// A node writes the ids of its answers anew: a string's escapes may come
// back decoded ("a\/b" as "a/b", "caf\u00e9" as UTF-8). Each is still
// its call's answer, offered to the rewrite with its slot, and no call is
// left missing.
TEST(BatchMerger, AnIdWrittenAnewByTheNodeStillAnswersItsCall) {
    std::vector<Slot> slots = {{true, "", "\"a\\/b\""},
                               {true, "", "\"caf\\u00e9\""},
                               {true, "", "\"\\ud83d\\ude00\""},
                               {true, "", "2"}};
    const std::string upstream =
        "[{\"result\":1,\"id\":\"a/b\"},{\"result\":2,\"id\":\"caf\xc3\xa9\"},"
        "{\"result\":3,\"id\":\"\xf0\x9f\x98\x80\"},{\"result\":4,\"id\":2}]";
    for (size_t step : {size_t{1}, size_t{5}, upstream.size()}) {
        Asked asked;
        EXPECT_EQ(Merge(slots, upstream, step, &asked), upstream)
            << "step " << step;
        EXPECT_EQ(asked.slots, (std::vector<size_t>{0, 1, 2, 3}))
            << "step " << step;
    }
}

// Two calls whose ids differ in bytes, not value ("a\/b", "a/b"): answers
// in order go to their own calls (the slot being filled is tried by value
// before another slot by its bytes).
TEST(BatchMerger, IdsOfOneValueAreAnsweredInOrder) {
    std::vector<Slot> slots = {{true, "", "\"a\\/b\""}, {true, "", "\"a/b\""}};
    const std::string upstream =
        "[{\"result\":1,\"id\":\"a/b\"},{\"result\":2,\"id\":\"a/b\"}]";
    Asked asked;
    EXPECT_EQ(Merge(slots, upstream, upstream.size(), &asked), upstream);
    EXPECT_EQ(asked.slots, (std::vector<size_t>{0, 1}));
}

// The shape nodes answer a number in is read by comparison; its near
// misses (a space before the comma, an escape in the id, a result that is
// no plain number, a fraction for an id) by the general reading: all are
// matched, sent and asked about alike whatever the chunks.
TEST(BatchMerger, TheNodesShapeAndItsNearMissesAreReadAlike) {
    const std::string head = R"({"jsonrpc":"2.0","result":)";
    const std::vector<std::string> ids = {
        "1", "-2", "\"a,}\"", "\"e\\\"\"", "3", "4.5", "5", "6", "\"\"", "7"};
    std::vector<Slot> slots;
    for (const auto& id : ids) {
        slots.push_back({true, "", id});
    }
    const std::string upstream =
        "[" + head + "300,\"id\":1}," + head + "0,\"id\":-2}," +
        head + "12,\"id\":\"a,}\"}," + head + "1,\"id\":\"e\\\"\"}," +
        head + "1,\"id\":3} ," + head + "1,\"id\":4.5}," +
        head + "-1,\"id\":5}," + head + "\"1\",\"id\":6}," +
        head + "9,\"id\":\"\"}," + head + "8,\"id\":7}]";
    Asked whole_asked;
    EXPECT_EQ(Merge(slots, upstream, upstream.size(), &whole_asked), upstream);
    std::vector<size_t> in_order(ids.size());
    for (size_t k = 0; k < ids.size(); k++) {
        in_order[k] = k;
    }
    EXPECT_EQ(whole_asked.ids, ids);
    EXPECT_EQ(whole_asked.slots, in_order);
    for (size_t step = 1; step < upstream.size(); step++) {
        Asked asked;
        EXPECT_EQ(Merge(slots, upstream, step, &asked), upstream) << "step " << step;
        EXPECT_EQ(asked.ids, ids) << "step " << step;
        EXPECT_EQ(asked.slots, in_order) << "step " << step;
    }
}

TEST(BatchMerger, AnAnswerThatIsNoArrayPassesAsItIs) {
    BatchMerger merger(kSlots, Missing);
    std::string_view up = R"({"jsonrpc":"2.0","error":{"code":-32600},"id":null})";
    EXPECT_EQ(Apply(merger.Feed(up), up), up);
    EXPECT_TRUE(merger.passthrough());
    EXPECT_TRUE(merger.Finish().empty());
}

// A run of a batch that went call by call: its elements only, whatever
// the chunks; an answer that is no array gives each call its text.
TEST(BatchMerger, BareMergesHaveNoBrackets) {
    const std::string up = R"( [{"jsonrpc":"2.0","result":7,"id":2},)"
                           R"({"jsonrpc":"2.0","result":8,"id":4}] )";
    for (size_t step : {1u, 3u, 100u}) {
        BatchMerger merger(kSlots, Missing);
        merger.SetBare();
        std::string out;
        for (size_t at = 0; at < up.size(); at += step) {
            std::string_view chunk = std::string_view(up).substr(at, step);
            out += Apply(merger.Feed(chunk), chunk);
        }
        out += Apply(merger.Finish(), {});
        EXPECT_EQ(out, kSlots[0].text + R"(,{"jsonrpc":"2.0","result":7,"id":2},)" +
                           kSlots[2].text + R"(,{"jsonrpc":"2.0","result":8,"id":4})")
            << step;
    }
    BatchMerger merger(kSlots, Missing);
    merger.SetBare();
    std::string_view no_array = R"({"jsonrpc":"2.0","error":{"code":-32600},"id":null})";
    std::string out = Apply(merger.Feed(no_array), no_array);
    out += Apply(merger.Finish(), {});
    EXPECT_FALSE(merger.passthrough());
    EXPECT_EQ(out, kSlots[0].text + "," + kSlots[2].text + "," + Missing("2") +
                       "," + Missing("4"));
    const std::vector<Slot> no_calls;
    BatchMerger none(no_calls, Missing);   // a run of notifications
    none.SetBare();
    std::string_view empty_array = "[]";
    EXPECT_EQ(Apply(none.Feed(empty_array), empty_array) +
                  Apply(none.Finish(), {}),
              "");
}

TEST(BatchMerger, AWholeElementInOneChunkIsOneInputRange) {
    const std::vector<Slot> one = {{true, "x", "1"}};
    BatchMerger merger(one, Missing);
    std::string_view first = "[";
    merger.Feed(first);
    std::string_view body = std::string_view(R"({"result":"big"})");
    const auto& segments = merger.Feed(body);
    ASSERT_EQ(segments.size(), 1u);
    EXPECT_TRUE(segments[0].input);
    EXPECT_EQ(segments[0].length, body.size());
}

// Forwarded elements one after another, with nothing to put between them,
// go out as one range of the chunk, their commas included.
TEST(BatchMerger, ConsecutiveForwardedElementsAreOneInputRange) {
    const std::vector<Slot> three = {{true, "x", "1"}, {true, "x", "2"},
                                     {true, "x", "3"}};
    BatchMerger merger(three, Missing);
    std::string_view up = R"([{"id":1},{"id":2},{"id":3}])";
    const auto& segments = merger.Feed(up);
    ASSERT_EQ(segments.size(), 2u);
    EXPECT_EQ(segments[0].text, "[");
    EXPECT_TRUE(segments[1].input);
    EXPECT_EQ(segments[1].offset, 1u);
    EXPECT_EQ(segments[1].length, up.size() - 2);
    // a space after a comma: the merger's own comma, the same text
    EXPECT_EQ(Merge({{true, "x", "1"}, {true, "x", "2"}}, R"([{"id":1}, {"id":2}])", 100),
              R"([{"id":1},{"id":2}])");
}

// The last chunk fed with the end: the texts made for its elements (a
// rewrite) are still there beside the end's.
TEST(BatchMerger, ALastChunkFedWithTheEndKeepsItsRewrittenElements) {
    const std::vector<Slot> slots = {{true, "m1", "1"}, {false, "L", ""},
                                     {true, "m2", "2"}};
    std::string_view up = R"([{"result":5,"id":1}])";
    for (size_t split : {size_t{0}, size_t{1}, size_t{8}, up.size()}) {
        BatchMerger merger(slots, Missing);
        merger.SetRewrite([](size_t, std::string_view id, std::string_view)
                              -> std::optional<std::string> {
            return std::string(R"({"rewritten":)") + std::string(id) + "}";
        });
        std::string_view head = up.substr(0, split);
        std::string_view tail = up.substr(split);
        std::string out = Apply(merger.Feed(head), head);
        // the segments read only after the whole list is made
        std::string tail_copy(tail);
        out += Apply(merger.FeedLast(tail_copy), tail_copy);
        EXPECT_EQ(out, R"([{"rewritten":1},L,)" + Missing("2") + "]") << split;
    }
}

// A merger made with the storage another one left (as each batch's merge
// is, from the thread's spares) starts as a new one: nothing of the last
// answer is in the next.
TEST(BatchMerger, ARoomFromAnotherMergerLeavesNothingOfIt) {
    // the upstream leaves out call 2: it gets its missing answer
    std::string_view up = R"([{"id":4}])";
    std::string fresh = Merge(kSlots, up, 3);
    ASSERT_NE(fresh.find(Missing("2")), std::string::npos);
    BatchMerger::Room room;
    {
        BatchMerger first(kSlots, Missing);
        std::string_view half = R"([{"id":2},{"id")";
        first.Feed(half);   // stopped inside an element, call 2 answered
        room = std::move(first).TakeRoom();
    }
    ASSERT_EQ(room.answered.size(), kSlots.size());
    EXPECT_EQ(room.answered[1], 1);
    BatchMerger merger(kSlots, Missing, std::move(room));
    std::string out = Apply(merger.Feed(up.substr(0, 3)), up.substr(0, 3));
    out += Apply(merger.Feed(up.substr(3)), up.substr(3));
    out += Apply(merger.Finish(), {});
    EXPECT_EQ(out, fresh);
}

}  // namespace
}  // namespace solgate
