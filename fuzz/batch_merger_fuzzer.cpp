// The batch answer merger on any upstream answer, fed in two chunks: it
// never reads outside a chunk, and ends with the array closed; bare (a
// run of a batch that goes call by call), it writes no bracket of its own
// and never passes a non-array through.
#include "fuzz_common.h"
#include "json/batch_merger.h"

using namespace solgate;

static std::string Missing(std::string_view id) {
    return "{\"missing\":" + std::string(id) + "}";
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
    return 0;
}
