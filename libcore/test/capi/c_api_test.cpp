// The C ABI as the nginx module uses it: building a network from its
// directives, routing a request through it, the failover attempts, the
// response hooks, the operator's cordons and the status texts; and what
// every export does with NULL arguments and bad input.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "capi/c_handles.h"
#include "solgate/solgate.h"
#include "support/temp_dir.h"

namespace {

sg_str_t S(const char* text) { return {text, std::strlen(text)}; }

std::string Text(sg_str_t s) { return std::string(s.data, s.len); }

// A network built the way the module builds one, bound to its own memory.
class CNetwork {
public:
    // policy: a failsafe policy's words ({"broadcast", "getBalance"}).
    explicit CNetwork(std::initializer_list<std::vector<const char*>> upstreams,
                      const char* cluster = "mainnet-beta",
                      std::vector<const char*> policy = {}) {
        char err[256];
        EXPECT_EQ(sg_network_new(S("mainnet"), &net_, err, sizeof(err)), SG_OK);
        EXPECT_EQ(sg_network_set_cluster(net_, S(cluster), err, sizeof(err)),
                  SG_OK);
        if (!policy.empty()) {
            std::vector<sg_str_t> args;
            for (size_t i = 1; i < policy.size(); i++) {
                args.push_back(S(policy[i]));
            }
            EXPECT_EQ(sg_network_set_policy(net_, S(policy[0]), args.data(),
                                            args.size(), err, sizeof(err)),
                      SG_OK)
                << err;
        }
        for (const auto& words : upstreams) {
            std::vector<sg_str_t> args;
            for (const char* w : words) {
                args.push_back(S(w));
            }
            sg_upstream_info_t info;
            EXPECT_EQ(sg_network_add_upstream(net_, args.data(), args.size(),
                                              &info, err, sizeof(err)),
                      SG_OK)
                << err;
        }
        sg_network_settings_t settings;
        sg_network_settings_default(&settings);
        EXPECT_EQ(sg_network_configure(net_, &settings, err, sizeof(err)),
                  SG_OK)
            << err;
        shared_ = std::make_unique<char[]>(sg_network_shared_size());
        EXPECT_EQ(sg_network_bind(net_, shared_.get(), 1, 0, err, sizeof(err)),
                  SG_OK);
    }
    ~CNetwork() { sg_network_free(net_); }

    sg_network_t* get() { return net_; }

private:
    sg_network_t* net_ = nullptr;
    std::unique_ptr<char[]> shared_;
};

sg_request_t* Parse(const char* body) {
    sg_request_t* req = nullptr;
    EXPECT_EQ(sg_request_parse(body, std::strlen(body), &req), SG_OK);
    return req;
}

const sg_selector_sources_t kNoSelector{};

TEST(CApi, LocalAnswerOwnedByTheRequest) {
    CNetwork net({{"a", "http://x"}});
    sg_request_t* req =
        Parse(R"({"jsonrpc":"2.0","id":1,"method":"getGenesisHash"})");
    sg_route_t route;
    ASSERT_EQ(sg_request_route(req, net.get(), &kNoSelector, 0, &route), SG_OK);
    EXPECT_EQ(route.kind, SG_ROUTE_ANSWER);
    EXPECT_EQ(route.http_status, 200u);
    EXPECT_NE(Text(route.body).find("5eykt4"), std::string::npos);
    EXPECT_EQ(Text(sg_request_method(req)), "getGenesisHash");
    EXPECT_EQ(Text(sg_request_lane(req)), "all");
    sg_request_free(req);
}

TEST(CApi, AttemptsNeverRepeatAnUpstreamThenFailAll) {
    CNetwork net({{"a", "http://x"}, {"b", "http://y"}});
    sg_request_t* req = Parse(R"({"jsonrpc":"2.0","id":7,"method":"getBalance"})");
    sg_route_t route;
    ASSERT_EQ(sg_request_route(req, net.get(), &kNoSelector, 0, &route), SG_OK);
    ASSERT_EQ(route.kind, SG_ROUTE_FORWARD);
    sg_pick_t first, second, third;
    size_t answered_by = 99;
    EXPECT_EQ(sg_request_upstream(req, &answered_by), SG_NONE);   // none yet
    ASSERT_EQ(sg_request_pick(req, 0, &first), SG_OK);
    ASSERT_EQ(sg_request_upstream(req, &answered_by), SG_OK);
    EXPECT_EQ(answered_by, first.upstream);
    ASSERT_EQ(sg_request_pick(req, 0, &second), SG_OK);
    EXPECT_NE(first.upstream, second.upstream);
    EXPECT_EQ(sg_request_upstream(nullptr, &answered_by), SG_INVALID);
    EXPECT_EQ(first.warn_all_cordoned, 0);
    EXPECT_EQ(sg_request_pick(req, 0, &third), SG_NONE);
    ASSERT_EQ(sg_request_fail(req, &route), SG_OK);
    EXPECT_EQ(route.kind, SG_ROUTE_ANSWER);
    EXPECT_EQ(route.http_status, 502u);
    EXPECT_EQ(Text(route.body),
              R"x({"jsonrpc":"2.0","error":{"code":-32603,"message":)x"
              R"x("Internal error: no upstream could serve the request )x"
              R"x((2 tried)"},"id":7})x");
    sg_request_free(req);
}

