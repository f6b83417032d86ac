// What the state poller reads from a node's answers, on any body.
#include "fuzz_common.h"
#include "slots/poll_reply.h"

using namespace solgate;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    HttpResult reply;
    reply.http_status = size > 0 && data[0] % 7 == 0 ? 503 : 200;
    reply.body.assign(reinterpret_cast<const char*>(data), size);
    (void) ReplyU64(reply);
    (void) ReplyString(reply);
    (void) ReplyHealthy(reply);
    (void) HttpFailure(reply);
    if (Excerpt(reply.body).size() > reply.body.size() + 64) {
        fuzz::Fail("an excerpt is no longer than the body");
    }
    return 0;
}
