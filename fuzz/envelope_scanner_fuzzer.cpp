// The envelope scanner (where a getBlock answer's id is) fed whole and in
// two chunks must agree; an id it finds lies in the body.
#include "fuzz_common.h"
#include "json/envelope_scanner.h"

using namespace solgate;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fuzz::Split in = fuzz::SplitInput(data, size);
    EnvelopeScanner whole, chunked;
    whole.Feed(in.whole.data(), in.whole.size());
    chunked.Feed(in.head.data(), in.head.size());
    chunked.Feed(in.tail.data(), in.tail.size());
    bool a = whole.Finish(), b = chunked.Finish();
    if (a != b) {
        fuzz::Fail("whole and chunked feeding agree on validity");
    }
    if (a) {
        EnvelopeScanner::Result x = whole.result(), y = chunked.result();
        if (x.id_offset != y.id_offset || x.id_length != y.id_length ||
            x.has_result != y.has_result || x.has_error != y.has_error ||
            x.error_code != y.error_code) {
            fuzz::Fail("whole and chunked feeding find the same envelope");
        }
        if (x.id_offset + x.id_length > in.whole.size()) {
            fuzz::Fail("the id lies in the body");
        }
    }
    return 0;
}