// The route says whether a policy takes the request: only then is
// sg_request_fanout asked, and it starts the policy's attempts.
TEST(CApi, TheRouteSaysWhenAFanOutPolicyTakesTheRequest) {
    CNetwork plain({{"a", "http://x"}, {"b", "http://y"}});
    CNetwork policed({{"a", "http://x"}, {"b", "http://y"}}, "mainnet-beta",
                     {"broadcast", "getBalance"});
    const char* balance = R"({"jsonrpc":"2.0","id":1,"method":"getBalance"})";
    const char* slot = R"({"jsonrpc":"2.0","id":2,"method":"getSlot"})";
    size_t targets[4];
    sg_fanout_t fanout;
    for (auto [net, body, fans] :
         {std::tuple{plain.get(), balance, 0}, std::tuple{policed.get(), slot, 0},
          std::tuple{policed.get(), balance, 1}}) {
        sg_request_t* req = Parse(body);
        sg_route_t route;
        ASSERT_EQ(sg_request_route(req, net, &kNoSelector, 0, &route), SG_OK);
        ASSERT_EQ(route.kind, SG_ROUTE_FORWARD);
        EXPECT_EQ(route.fan_out, fans) << body;
        ASSERT_EQ(sg_request_fanout(req, 0, targets, 4, &fanout), SG_OK);
        EXPECT_EQ(fanout.kind, fans ? SG_FANOUT_BROADCAST : SG_FANOUT_NONE) << body;
        EXPECT_EQ(fanout.n, fans ? 2u : 0u) << body;
        sg_request_free(req);
    }
}

TEST(CApi, ASubscriptionIsPickedAmongUpstreamsWithWs) {
    CNetwork net({{"a", "http://10.0.0.1:8899"},
                  {"b", "http://10.0.0.2:8899", "ws=ws://10.0.0.2:8900"}});
    sg_upstream_info_t info;
    ASSERT_EQ(sg_network_upstream(net.get(), 0, &info), SG_OK);
    EXPECT_EQ(info.ws_url.len, 0u);
    ASSERT_EQ(sg_network_upstream(net.get(), 1, &info), SG_OK);
    EXPECT_EQ(Text(info.ws_url), "http://10.0.0.2:8900/");
    EXPECT_EQ(Text(info.ws_host), "10.0.0.2:8900");
    EXPECT_EQ(Text(info.ws_authority), "10.0.0.2:8900");

    sg_request_t* req = nullptr;
    ASSERT_EQ(sg_request_subscription(&req), SG_OK);
    sg_route_t route;
    ASSERT_EQ(sg_request_route(req, net.get(), &kNoSelector, 0, &route), SG_OK);
    ASSERT_EQ(route.kind, SG_ROUTE_FORWARD);
    EXPECT_EQ(route.body.len, 0u);
    EXPECT_EQ(Text(sg_request_method(req)), "websocket");
    sg_pick_t pick;
    ASSERT_EQ(sg_request_pick(req, 0, &pick), SG_OK);
    EXPECT_EQ(pick.upstream, 1u);
    EXPECT_EQ(sg_request_pick(req, 0, &pick), SG_NONE);  // never "a"
    sg_request_free(req);
    EXPECT_EQ(sg_request_subscription(nullptr), SG_INVALID);
}

// POST .../cordon or .../uncordon for upstream `id`, as the module asks.
sg_admin_answer_t Admin(sg_network_t* net, const char* uri, const char* id,
                        bool post = true,
                        std::string_view reason = "maintenance") {
    sg_admin_request_t req{};
    req.uri = S(uri);
    req.post = post ? 1 : 0;
    req.get = post ? 0 : 1;
    if (id != nullptr) {
        req.upstream = S(id);
        req.has_upstream = 1;
    }
    req.reason = sg_str_t{reason.data(), reason.size()};
    req.has_reason = 1;
    sg_network_t* nets[] = {net};
    sg_admin_answer_t answer;
    EXPECT_EQ(sg_admin_handle(nets, 1, &req, 0, 5, &answer), SG_OK);
    return answer;
}

std::string Take(sg_text_t* text) {
    std::string out(text->data == nullptr ? "" : text->data, text->len);
    sg_text_free(text);
    return out;
}

// The reason comes from a URL: a newline in it would forge a log line.
TEST(CApi, AnOperatorsReasonIsLoggedAsOneLineOfPrintableText) {
    CNetwork net({{"a", "http://x"}});
    using namespace std::string_view_literals;
    sg_admin_answer_t cordon = Admin(net.get(), "/solgate/cordon", "a", true,
                                     "disk\n[emerg] forged\x01\xff\0end"sv);
    EXPECT_EQ(cordon.http_status, 200u);
    Take(&cordon.body);
    EXPECT_EQ(Take(&cordon.log),
              "operator cordoned upstream \"a\" of network \"mainnet\": "
              "disk?[emerg] forged???end");
}

