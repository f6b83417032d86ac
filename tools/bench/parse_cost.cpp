// The instructions one request's parse costs: sg_request_parse and
// sg_request_free on a body, as the gateway calls them per request, in a
// loop. Run by tools/bench/parse_cost.sh under callgrind, which counts only
// inside Measure (--toggle-collect), after a warm-up that fills the
// thread's spares as a warm worker's are.
//
//   parse_cost [N] [BODY]   (default: 20000 rounds of getBalance)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "solgate/solgate.h"

namespace {

// bench/lib.sh's balance body, with a commitment as clients often send
constexpr const char kBalance[] =
    R"({"jsonrpc":"2.0","id":1,"method":"getBalance","params":)"
    R"(["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",)"
    R"({"commitment":"confirmed"}]})";

int Round(const std::string& body) {
    sg_request_t* req = nullptr;
    int rc = sg_request_parse(body.data(), body.size(), &req);
    sg_request_free(req);
    return rc;
}

// What callgrind counts; not inlined, so its name is there to toggle on.
__attribute__((noinline)) int Measure(const std::string& body, long rounds) {
    int failed = 0;
    for (long i = 0; i < rounds; i++) {
        failed += Round(body) != SG_OK;
    }
    return failed;
}

}  // namespace

int main(int argc, char** argv) {
    long rounds = argc > 1 ? std::atol(argv[1]) : 20000;
    std::string body = argc > 2 ? argv[2] : kBalance;
    for (int i = 0; i < 100; i++) {
        Round(body);
    }
    if (Measure(body, rounds) != 0) {
        std::fprintf(stderr, "parse_cost: sg_request_parse failed\n");
        return 1;
    }
    std::printf("parse_cost: %ld rounds of %zu bytes\n", rounds, body.size());
    return 0;
}
