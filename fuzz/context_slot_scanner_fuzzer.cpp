// context.slot harvest fed whole and in two chunks must agree.
#include "fuzz_common.h"
#include "json/context_slot_scanner.h"

using namespace solgate;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::Split in = fuzz::SplitInput(data, size);
    ContextSlotScanner whole, chunked;
    whole.Feed(in.whole.data(), in.whole.size());
    chunked.Feed(in.head.data(), in.head.size());
    chunked.Feed(in.tail.data(), in.tail.size());
    if (whole.Finish() != chunked.Finish() ||
        whole.slot() != chunked.slot()) {
        fuzz::Fail("whole and chunked feeding harvest the same slot");
    }
    return 0;
}