TEST(CApi, EveryUpstreamCordonedWarnsOncePerInterval) {
    CNetwork net({{"a", "http://x"}});
    sg_admin_answer_t cordon = Admin(net.get(), "/solgate/cordon", "a");
    EXPECT_EQ(cordon.http_status, 200u);
    EXPECT_EQ(Take(&cordon.body),
              R"({"ok":true,"message":"cordoned upstream \"a\" of network \"mainnet\""})");
    EXPECT_EQ(Take(&cordon.log),
              "operator cordoned upstream \"a\" of network \"mainnet\": "
              "maintenance");
    auto pick_warns = [&](int64_t now_ms) {
        sg_request_t* req = Parse(R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})");
        sg_route_t route;
        EXPECT_EQ(sg_request_route(req, net.get(), &kNoSelector, now_ms, &route),
                  SG_OK);
        sg_pick_t pick;
        EXPECT_EQ(sg_request_pick(req, now_ms, &pick), SG_OK);
        sg_request_free(req);
        return pick.warn_all_cordoned;
    };
    EXPECT_EQ(pick_warns(1000), 1);
    EXPECT_EQ(pick_warns(2000), 0);
    EXPECT_EQ(pick_warns(1000 + 10000), 1);
    sg_admin_answer_t unknown = Admin(net.get(), "/solgate/cordon", "zz");
    EXPECT_EQ(unknown.http_status, 404u);
    EXPECT_EQ(Take(&unknown.body),
              R"({"ok":false,"message":"no upstream \"zz\" in network \"mainnet\""})");
    EXPECT_EQ(Take(&unknown.log), "");
    sg_admin_answer_t uncordon = Admin(net.get(), "/solgate/uncordon", "a");
    EXPECT_EQ(uncordon.http_status, 200u);
    Take(&uncordon.body);
    Take(&uncordon.log);
}

TEST(CApi, SelectorPrecedence) {
    CNetwork net({{"a", "http://x"}, {"b", "http://y"}});
    auto picked = [&](const sg_selector_sources_t& from) {
        sg_request_t* req = Parse(R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})");
        sg_route_t route;
        EXPECT_EQ(sg_request_route(req, net.get(), &from, 0, &route), SG_OK);
        std::string out;
        if (route.kind == SG_ROUTE_ANSWER) {
            out = "answer";
        } else {
            sg_pick_t pick;
            EXPECT_EQ(sg_request_pick(req, 0, &pick), SG_OK);
            out = pick.upstream == 0 ? "a" : "b";
        }
        sg_request_free(req);
        return out;
    };
    sg_selector_sources_t from{};
    from.query = S("b");
    from.has_query = 1;
    EXPECT_EQ(picked(from), "b");
    from.erpc_header = S("a");
    from.has_erpc_header = 1;
    EXPECT_EQ(picked(from), "a");   // the alias beats the query
    from.header = S("b");
    from.has_header = 1;
    EXPECT_EQ(picked(from), "b");   // the header beats both
    from.header = S("nothing-matches");
    EXPECT_EQ(picked(from), "answer");
}

TEST(CApi, ResponseHooksForTheCurrentAttempt) {
    CNetwork net({{"a", "http://x"}});
    sg_request_t* req = Parse(R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})");
    sg_response_t* resp = nullptr;
    sg_route_t route;
    ASSERT_EQ(sg_request_route(req, net.get(), &kNoSelector, 0, &route), SG_OK);
    EXPECT_EQ(sg_response_new(req, 0, &resp), SG_NONE);   // nothing picked yet
    sg_pick_t pick;
    ASSERT_EQ(sg_request_pick(req, 0, &pick), SG_OK);
    ASSERT_EQ(sg_response_new(req, 0, &resp), SG_OK);
    EXPECT_EQ(sg_response_kind(resp), SG_RESPONSE_REWRITE);
    sg_correction_t fixed;
    const char answer[] = R"({"jsonrpc":"2.0","result":5,"id":1})";
    // No slot views yet: the answer stands.
    EXPECT_EQ(sg_response_rewrite(resp, answer, sizeof(answer) - 1, 0, &fixed),
              SG_NONE);
    sg_response_free(resp);
    sg_request_free(req);

    req = Parse(R"({"jsonrpc":"2.0","id":1,"method":"getBalance","params":["x"]})");
    ASSERT_EQ(sg_request_route(req, net.get(), &kNoSelector, 0, &route), SG_OK);
    ASSERT_EQ(sg_request_pick(req, 0, &pick), SG_OK);
    ASSERT_EQ(sg_response_new(req, 0, &resp), SG_OK);
    EXPECT_EQ(sg_response_kind(resp), SG_RESPONSE_HARVEST);
    const char part1[] = R"({"jsonrpc":"2.0","result":{"con)";
    const char part2[] = R"(text":{"slot":77},"value":1},"id":1})";
    EXPECT_EQ(sg_response_feed(resp, part1, sizeof(part1) - 1, 0), SG_AGAIN);
    EXPECT_EQ(sg_response_feed(resp, part2, sizeof(part2) - 1, 0), SG_OK);
    sg_response_finish(resp, 0);
    sg_response_free(resp);
    sg_request_free(req);

    req = Parse(R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"}])");
    ASSERT_EQ(sg_request_route(req, net.get(), &kNoSelector, 0, &route), SG_OK);
    ASSERT_EQ(sg_request_pick(req, 0, &pick), SG_OK);
    EXPECT_EQ(sg_response_new(req, 0, &resp), SG_NONE);   // batches: nothing
    EXPECT_EQ(resp, nullptr);
    sg_request_free(req);
}

