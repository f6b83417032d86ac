// The batch answer merger on any upstream answer, fed in two chunks: it
// never reads outside a chunk, and ends with the array closed; bare (a
// run of a batch that goes call by call), it writes no bracket of its own
// and never passes a non-array through.  Fed whole, in the two chunks, and
// byte by byte (where no key or id lies whole in a chunk, so none is read
// at once) it writes the same answer and asks the rewrite with the same
// ids and slots (a slot always a forwarded call's with that id); the
// rewrite replaces the elements whose id has an odd length.
#include "fuzz_common.h"
#include "json/batch_merger.h"

using namespace solgate;

static std::string Missing(std::string_view id) {
    return "{\"missing\":" + std::string(id) + "}";
}

// The merged answer and the ids (and slots) the rewrite was asked with.
struct Merged {
    std::string text;
    std::vector<std::string> asked;
};

// With feed_last, the last chunk goes with the end (FeedLast), as the
// module's last buffer does; else Finish comes apart.
static Merged MergeChunks(const std::vector<BatchMerger::Slot>& slots, bool bare,
                          const std::vector<std::string_view>& chunks,
                          bool feed_last) {
    Merged merged;
    BatchMerger merger(slots, Missing);
    if (bare) {
        merger.SetBare();
    }
    merger.SetRewrite([&merged, &slots](size_t slot, std::string_view id, std::string_view)
                          -> std::optional<std::string> {
        if (slot != BatchMerger::kNoSlot &&
            (slot >= slots.size() || !slots[slot].forwarded || slots[slot].id != id)) {
            fuzz::Fail("the rewrite is given the slot of a forwarded call with the element's id");
        }
        merged.asked.push_back(std::string(id) + " in slot " +
                               (slot == BatchMerger::kNoSlot ? "none" : std::to_string(slot)));
        if (id.size() % 2 == 0) {
            return std::nullopt;
        }
        return "{\"rewritten\":" + std::string(id) + "}";
    });
    auto apply = [&merged](const std::vector<BatchMerger::Segment>& segments,
                           std::string_view chunk) {
        for (const auto& seg : segments) {
            merged.text.append(seg.input ? chunk.substr(seg.offset, seg.length)
                                         : seg.text);
        }
    };
    for (size_t k = 0; k < chunks.size(); k++) {
        // each chunk in storage of its own, so a read past it is caught
        std::string own(chunks[k]);
        if (feed_last && k + 1 == chunks.size()) {
            apply(merger.FeedLast(own), own);
            return merged;
        }
        apply(merger.Feed(own), own);
    }
    apply(merger.Finish(), {});
    return merged;
}

static std::vector<std::string_view> Steps(std::string_view text, size_t step) {
    std::vector<std::string_view> chunks;
    for (size_t at = 0; at < text.size(); at += step) {
        chunks.push_back(text.substr(at, step));
    }
    return chunks;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::Split in = fuzz::SplitInput(data, size);
    std::vector<BatchMerger::Slot> slots;
    uint8_t shape = size > 0 ? data[0] : 0;
    for (int i = 0; i < 1 + shape % 5; i++) {
        if ((shape >> i) & 1) {
            slots.push_back({false, "{\"local\":" + std::to_string(i) + "}", {}});
        } else {
            slots.push_back({true, {}, std::to_string(i)});
        }
    }
    const bool bare = (shape & 0x80) != 0;
    BatchMerger merger(slots, Missing);
    if (bare) {
        merger.SetBare();
    }
    auto own_bracket = [](const BatchMerger::Segment& seg) {
        return !seg.input && (seg.text == "[" || seg.text == "]");
    };
    for (std::string_view chunk : {in.head, in.tail}) {
        for (const auto& seg : merger.Feed(chunk)) {
            if (seg.input && seg.offset + seg.length > chunk.size()) {
                fuzz::Fail("an input segment lies in its chunk");
            }
            if (bare && own_bracket(seg)) {
                fuzz::Fail("a bare merge writes no bracket");
            }
        }
    }
    std::string tail;
    for (const auto& seg : merger.Finish()) {
        if (bare && own_bracket(seg)) {
            fuzz::Fail("a bare merge writes no bracket");
        }
        if (!seg.input) tail.append(seg.text);
    }
    if (bare && merger.passthrough()) {
        fuzz::Fail("a bare merge never passes its input through whole");
    }
    if (!bare && !merger.passthrough() && (tail.empty() || tail.back() != ']')) {
        fuzz::Fail("a merged batch ends with its array closed");
    }
    std::string upstream = std::string(in.head) + std::string(in.tail);
    if (!upstream.empty()) {
        Merged whole = MergeChunks(slots, bare, {upstream}, true);
        Merged split = MergeChunks(slots, bare, {in.head, in.tail}, true);
        Merged bytes = MergeChunks(slots, bare, Steps(upstream, 1), false);
        if (whole.text != bytes.text || whole.text != split.text) {
            fuzz::Fail("fed whole, in two or byte by byte, the merged answer is the same");
        }
        if (whole.asked != bytes.asked || whole.asked != split.asked) {
            fuzz::Fail("fed whole, in two or byte by byte, the rewrite is asked the same ids");
        }
    }
    return 0;
}
