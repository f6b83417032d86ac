// The getSlot answer reader against yajl, and its rewrite: a rewritten
// answer reads back as the new slot.
#include "fuzz_common.h"
#include "json/slot_answer.h"

using namespace solgate;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view body = fuzz::Text(data, size);
    auto fast = ParseSlotAnswer(body);
    auto reference = ParseSlotAnswerWithYajl(body);
    if (fast.has_value() != reference.has_value() ||
        (fast && fast->slot != reference->slot)) {
        fuzz::Fail("the fast reader and yajl read the getSlot answer alike");
    }
    if (fast) {
        std::string rewritten = ReplaceSlot(body, *fast, 123456789);
        auto again = ParseSlotAnswer(rewritten);
        if (!again || again->slot != 123456789) {
            fuzz::Fail("a rewritten answer reads back as the new slot");
        }
    }
    (void) ParseSlotNumber(body);
    return 0;
}