// The client's batch answer for `upstream_answer`, the upstream's answer to
// `batch` (sent whole), fed in one chunk.
std::string MergedAnswer(sg_network_t* net, const char* batch,
                         std::string_view upstream_answer) {
    sg_request_t* req = Parse(batch);
    sg_route_t route;
    EXPECT_EQ(sg_request_route(req, net, &kNoSelector, 0, &route), SG_OK);
    sg_pick_t pick;
    EXPECT_EQ(sg_request_pick(req, 0, &pick), SG_OK);
    sg_merge_t* merge = nullptr;
    EXPECT_EQ(sg_merge_new(req, &merge), SG_OK);
    const sg_merge_segment_t* segments = nullptr;
    size_t n = 0;
    EXPECT_EQ(sg_merge_feed(merge, upstream_answer.data(), upstream_answer.size(),
                            1, 0, &segments, &n),
              SG_OK);
    std::string out;
    for (size_t k = 0; k < n; k++) {
        out += segments[k].input
                   ? upstream_answer.substr(segments[k].offset, segments[k].length)
                   : std::string_view(segments[k].text, segments[k].length);
    }
    sg_merge_free(merge);
    sg_request_free(req);
    return out;
}

// Each getSlot answer of a batch is corrected by its own call's commitment:
// the call the merger matched the element to (by its id, the call it
// fills first), so calls that share an id are each corrected by theirs,
// and another method's answer in its own place is not taken for a
// getSlot's.
TEST(CApi, EachGetSlotOfABatchIsCorrectedByItsCallsCommitment) {
    CNetwork net({{"a", "http://x"}});
    solgate::UpstreamRecord& tips = net.get()->network.record(0);
    tips.processed = 1000;
    tips.finalized = 968;
    tips.shred = 950;   // finalized answers: the indexed finalized tip
    auto answer = [](uint64_t slot, const char* id) {
        return std::string(R"({"jsonrpc":"2.0","result":)") +
               std::to_string(slot) + R"(,"id":)" + id + "}";
    };
    const char* batch =
        R"([{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[{"commitment":"finalized"}]},)"
        R"({"jsonrpc":"2.0","id":2,"method":"getSlot","params":[{"commitment":"processed"}]}])";
    // in order, and out of order
    EXPECT_EQ(MergedAnswer(net.get(), batch,
                           "[" + answer(500, "1") + "," + answer(500, "2") + "]"),
              "[" + answer(950, "1") + "," + answer(1000, "2") + "]");
    EXPECT_EQ(MergedAnswer(net.get(), batch,
                           "[" + answer(500, "2") + "," + answer(500, "1") + "]"),
              "[" + answer(1000, "2") + "," + answer(950, "1") + "]");
    // one id for both calls
    const char* same_id =
        R"([{"jsonrpc":"2.0","id":"s","method":"getSlot","params":[{"commitment":"finalized"}]},)"
        R"({"jsonrpc":"2.0","id":"s","method":"getSlot","params":[{"commitment":"processed"}]}])";
    EXPECT_EQ(MergedAnswer(net.get(), same_id,
                           "[" + answer(500, "\"s\"") + "," + answer(500, "\"s\"") + "]"),
              "[" + answer(950, "\"s\"") + "," + answer(1000, "\"s\"") + "]");
    // another method's answer with a getSlot's id
    const char* shared_id =
        R"([{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[{"commitment":"finalized"}]},)"
        R"({"jsonrpc":"2.0","id":1,"method":"getBlockHeight"}])";
    EXPECT_EQ(MergedAnswer(net.get(), shared_id,
                           "[" + answer(500, "1") + "," + answer(500, "1") + "]"),
              "[" + answer(950, "1") + "," + answer(500, "1") + "]");
    EXPECT_EQ(MergedAnswer(net.get(), shared_id,
                           "[" + answer(500, "1") + "]"),
              "[" + answer(950, "1") + "," +
                  R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: )"
                  R"(the upstream answered the batch without an answer to this call"},"id":1}])");
    // a notification first: the merge's slots are not the calls' indexes
    const char* after_notification =
        R"([{"jsonrpc":"2.0","method":"getSlot","params":[{"commitment":"finalized"}]},)"
        R"({"jsonrpc":"2.0","id":1,"method":"getSlot","params":[{"commitment":"processed"}]}])";
    EXPECT_EQ(MergedAnswer(net.get(), after_notification, "[" + answer(500, "1") + "]"),
              "[" + answer(1000, "1") + "]");
    // an id no call has is left as it is
    EXPECT_EQ(MergedAnswer(net.get(), batch,
                           "[" + answer(500, "1") + "," + answer(500, "9") + "]"),
              "[" + answer(950, "1") + "," + answer(500, "9") + "," +
                  R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error: )"
                  R"(the upstream answered the batch without an answer to this call"},"id":2}])");
}

