// The instructions a forwarded request costs in libcore, call by call: what
// the gateway does for a getBalance that one upstream answers
// (ngx_http_solgate_access.c, _response.c, _ctx.c), in a loop:
//
//   sg_request_parse, sg_request_route (sg_request_fanout only if the
//   route says a policy takes it: none here),
//   sg_request_pick, sg_response_new (+ feed/finish on a harvest turn,
//   free), sg_request_report (200 with the whole answer),
//   sg_request_finish, sg_request_free
//
// against a network built through the C API as ngx_module builds one (as
// libcore/test/capi/c_api_test.cpp does): three upstreams, no selector,
// bound to fresh memory of its own; no poller (no slot views), so nothing
// here does network I/O. The clock advances 1 ms a round, as a gateway's
// at 1000 requests/s: one round in 20 is an upstream's harvest turn
// (Network::TakeHarvestTurn). Run by tools/bench/request_cost.sh under
// callgrind, which counts only inside Measure (--toggle-collect), after a
// warm-up that fills the thread's spares as a warm worker's are.
//
//   request_cost [N] [BODY]   (default: 20000 rounds of getBalance)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "solgate/solgate.h"

namespace {

// bench/lib.sh's balance body, with a commitment as clients often send
constexpr const char kBalance[] =
    R"({"jsonrpc":"2.0","id":1,"method":"getBalance","params":)"
    R"(["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",)"
    R"({"commitment":"confirmed"}]})";

// the bench upstream's balance answer (tools/bench/README.md, port 19611)
constexpr const char kAnswer[] =
    R"({"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.0.15",)"
    R"("slot":300000000},"value":0},"id":1})";

sg_str_t S(const char* text) { return {text, std::strlen(text)}; }

sg_network_t* MakeNetwork(std::unique_ptr<char[]>* shared) {
    char err[256];
    sg_network_t* net = nullptr;
    if (sg_network_new(S("bench"), &net, err, sizeof(err)) != SG_OK ||
        sg_network_set_cluster(net, S("mainnet-beta"), err, sizeof(err)) !=
            SG_OK) {
        std::fprintf(stderr, "request_cost: %s\n", err);
        return nullptr;
    }
    const char* upstreams[][2] = {{"a", "http://127.0.0.1:1"},
                                  {"b", "http://127.0.0.1:2"},
                                  {"c", "http://127.0.0.1:3"}};
    for (auto& words : upstreams) {
        sg_str_t args[2] = {S(words[0]), S(words[1])};
        sg_upstream_info_t info;
        if (sg_network_add_upstream(net, args, 2, &info, err, sizeof(err)) !=
            SG_OK) {
            std::fprintf(stderr, "request_cost: %s\n", err);
            return nullptr;
        }
    }
    sg_network_settings_t settings;
    sg_network_settings_default(&settings);
    if (sg_network_configure(net, &settings, err, sizeof(err)) != SG_OK) {
        std::fprintf(stderr, "request_cost: %s\n", err);
        return nullptr;
    }
    shared->reset(new char[sg_network_shared_size()]);
    if (sg_network_bind(net, shared->get(), 1, 0, err, sizeof(err)) != SG_OK) {
        std::fprintf(stderr, "request_cost: %s\n", err);
        return nullptr;
    }
    return net;
}

// One forwarded request; false when a call did not do what the gateway's
// forwarded getBalance does.
bool Round(const std::string& body, sg_network_t* net, int64_t now_ms) {
    sg_request_t* req = nullptr;
    if (sg_request_parse(body.data(), body.size(), &req) != SG_OK) {
        return false;
    }
    const sg_selector_sources_t sources{};
    sg_route_t route;
    bool ok = sg_request_route(req, net, &sources, now_ms, &route) == SG_OK &&
              route.kind == SG_ROUTE_FORWARD;
    // as the access phase: the fan-out is asked only when the route says
    // a policy takes the request (none does here)
    if (ok && route.fan_out) {
        size_t targets[8];
        sg_fanout_t fanout;
        ok = sg_request_fanout(req, now_ms, targets, 8, &fanout) == SG_OK &&
             fanout.kind == SG_FANOUT_NONE;
    }
    sg_pick_t pick;
    ok = ok && sg_request_pick(req, now_ms, &pick) == SG_OK;
    if (ok) {
        sg_response_t* resp = nullptr;
        if (sg_response_new(req, now_ms, &resp) == SG_OK) {
            if (sg_response_feed(resp, kAnswer, sizeof(kAnswer) - 1, now_ms) !=
                SG_OK) {
                sg_response_finish(resp, now_ms);
            }
        }
        sg_attempt_end_t end{};
        end.http_status = 200;
        end.connected = 1;
        end.answer = S(kAnswer);
        sg_attempt_report_t report;
        ok = sg_request_report(req, &end, now_ms, &report) == SG_OK &&
             !report.failed;
        sg_request_finish(req, 200, 0, SG_RPC_ERROR_CODE_UNREAD, 1);
        sg_response_free(resp);
    }
    sg_request_free(req);
    return ok;
}

// What callgrind counts; not inlined, so its name is there to toggle on.
__attribute__((noinline)) int Measure(const std::string& body,
                                      sg_network_t* net, long rounds,
                                      int64_t* now_ms) {
    int failed = 0;
    for (long i = 0; i < rounds; i++) {
        failed += !Round(body, net, ++*now_ms);
    }
    return failed;
}

}  // namespace

int main(int argc, char** argv) {
    long rounds = argc > 1 ? std::atol(argv[1]) : 20000;
    std::string body = argc > 2 ? argv[2] : kBalance;
    std::unique_ptr<char[]> shared;
    sg_network_t* net = MakeNetwork(&shared);
    if (net == nullptr) {
        return 1;
    }
    int64_t now_ms = 1000;
    for (int i = 0; i < 100; i++) {
        Round(body, net, ++now_ms);
    }
    int failed = Measure(body, net, rounds, &now_ms);
    sg_network_free(net);
    if (failed != 0) {
        std::fprintf(stderr,
                     "request_cost: %d of %ld rounds not forwarded as a "
                     "getBalance is\n",
                     failed, rounds);
        return 1;
    }
    std::printf("request_cost: %ld rounds of %zu bytes\n", rounds, body.size());
    return 0;
}
