// Another region's summary (what its cache holds), as a peer answers it.
#include "blocks/block_sync.h"
#include "blocks/slot_ranges.h"
#include "fuzz_common.h"

using namespace solgate;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    HttpResult reply;
    reply.http_status = 200;
    reply.body.assign(reinterpret_cast<const char*>(data), size);
    RegionSummary summary;
    std::string why;
    if (!ParseRegionSummary(reply, &summary, &why) && why.empty()) {
        fuzz::Fail("a refused summary says why");
    }
    auto ranges = SlotRanges::Parse(fuzz::Text(data, size), 1000);
    if (ranges) {
        auto again = SlotRanges::Parse(ranges->ToText());
        if (!again || again->ToText() != ranges->ToText()) {
            fuzz::Fail("slot ranges read back as written");
        }
    }
    return 0;
}