TEST(CApi, AdminEndpointsAndTheirRefusals) {
    CNetwork net({{"a", "http://x"}});
    sg_admin_answer_t get = Admin(net.get(), "/solgate/cordon", "a", false);
    EXPECT_EQ(get.http_status, 405u);
    EXPECT_EQ(Take(&get.body), R"({"ok":false,"message":"use POST"})");
    Take(&get.log);
    sg_admin_answer_t missing = Admin(net.get(), "/solgate/cordon", nullptr);
    EXPECT_EQ(missing.http_status, 400u);
    EXPECT_EQ(Take(&missing.body),
              R"({"ok":false,"message":"missing upstream=ID"})");
    Take(&missing.log);
    sg_admin_answer_t state = Admin(net.get(), "/solgate/state", nullptr, false);
    EXPECT_EQ(state.http_status, 200u);
    EXPECT_EQ(Take(&state.body).rfind("{\"networks\":[", 0), 0u);
    Take(&state.log);
    sg_admin_answer_t post_state = Admin(net.get(), "/solgate/state", nullptr);
    EXPECT_EQ(post_state.http_status, 405u);
    EXPECT_EQ(Take(&post_state.body), R"({"ok":false,"message":"use GET"})");
    Take(&post_state.log);
    sg_admin_answer_t no_ws = Admin(net.get(), "/solgate/drain", "a");
    EXPECT_EQ(no_ws.http_status, 400u);
    EXPECT_EQ(Take(&no_ws.body),
              R"({"ok":false,"message":"upstream \"a\" of network \"mainnet\" has no ws=: no subscriber to drain"})");
    Take(&no_ws.log);
    sg_admin_answer_t other = Admin(net.get(), "/solgate/restart", "a");
    EXPECT_EQ(other.http_status, 404u);
    EXPECT_EQ(Take(&other.body),
              R"({"ok":false,"message":"unknown endpoint, use state, cordon, uncordon or drain"})");
    Take(&other.log);

    // Two networks: the admin must be told which one.
    CNetwork second({{"b", "http://y"}});
    sg_network_t* nets[] = {net.get(), second.get()};
    sg_admin_request_t req{};
    req.uri = S("/solgate/cordon");
    req.post = 1;
    req.upstream = S("b");
    req.has_upstream = 1;
    sg_admin_answer_t answer;
    ASSERT_EQ(sg_admin_handle(nets, 2, &req, 0, 0, &answer), SG_OK);
    EXPECT_EQ(answer.http_status, 400u);
    EXPECT_EQ(Take(&answer.body),
              R"({"ok":false,"message":"name the network: network=NAME"})");
    Take(&answer.log);
}

// A network "mainnet" of upstreams a and b kept in `state_dir`, bound
// to fresh memory of its own.
struct StatefulNetwork {
    explicit StatefulNetwork(const std::string& state_dir) {
        char err[256];
        EXPECT_EQ(sg_network_new(S("mainnet"), &net, err, sizeof(err)), SG_OK);
        for (const char* id : {"a", "b"}) {
            sg_str_t args[] = {S(id), S("http://10.0.0.1:8899")};
            sg_upstream_info_t info;
            EXPECT_EQ(sg_network_add_upstream(net, args, 2, &info, err,
                                              sizeof(err)),
                      SG_OK);
        }
        sg_str_t dir = {state_dir.data(), state_dir.size()};
        EXPECT_EQ(sg_network_set_state(net, dir, err, sizeof(err)), SG_OK)
            << err;
        sg_network_settings_t settings;
        sg_network_settings_default(&settings);
        EXPECT_EQ(sg_network_configure(net, &settings, err, sizeof(err)),
                  SG_OK);
        shared = std::make_unique<char[]>(sg_network_shared_size());
        EXPECT_EQ(sg_network_bind(net, shared.get(), 1, 0, err, sizeof(err)),
                  SG_OK);
    }
    ~StatefulNetwork() { sg_network_free(net); }

    std::string Health() {
        sg_health_t health;
        EXPECT_EQ(sg_network_health(net, 0, &health), SG_OK);
        return std::to_string(health.http_status) + " " +
               std::string(health.body, health.len);
    }

    sg_network_t* net = nullptr;
    std::unique_ptr<char[]> shared;
};

TEST(CApi, OperatorCordonsAreSavedAndTakenBackByAFreshZone) {
    solgate::TempDir dir("capi-state");
    StatefulNetwork before(dir.path());
    EXPECT_EQ(Text(sg_network_state_file(before.net)),
              dir.path() + "/operator-mainnet.json");
    EXPECT_EQ(before.Health(), R"(200 {"status":"ok","eligible":2})");
    sg_admin_answer_t cordon = Admin(before.net, "/solgate/cordon", "a");
    EXPECT_EQ(cordon.http_status, 200u);
    EXPECT_EQ(cordon.log_level, 6);   // NOTICE
    Take(&cordon.body);
    Take(&cordon.log);
    EXPECT_EQ(before.Health(), R"(200 {"status":"ok","eligible":1})");

    StatefulNetwork after(dir.path());
    int level = 0;
    sg_text_t line{};
    ASSERT_EQ(sg_network_restore(after.net, 0, 10, &level, &line), SG_OK);
    EXPECT_EQ(level, 6);
    EXPECT_EQ(Take(&line), "network \"mainnet\": took back from \"" +
                               dir.path() +
                               "/operator-mainnet.json\" 1 operator "
                               "cordon(s) (\"a\") and 0 drain(s)");
    EXPECT_EQ(after.Health(), R"(200 {"status":"ok","eligible":1})");
    sg_admin_answer_t other = Admin(after.net, "/solgate/cordon", "b");
    Take(&other.body);
    Take(&other.log);
    EXPECT_EQ(after.Health(),
              R"(503 {"status":"unavailable","eligible":0,"reason":"every upstream is cordoned"})");
}

