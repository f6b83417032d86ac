// The use-upstream selector grammar and the method glob.
#include "fuzz_common.h"
#include "routing/selector.h"

using namespace solgate;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::Split in = fuzz::SplitInput(data, size);
    std::string error;
    auto selector = Selector::Parse(in.whole, &error);
    if (!selector && error.empty()) {
        fuzz::Fail("a refused selector says why");
    }
    if (selector) {
        static const std::vector<std::string> kTags = {"region:us",
                                                       "tier:archive"};
        (void) selector->Matches("node-a", kTags, "pool");
    }
    (void) GlobMatch(in.head, in.tail);
    return 0;
}
