// The batch answer merger on any upstream answer, fed in two chunks: it
// never reads outside a chunk, and ends with the array closed.
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
    BatchMerger merger(slots, Missing);
    for (std::string_view chunk : {in.head, in.tail}) {
        for (const auto& seg : merger.Feed(chunk)) {
            if (seg.input && seg.offset + seg.length > chunk.size()) {
                fuzz::Fail("an input segment lies in its chunk");
            }
        }
    }
    std::string tail;
    for (const auto& seg : merger.Finish()) {
        if (!seg.input) tail.append(seg.text);
    }
    if (!merger.passthrough() && (tail.empty() || tail.back() != ']')) {
        fuzz::Fail("a merged batch ends with its array closed");
    }
    return 0;
}