// A change that cannot be saved is in force, but never answered 200.
TEST(CApi, AChangeThatCannotBeSavedIsAnswered500) {
    solgate::TempDir dir("capi-state");
    std::string gone = dir.path() + "/gone";
    ASSERT_EQ(mkdir(gone.c_str(), 0755), 0);
    StatefulNetwork net(gone);
    ASSERT_EQ(rmdir(gone.c_str()), 0);
    sg_admin_answer_t cordon = Admin(net.net, "/solgate/cordon", "a");
    EXPECT_EQ(cordon.http_status, 500u);
    EXPECT_EQ(cordon.log_level, 4);   // ERR
    EXPECT_EQ(Take(&cordon.body),
              R"({"ok":false,"message":"cordoned upstream \"a\" of network )"
              R"(\"mainnet\", but it is not saved: cannot save \")" +
                  gone +
                  R"(/operator-mainnet.json\": open its directory: No such )"
                  R"(file or directory; it holds until nginx restarts"})");
    Take(&cordon.log);
    EXPECT_EQ(net.Health(), R"(200 {"status":"ok","eligible":1})");
    int level = 0;
    sg_text_t line{};
    EXPECT_EQ(sg_network_restore(net.net, 0, 0, &level, &line), SG_NONE);
}

// A reload resized the zone: the old workers' changes are answered 503.
TEST(CApi, AChangeOnAZoneAReloadReplacedIsAnswered503) {
    solgate::TempDir dir("capi-state");
    StatefulNetwork old(dir.path());
    sg_network_supersede(old.shared.get(), 0);
    sg_admin_answer_t cordon = Admin(old.net, "/solgate/cordon", "a");
    EXPECT_EQ(cordon.http_status, 503u);
    EXPECT_EQ(cordon.log_level, 5);   // WARN
    EXPECT_EQ(Take(&cordon.body),
              R"({"ok":false,"message":"cordoned upstream \"a\" of network )"
              R"(\"mainnet\" on this worker, but not kept: a reload is giving )"
              R"(network \"mainnet\" a new zone; send it again"})");
    Take(&cordon.log);
    sg_network_supersede(nullptr, 0);
}

TEST(CApi, StateDirectoriesNginxTRefuses) {
    solgate::TempDir dir("capi-state");
    std::string file = dir.path() + "/file";
    FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
    sg_network_t* net = nullptr;
    char err[256];
    ASSERT_EQ(sg_network_new(S("mainnet"), &net, err, sizeof(err)), SG_OK);
    EXPECT_EQ(sg_network_set_state(net, S("var/lib/x"), err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "invalid state directory \"var/lib/x\": it must be an "
                      "absolute path");
    sg_str_t bad = {file.data(), file.size()};
    EXPECT_EQ(sg_network_set_state(net, bad, err, sizeof(err)), SG_INVALID);
    EXPECT_EQ(std::string(err), "state directory \"" + file +
                                    "\" of network \"mainnet\" is not a "
                                    "directory");
    sg_network_free(net);
    ASSERT_EQ(sg_network_new(S("mainnet"), &net, err, sizeof(err)), SG_OK);
    std::string slashes = dir.path() + "/new//";
    sg_str_t fine = {slashes.data(), slashes.size()};
    EXPECT_EQ(sg_network_set_state(net, fine, err, sizeof(err)), SG_OK);
    EXPECT_EQ(Text(sg_network_state_file(net)),
              dir.path() + "/new/operator-mainnet.json");
    EXPECT_EQ(sg_network_set_state(net, fine, err, sizeof(err)), SG_INVALID);
    EXPECT_STREQ(err, "\"state\" directive is duplicate");
    sg_network_free(net);
    EXPECT_EQ(Text(sg_network_state_file(nullptr)), "");
    sg_health_t health;
    EXPECT_EQ(sg_network_health(nullptr, 0, &health), SG_INVALID);
}

TEST(CApi, StatusAnswers) {
    EXPECT_EQ(Text(sg_http_error_answer(413)),
              R"({"jsonrpc":"2.0","error":{"code":-32600,"message":)"
              R"("Invalid request: body larger than client_max_body_size"},)"
              R"("id":null})");
    EXPECT_EQ(Text(sg_http_error_answer(405)),
              R"({"jsonrpc":"2.0","error":{"code":-32600,"message":)"
              R"("Invalid request: JSON-RPC requests must be sent with POST"},)"
              R"("id":null})");
    EXPECT_NE(Text(sg_http_error_answer(408)).find("timed out reading"),
              std::string::npos);
    EXPECT_NE(Text(sg_http_error_answer(404)).find(R"(-32600,"message":"Invalid request"})"),
              std::string::npos);
    EXPECT_NE(Text(sg_http_error_answer(503)).find(R"(-32603,"message":"Internal error"})"),
              std::string::npos);
}

TEST(CApi, APostsHeadersAreJudgedBeforeItsBody) {
    sg_post_headers_t headers{};
    sg_str_t body;
    headers.content_types = 1;
    EXPECT_EQ(sg_post_refusal(&headers, &body), 0u);
    EXPECT_EQ(body.data, nullptr);
    std::string gzip = "gzip";
    headers.content_encoding = sg_str_t{gzip.data(), gzip.size()};
    headers.content_encodings = 1;
    EXPECT_EQ(sg_post_refusal(&headers, &body), 415u);
    EXPECT_NE(Text(body).find("send the body uncompressed"),
              std::string::npos);
    headers.content_encoding = sg_str_t{nullptr, 0};
    headers.content_encodings = 0;
    headers.content_types = 2;
    EXPECT_EQ(sg_post_refusal(&headers, &body), 400u);
    EXPECT_NE(Text(body).find("more than one Content-Type"),
              std::string::npos);
    body = sg_str_t{nullptr, 0};
    EXPECT_EQ(sg_post_refusal(nullptr, &body), 400u);
    EXPECT_NE(Text(body).find("-32600"), std::string::npos);
    EXPECT_EQ(sg_post_refusal(&headers, nullptr), 400u);
}

TEST(CApi, StatusTextsAreOwnedAndFreed) {
    CNetwork net({{"a", "http://x"}});
    sg_network_t* nets[] = {net.get()};
    sg_text_t metrics{};
    sg_admin_request_t req{};
    req.uri = {"/solgate/state", 14};
    req.get = 1;
    sg_admin_answer_t answer{};
    ASSERT_EQ(sg_admin_handle(nets, 1, &req, 0, 0, &answer), SG_OK);
    sg_text_t& state = answer.body;
    ASSERT_EQ(sg_status_render_metrics(nets, 1, 0, &metrics), SG_OK);
    EXPECT_EQ(state.data[0], '{');
    EXPECT_EQ(std::strlen(state.data), state.len);
    EXPECT_NE(std::string(metrics.data, metrics.len).find("solgate_"),
              std::string::npos);
    sg_text_free(&state);
    sg_text_free(&answer.log);
    sg_text_free(&metrics);
    EXPECT_EQ(state.data, nullptr);
    sg_text_free(&state);   // twice is harmless
    sg_text_free(nullptr);
}

TEST(CApi, ConfigurationMessages) {
    char err[256];
    sg_network_t* net = nullptr;
    EXPECT_EQ(sg_network_new(S("a b"), &net, err, sizeof(err)), SG_INVALID);
    EXPECT_EQ(net, nullptr);
    EXPECT_STREQ(err, "invalid network name \"a b\": may contain only letters, "
                      "digits, '-', '_' and '.'");
    ASSERT_EQ(sg_network_new(S("m"), &net, err, sizeof(err)), SG_OK);
    EXPECT_EQ(sg_network_set_cluster(net, S("mainnet"), err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "invalid cluster \"mainnet\", it must be \"mainnet-beta\", "
                      "\"devnet\", \"testnet\" or \"custom\"");
    EXPECT_EQ(sg_network_set_cluster(net, S("devnet"), err, sizeof(err)), SG_OK);
    EXPECT_EQ(sg_network_set_cluster(net, S("devnet"), err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "\"cluster\" directive is duplicate");
    EXPECT_EQ(sg_network_set_commitment(net, S("max"), err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "invalid commitment \"max\", it must be \"processed\", "
                      "\"confirmed\" or \"finalized\"");
    EXPECT_EQ(sg_network_set_default_selector(net, S("a |"), err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "invalid use_upstream_default \"a |\": missing pattern "
                      "after '|' at position 3");
    EXPECT_EQ(sg_network_check_default_selector(net, err, sizeof(err)),
              SG_OK);   // none given
    sg_network_settings_t settings;
        sg_network_settings_default(&settings);
    EXPECT_EQ(sg_network_configure(net, &settings, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "solgate_network \"m\" has no \"upstream\"");
    sg_str_t args[] = {S("a"), S("http://x"), S("priority=2")};
    sg_upstream_info_t info;
    EXPECT_EQ(sg_network_add_upstream(net, args, 3, &info, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "invalid parameter \"priority=2\" in upstream \"a\", "
                      "expected \"host=\", \"tags=\", \"methods=\", "
                      "\"ignore_methods=\", \"weight=\", \"backup\", "
                      "\"max_fails=\", \"fail_timeout=\", "
                      "\"debounce=\", \"ws=\" or a \"tls_\" option");
    // a relative tls_* file is read from nginx's configuration directory
    ASSERT_EQ(sg_network_set_conf_prefix(net, S("/nonexistent/conf/"), err,
                                         sizeof(err)),
              SG_OK);
    sg_str_t tls[] = {S("v"), S("https://x"),
                      S("tls_trusted_certificate=ca.pem")};
    EXPECT_EQ(sg_network_add_upstream(net, tls, 3, &info, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "\"tls_trusted_certificate=\" file "
                      "\"/nonexistent/conf/ca.pem\" in upstream \"v\" cannot "
                      "be read (2: No such file or directory)");
    ASSERT_EQ(sg_network_add_upstream(net, args, 2, &info, err, sizeof(err)),
              SG_OK);
    EXPECT_EQ(Text(info.id), "a");
    EXPECT_EQ(Text(info.url), "http://x/");
    EXPECT_EQ(Text(info.host), "x");
    EXPECT_EQ(Text(info.authority), "x");
    EXPECT_EQ(sg_network_add_upstream(net, args, 2, &info, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "duplicate upstream \"a\" in network \"m\"");
    sg_block_server_t servers[2] = {{S("/tmp/s"), 1, 0, 0},
                                    {S("10.0.0.2:80"), 0, 0, 0}};
    size_t nodes = 0;
    EXPECT_EQ(sg_network_reach_through_block(net, 0, servers, 1, &nodes, err,
                                             sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "upstream \"a\": server 1 of upstream block \"x\" "
                      "is a unix socket, which the state poller cannot reach");
    servers[0] = {S("10.0.0.1:80"), 0, 0, 0};
    ASSERT_EQ(sg_network_reach_through_block(net, 0, servers, 2, &nodes, err,
                                             sizeof(err)),
              SG_OK);
    EXPECT_EQ(nodes, 2u);
    ASSERT_EQ(sg_network_upstream(net, 1, &info), SG_OK);
    EXPECT_EQ(Text(info.id), "a.2");
    EXPECT_EQ(info.block_server, 2u);
    EXPECT_EQ(Text(info.url), "http://x/");
    EXPECT_EQ(sg_network_upstream(net, 2, &info), SG_INVALID);
    settings.debounce_ms = SG_MAX_DEBOUNCE_MS + 1;
    EXPECT_EQ(sg_network_configure(net, &settings, err, sizeof(err)),
              SG_INVALID);
    settings.debounce_ms = SG_MAX_DEBOUNCE_MS;
    EXPECT_EQ(sg_network_configure(net, &settings, err, sizeof(err)), SG_OK);
    sg_network_free(net);
}

TEST(CApi, ShortErrorBuffersAreCutAndTerminated) {
    char err[8];
    sg_network_t* net = nullptr;
    EXPECT_EQ(sg_network_new(S("a b"), &net, err, sizeof(err)), SG_INVALID);
    EXPECT_STREQ(err, "invalid");
    EXPECT_EQ(sg_network_new(S("a b"), &net, nullptr, 0), SG_INVALID);
}

TEST(CApi, NullArgumentsAreRefusedNotFollowed) {
    char err[64];
    sg_route_t route;
    sg_pick_t pick;
    sg_upstream_info_t info;
    sg_correction_t fixed;
    sg_network_t* net = nullptr;
    sg_request_t* req = nullptr;
    sg_response_t* resp = nullptr;
    sg_poller_t* poller = nullptr;
    sg_network_settings_t settings;
        sg_network_settings_default(&settings);

    EXPECT_EQ(sg_network_new(S("m"), nullptr, err, sizeof(err)), SG_INVALID);
    EXPECT_EQ(sg_network_set_cluster(nullptr, S("devnet"), err, sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_network_set_commitment(nullptr, S("processed"), err,
                                        sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_network_set_default_selector(nullptr, S("a"), err,
                                              sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_network_check_default_selector(nullptr, err, sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_network_add_upstream(nullptr, nullptr, 0, &info, err,
                                      sizeof(err)),
              SG_INVALID);
    err[0] = '\0';
    EXPECT_EQ(sg_network_configure(nullptr, &settings, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "a required argument is NULL");
    EXPECT_EQ(sg_network_bind(nullptr, nullptr, 1, 0, err, sizeof(err)),
              SG_INVALID);
    sg_admin_answer_t answer;
    EXPECT_EQ(sg_admin_handle(nullptr, 1, nullptr, 0, 0, &answer), SG_INVALID);
    sg_block_server_t server = {S("x"), 0, 0, 0};
    size_t nodes = 0;
    EXPECT_EQ(sg_network_reach_through_block(nullptr, 0, &server, 1, &nodes,
                                             err, sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_network_upstream(nullptr, 0, nullptr), SG_INVALID);

    EXPECT_EQ(sg_request_parse(nullptr, 5, &req), SG_INVALID);
    EXPECT_EQ(sg_request_parse("{}", 2, nullptr), SG_INVALID);
    EXPECT_EQ(sg_request_route(nullptr, net, &kNoSelector, 0, &route),
              SG_INVALID);
    EXPECT_EQ(sg_request_pick(nullptr, 0, &pick), SG_INVALID);
    EXPECT_EQ(sg_request_fail(nullptr, &route), SG_INVALID);
    EXPECT_EQ(Text(sg_request_method(nullptr)), "");
    EXPECT_EQ(Text(sg_request_lane(nullptr)), "");

    EXPECT_EQ(sg_response_new(nullptr, 0, &resp), SG_INVALID);
    EXPECT_EQ(sg_response_kind(nullptr), SG_INVALID);
    EXPECT_EQ(sg_response_feed(nullptr, "x", 1, 0), SG_OK);   // stop feeding
    sg_response_finish(nullptr, 0);
    EXPECT_EQ(sg_response_rewrite(nullptr, "x", 1, 0, &fixed), SG_NONE);

    EXPECT_EQ(sg_poller_start(nullptr, 1, 1, nullptr, nullptr, nullptr, &poller, err,
                              sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(poller, nullptr);
    EXPECT_EQ(sg_status_render_metrics(nullptr, 0, 0, nullptr), SG_INVALID);

    sg_network_free(nullptr);
    sg_request_free(nullptr);
    sg_response_free(nullptr);
    sg_poller_stop(nullptr);
}

TEST(CApi, BadBodiesAreAnsweredNeverRefused) {
    CNetwork net({{"a", "http://x"}});
    for (const char* body : {"", "{", "[]", "null", "{\"jsonrpc\":\"2.0\"}"}) {
        sg_request_t* req = nullptr;
        ASSERT_EQ(sg_request_parse(body, std::strlen(body), &req), SG_OK);
        sg_route_t route;
        ASSERT_EQ(sg_request_route(req, net.get(), &kNoSelector, 0, &route),
                  SG_OK);
        EXPECT_EQ(route.kind, SG_ROUTE_ANSWER) << body;
        EXPECT_NE(Text(route.body).find("\"error\""), std::string::npos);
        sg_request_free(req);
    }
}

TEST(CApi, Version) { EXPECT_STRNE(sg_version(), ""); }

}  // namespace
