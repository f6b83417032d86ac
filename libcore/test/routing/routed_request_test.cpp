// One request through routing: the selector by precedence, the attempts,
// the answer when all of them failed.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "routing/request_metrics.h"
#include "routing/routed_request.h"
#include "routing/selector_sources.h"
#include "rpc/rpc_errors.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::TestNetwork;

RpcRequest Parse(const std::string& body) { return testing::ParseKept(body); }

const std::string kGetSlot = R"({"jsonrpc":"2.0","id":3,"method":"getSlot"})";

TEST(ChooseSelector, HeaderThenAliasThenQueryThenDefault) {
    SelectorSources s;
    EXPECT_EQ(ChooseSelector(s, "dflt").text, "dflt");
    s.query = "q";
    EXPECT_EQ(ChooseSelector(s, "dflt").text, "q");
    s.erpc_header = "e";
    EXPECT_EQ(ChooseSelector(s, "dflt").text, "e");
    s.header = "h";
    EXPECT_EQ(ChooseSelector(s, "dflt").text, "h");
    EXPECT_TRUE(ChooseSelector(s, "dflt").from_client);
    s.header = "";   // present but empty: no selector at all
    EXPECT_EQ(ChooseSelector(s, "dflt").text, "");
    // use_upstream_from_client off: only the default, whatever was sent
    ChosenSelector off = ChooseSelector(s, "dflt", false);
    EXPECT_EQ(off.text, "dflt");
    EXPECT_FALSE(off.from_client);
}

TEST(ChooseSelector, TheWinningSourceNamedTwiceIsSaid) {
    SelectorSources s;
    s.query = "q";
    s.query_twice = true;
    EXPECT_EQ(ChooseSelector(s, "dflt").twice, "use-upstream=");
    s.erpc_header = "e";   // wins: the query's second does not matter
    EXPECT_EQ(ChooseSelector(s, "dflt").twice, "");
    s.header = "h";
    s.header_twice = true;
    EXPECT_EQ(ChooseSelector(s, "dflt").twice, "X-Solgate-Use-Upstream");
    EXPECT_EQ(ChooseSelector(s, "dflt", false).twice, "");
}

TEST(RoutedRequest, ASelectorGivenTwiceIsInvalidParams) {
    TestNetwork t(3);
    RoutedRequest req(Parse(kGetSlot));
    SelectorSources s;
    s.header = "up-1";
    s.header_twice = true;
    RouteDecision decision = req.Route(t.network, s, 0);
    EXPECT_FALSE(decision.forward);
    EXPECT_EQ(decision.answer,
              R"({"jsonrpc":"2.0","error":{"code":-32602,"message":)"
              R"("Invalid params: use-upstream selector given twice )"
              R"((X-Solgate-Use-Upstream): send one"},"id":3})");
}

// The plan a selector given twice made is that request's only: the next
// request on the thread's kept request is routed as it asks.
TEST(RoutedRequest, ASelectorGivenTwiceLeavesNoErrorToTheNextRequest) {
    TestNetwork t(3);
    RoutedRequest req(Parse(kGetSlot));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    req.Clear();
    EXPECT_TRUE(req.plan().matched.empty()) << "no plan before Route";
    req.Parse(kGetSlot.data(), kGetSlot.size());
    SelectorSources twice;
    twice.query = "";   // an empty selector, twice: every upstream's plan
    twice.query_twice = true;
    EXPECT_FALSE(req.Route(t.network, twice, 0).forward);
    req.Clear();
    req.Parse(kGetSlot.data(), kGetSlot.size());
    RouteDecision next = req.Route(t.network, {}, 0);
    EXPECT_TRUE(next.forward) << next.answer;
    EXPECT_FALSE(req.plan().error);
    EXPECT_EQ(req.plan().matched, (std::vector<size_t>{0, 1, 2}));
}

TEST(RoutedRequest, TheNetworkDefaultSelectorApplies) {
    NetworkSettings settings;
    settings.default_selector = "up-1";
    TestNetwork t(3, settings);
    RoutedRequest req(Parse(kGetSlot));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    auto attempt = req.NextAttempt(0);
    ASSERT_TRUE(attempt);
    EXPECT_EQ(attempt->upstream, 1u);
    EXPECT_FALSE(req.NextAttempt(0));   // the selector allows only up-1
    EXPECT_EQ(req.attempts(), 1u);
}

// A finished request is kept whole when small, cleared, and parses the
// next: a large batch's is let go.
TEST(RoutedRequest, OnlyASmallRequestIsWorthKeeping) {
    TestNetwork t(3);
    RoutedRequest small(Parse(kGetSlot));
    ASSERT_TRUE(small.Route(t.network, {}, 0).forward);
    EXPECT_TRUE(small.WorthKeeping());

    std::string batch = "[";
    for (int i = 0; i < 100; i++) {
        batch += (i ? "," : "") + kGetSlot;
    }
    batch += "]";
    RoutedRequest large(Parse(batch));
    EXPECT_FALSE(large.WorthKeeping());
}

TEST(RoutedRequest, EachUpstreamAtMostOnceThenTheAllFailedAnswer) {
    TestNetwork t(3);
    RoutedRequest req(Parse(kGetSlot));
    EXPECT_FALSE(req.NextAttempt(0));   // not routed yet
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    std::set<size_t> seen;
    while (auto attempt = req.NextAttempt(0)) {
        EXPECT_TRUE(seen.insert(attempt->upstream).second);
        EXPECT_EQ(req.upstream(), attempt->upstream);
    }
    EXPECT_EQ(seen.size(), 3u);
    EXPECT_EQ(req.attempts(), 3u);
    EXPECT_EQ(req.AllFailedAnswer(),
              R"x({"jsonrpc":"2.0","error":{"code":-32603,"message":)x"
              R"x("Internal error: no upstream could serve the request )x"
              R"x((3 tried)"},"id":3})x");
}

// A request no policy takes keeps no fan-out state; it reads as an idle
// one: no kind, nothing pending, no hedge to send, and a report of an
// attempt (which the glue makes only for a fan-out) finds nothing pending,
// so the answer is decided, with no attempt launched.
TEST(RoutedRequest, WithoutAPolicyTheFanOutIsIdle) {
    TestNetwork t(3);
    RoutedRequest req(Parse(kGetSlot));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    RoutedRequest::FanOutStart start = req.StartFanOut(0);
    EXPECT_EQ(start.kind, FanOutKind::kNone);
    EXPECT_TRUE(start.targets.empty());
    EXPECT_FALSE(req.HedgeLeft());
    EXPECT_EQ(req.FanOutPending(), 0u);
    EXPECT_FALSE(req.NextHedge(0));
    EXPECT_EQ(req.attempts(), 0u);   // NextHedge took no attempt
    RoutedRequest::AttemptEnd end;
    end.http_status = 200;
    end.answer = R"({"jsonrpc":"2.0","result":1,"id":3})";
    RoutedRequest::FanOutStep step = req.ReportFanOut(0, end, false, 0);
    EXPECT_TRUE(step.decided);
    EXPECT_FALSE(step.launch);
    EXPECT_EQ(req.FanOutPending(), 0u);
}

TEST(RoutedRequest, AllCordonedIsCountedAndWarnedOnce) {
    TestNetwork t(2);
    for (size_t i = 0; i < 2; i++) {
        t.network.record(i).SwapCordon(
            CordonOwner::kNone, {CordonOwner::kPoller, CordonCause::kUnhealthy, 1});
    }
    int warnings = 0;
    for (int k = 0; k < 3; k++) {
        RoutedRequest req(Parse(kGetSlot));
        ASSERT_TRUE(req.Route(t.network, {}, 1000).forward);
        auto attempt = req.NextAttempt(1000);
        ASSERT_TRUE(attempt);
        warnings += attempt->warn_all_cordoned ? 1 : 0;
    }
    EXPECT_EQ(warnings, 1);
    EXPECT_EQ(t.network.counters().all_cordoned_fallbacks.load(), 3u);
}

TEST(RoutedRequest, ABadSelectorIsAnsweredHere) {
    TestNetwork t(2);
    RoutedRequest req(Parse(kGetSlot));
    SelectorSources s;
    s.header = "a |";
    RouteDecision d = req.Route(t.network, s, 0);
    EXPECT_FALSE(d.forward);
    EXPECT_NE(d.answer.find("-32602"), std::string::npos);
    EXPECT_NE(d.answer.find("missing pattern after '|'"), std::string::npos);
}

// A network a test builds from `upstream` directive arguments.
struct BuiltNetwork {
    BuiltNetwork(const std::vector<std::vector<std::string_view>>& upstreams,
                 NetworkSettings settings = {})
        : shared(std::make_unique<NetworkShared>()), network("m", settings) {
        size_t index = 0;
        for (const auto& args : upstreams) {
            EXPECT_FALSE(network.AddUpstreamArgs(args, &index));
        }
        std::string error;
        EXPECT_TRUE(network.Bind(shared.get(), true, 0, &error)) << error;
    }
    void Cordon(size_t i) {
        network.record(i).SwapCordon(
            CordonOwner::kNone, {CordonOwner::kPoller, CordonCause::kUnhealthy, 1});
    }
    std::unique_ptr<NetworkShared> shared;
    Network network;
};

std::map<size_t, int> FirstPicks(const Network& n, const SelectorSources& s,
                                 int requests, int64_t now_ms = 0) {
    std::map<size_t, int> picks;
    for (int k = 0; k < requests; k++) {
        RoutedRequest req(Parse(kGetSlot));
        EXPECT_TRUE(req.Route(n, s, now_ms).forward);
        auto attempt = req.NextAttempt(now_ms);
        EXPECT_TRUE(attempt);
        if (attempt) picks[attempt->upstream]++;
    }
    return picks;
}

TEST(RoutedRequest, BackupsServeOnlyWhenNoPrimaryIsEligible) {
    BuiltNetwork b({{"own-1", "http://a", "tags=family:own"},
                    {"own-2", "http://b", "tags=family:own"},
                    {"vendor", "http://c", "backup"}});
    EXPECT_EQ(FirstPicks(b.network, {}, 6),
              (std::map<size_t, int>{{0, 3}, {1, 3}}));
    b.Cordon(0);
    b.Cordon(1);
    EXPECT_EQ(FirstPicks(b.network, {}, 4), (std::map<size_t, int>{{2, 4}}));
    // after every primary failed, the backup is the next attempt
    BuiltNetwork c({{"own-1", "http://a"}, {"vendor", "http://c", "backup"}});
    RoutedRequest req(Parse(kGetSlot));
    ASSERT_TRUE(req.Route(c.network, {}, 0).forward);
    EXPECT_EQ(req.NextAttempt(0)->upstream, 0u);
    auto second = req.NextAttempt(0);
    EXPECT_EQ(second->upstream, 1u);
    EXPECT_EQ(second->tier, CandidateTier::kBackup);
}

TEST(RoutedRequest, TheDefaultGroupFallsBackToTheNetworksBackups) {
    NetworkSettings settings;
    settings.default_selector = "family:own";
    BuiltNetwork b({{"own-1", "http://a", "tags=family:own"},
                    {"own-2", "http://b", "tags=family:own"},
                    {"vendor", "http://c", "backup"},
                    {"other", "http://d"}},
                   settings);
    EXPECT_EQ(FirstPicks(b.network, {}, 4),
              (std::map<size_t, int>{{0, 2}, {1, 2}}));
    b.Cordon(0);
    b.Cordon(1);
    EXPECT_EQ(FirstPicks(b.network, {}, 3), (std::map<size_t, int>{{2, 3}}));
    // a client's own selector keeps its answer: every match is cordoned
    SelectorSources s;
    s.header = "family:own";
    RoutedRequest req(Parse(kGetSlot));
    RouteDecision d = req.Route(b.network, s, 0);
    EXPECT_FALSE(d.forward);
    EXPECT_NE(d.answer.find("-32005"), std::string::npos);
}

TEST(RoutedRequest, ClientSelectorsCanBeTurnedOff) {
    NetworkSettings settings;
    settings.use_upstream_from_client = false;
    TestNetwork t(3, settings);
    SelectorSources s;
    s.header = "up-2";
    s.query = "up-2";
    EXPECT_EQ(FirstPicks(t.network, s, 3).size(), 3u);   // ignored
}

TEST(RoutedRequest, ReportsEjectAndTheNextRequestsGoElsewhere) {
    BuiltNetwork b({{"a", "http://a", "max_fails=1", "fail_timeout=5s"},
                    {"b", "http://b"}});
    RoutedRequest req(Parse(kGetSlot));
    ASSERT_TRUE(req.Route(b.network, {}, 1000).forward);
    auto first = req.NextAttempt(1000);
    ASSERT_EQ(first->upstream, 0u);
    RoutedRequest::AttemptEnd limited;
    limited.http_status = 429;
    limited.retry_after = "2";
    RoutedRequest::AttemptReport r = req.Report(limited, 1000);
    EXPECT_EQ(r.outcome.cause, AttemptCause::kRateLimited);
    EXPECT_EQ(r.ejected_ms, 5000);   // fail_timeout beats a shorter Retry-After
    EXPECT_FALSE(r.write_not_retried);
    EXPECT_EQ(FirstPicks(b.network, {}, 4, 2000),
              (std::map<size_t, int>{{1, 4}}));
    EXPECT_EQ(FirstPicks(b.network, {}, 4, 6000).size(), 2u);   // back
    // an answer is no failure
    RoutedRequest ok(Parse(kGetSlot));
    ASSERT_TRUE(ok.Route(b.network, {}, 7000).forward);
    ok.NextAttempt(7000);
    RoutedRequest::AttemptEnd answered;
    answered.http_status = 200;
    RoutedRequest::AttemptReport a = ok.Report(answered, 7000);
    EXPECT_EQ(a.outcome.cause, AttemptCause::kOk);
    EXPECT_EQ(a.ejected_ms, 0);
}

TEST(RoutedRequest, AnAnswerCutShortCountsAsAFailureThoughItWasReportedAnswered) {
    BuiltNetwork b({{"a", "http://a", "max_fails=2", "fail_timeout=5s"},
                    {"b", "http://b"}});
    RoutedRequest::AttemptEnd answered;
    answered.http_status = 200;
    SelectorSources on_a;   // both to a: its failures need not move routing
    on_a.query = "a";
    for (int k = 0; k < 2; k++) {
        RoutedRequest req(Parse(kGetSlot));
        ASSERT_TRUE(req.Route(b.network, on_a, 1000).forward);
        auto attempt = req.NextAttempt(1000);
        ASSERT_EQ(attempt->upstream, 0u) << k;
        EXPECT_EQ(req.Report(answered, 1000).outcome.cause, AttemptCause::kOk);
        // the second cut in a row is max_fails: out for fail_timeout
        EXPECT_EQ(req.ReportCut(1000), k == 0 ? 0 : 5000) << k;
    }
    EXPECT_EQ(b.network.host(0).cut_answers.load(), 2u);
    EXPECT_EQ(b.network.host(1).cut_answers.load(), 0u);
    EXPECT_EQ(FirstPicks(b.network, {}, 4, 2000),
              (std::map<size_t, int>{{1, 4}}));
    // no attempt yet, or one that failed (its answer was never passed
    // on): nothing to blame twice
    RoutedRequest none(Parse(kGetSlot));
    EXPECT_EQ(none.ReportCut(3000), 0);
    RoutedRequest failed(Parse(kGetSlot));
    ASSERT_TRUE(failed.Route(b.network, {}, 3000).forward);
    ASSERT_EQ(failed.NextAttempt(3000)->upstream, 1u);
    RoutedRequest::AttemptEnd bad;
    bad.http_status = 502;
    failed.Report(bad, 3000);
    EXPECT_EQ(failed.ReportCut(3000), 0);
    EXPECT_EQ(b.network.host(1).cut_answers.load(), 0u);
}

// nginx logs a cut answer with the 200 it had sent: the request is still
// counted as cut, the upstream's error, not as an answer that was fine.
TEST(RoutedRequest, ARequestWhoseAnswerWasCutIsCountedAsCut) {
    TestNetwork t(1);
    RoutedRequest req(Parse(kGetSlot));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    ASSERT_TRUE(req.NextAttempt(0));
    RoutedRequest::AttemptEnd answered;
    answered.http_status = 200;
    req.Report(answered, 0);
    req.ReportCut(0);
    req.Finish(200, false, std::nullopt, 5);
    std::map<RequestOutcome, uint64_t> counted;
    ForEachRequestCount(t.shared->counters.requests,
                        [&](size_t, size_t, RequestOutcome o, uint64_t n) {
                            counted[o] += n;
                        });
    EXPECT_EQ(counted, (std::map<RequestOutcome, uint64_t>{
                           {RequestOutcome::kCut, 1}}));
    EXPECT_EQ(RequestOutcomeName(RequestOutcome::kCut), "cut");
    EXPECT_EQ(UpstreamTrafficOf(t.network)[0].errors, 1u);
}

// An attempt of `req` on upstream 0 (named "a", picked by the query
// selector) that ended with `status` (and Retry-After), reported.
void AttemptOnA(const BuiltNetwork& b, RoutedRequest& req, unsigned status,
                std::string_view retry_after = {}) {
    SelectorSources on_a;
    on_a.query = "a";
    ASSERT_TRUE(req.Route(b.network, on_a, 1000).forward);
    ASSERT_EQ(req.NextAttempt(1000)->upstream, 0u);
    RoutedRequest::AttemptEnd end;
    end.http_status = status;
    end.retry_after = retry_after;
    req.Report(end, 1000);
}

// Another request's whole answer between a header and its cut ends the
// failure run: the cut does not take that answer's success back.
TEST(RoutedRequest, AnAnswerCutShortLeavesOtherAnswersSuccessesStanding) {
    BuiltNetwork b({{"a", "http://a", "max_fails=2", "fail_timeout=5s"},
                    {"b", "http://b"}});
    RoutedRequest failed(Parse(kGetSlot));
    AttemptOnA(b, failed, 502);                // run 1 of 2
    EXPECT_EQ(b.network.host(0).consecutive_fails.load(), 1u);
    RoutedRequest cut(Parse(kGetSlot));
    AttemptOnA(b, cut, 200);                   // its header: run ended
    RoutedRequest whole(Parse(kGetSlot));
    AttemptOnA(b, whole, 200);                 // another answer, whole
    EXPECT_EQ(cut.ReportCut(1000), 0);         // run 1, not 2: still in
    EXPECT_EQ(b.network.host(0).consecutive_fails.load(), 1u);
    EXPECT_EQ(b.network.host(0).cut_answers.load(), 1u);
    // with nothing in between, the same cut takes its success back
    RoutedRequest cut_again(Parse(kGetSlot));
    AttemptOnA(b, cut_again, 200);
    EXPECT_EQ(cut_again.ReportCut(1000), 5000);
}

// An ejection ends the failure run too: a cut after it starts a new one.
TEST(RoutedRequest, AnAnswerCutShortAfterAnEjectionStartsANewFailureRun) {
    BuiltNetwork b({{"a", "http://a", "max_fails=3", "fail_timeout=5s"},
                    {"b", "http://b"}});
    RoutedRequest failed(Parse(kGetSlot));
    AttemptOnA(b, failed, 502);
    RoutedRequest failed_again(Parse(kGetSlot));
    AttemptOnA(b, failed_again, 502);          // run 2 of 3
    RoutedRequest cut(Parse(kGetSlot));
    AttemptOnA(b, cut, 200);                   // its header: run ended
    RoutedRequest limited(Parse(kGetSlot));
    AttemptOnA(b, limited, 429, "1");          // out 1 s: the run ends
    EXPECT_EQ(b.network.host(0).consecutive_fails.load(), 0u);
    EXPECT_EQ(cut.ReportCut(1000), 0);         // run 1, not back to 3
    EXPECT_EQ(b.network.host(0).consecutive_fails.load(), 1u);
}

// A write is tried again only when it never reached the node.
TEST(RoutedRequest, WritesAreRetriedOnlyWhenTheyNeverReachedTheNode) {
    TestNetwork t(2);
    const std::string send =
        R"({"jsonrpc":"2.0","id":5,"method":"sendTransaction","params":["AQ"]})";
    RoutedRequest req(Parse(send));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    req.NextAttempt(0);
    RoutedRequest::AttemptEnd refused;   // connect failed: safe elsewhere
    refused.connected = false;
    EXPECT_FALSE(req.Report(refused, 0).write_not_retried);
    req.NextAttempt(0);
    RoutedRequest::AttemptEnd timed_out;
    timed_out.timed_out = true;
    RoutedRequest::AttemptReport r = req.Report(timed_out, 0);
    EXPECT_TRUE(r.write_not_retried);
    EXPECT_EQ(req.WriteNotRetriedAnswer(r),
              R"x({"jsonrpc":"2.0","error":{"code":-32603,"message":)x"
              R"x("Internal error: the upstream failed (timeout) after the )x"
              R"x(request may have reached it; not retried on another )x"
              R"x(upstream, so that a transaction is never sent twice"},)x"
              R"x("id":5})x");
    // a read is retried whatever happened
    RoutedRequest read(Parse(kGetSlot));
    ASSERT_TRUE(read.Route(t.network, {}, 0).forward);
    read.NextAttempt(0);
    EXPECT_FALSE(read.Report(timed_out, 0).write_not_retried);
}

// A node that answers a read with -32005 says it is behind: the read goes
// to another node while one is left; the last one's answer is the client's.
TEST(RoutedRequest, ANodeThatSaysItIsBehindIsFailedOverForReads) {
    TestNetwork t(2);
    const std::string behind =
        R"({"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is )"
        R"(behind by 80 slots","data":{"numSlotsBehind":80}},"id":3})";
    RoutedRequest::AttemptEnd answered;
    answered.http_status = 200;
    answered.answer = behind;

    RoutedRequest read(Parse(kGetSlot));
    ASSERT_TRUE(read.Route(t.network, {}, 0).forward);
    size_t first = read.NextAttempt(0)->upstream;
    RoutedRequest::AttemptReport r = read.Report(answered, 0);
    EXPECT_EQ(r.outcome.cause, AttemptCause::kNodeBehind);
    EXPECT_EQ(t.network.host(first)
                  .failovers[static_cast<size_t>(AttemptCause::kNodeBehind)]
                  .load(),
              1u);
    ASSERT_TRUE(read.NextAttempt(0));
    EXPECT_EQ(read.Report(answered, 0).outcome.cause, AttemptCause::kOk)
        << "none left: the answer stands";

    // another error, a write, a batch: the answer stands
    RoutedRequest other(Parse(kGetSlot));
    ASSERT_TRUE(other.Route(t.network, {}, 0).forward);
    other.NextAttempt(0);
    RoutedRequest::AttemptEnd not_found = answered;
    not_found.answer = R"({"jsonrpc":"2.0","error":{"code":-32004,)"
                       R"("message":"Block not available"},"id":3})";
    EXPECT_EQ(other.Report(not_found, 0).outcome.cause, AttemptCause::kOk);
    for (const std::string& body :
         {std::string(R"({"jsonrpc":"2.0","id":5,"method":"sendTransaction",)"
                      R"("params":["AQ"]})"),
          "[" + kGetSlot + "]"}) {
        RoutedRequest req(Parse(body));
        ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
        req.NextAttempt(0);
        EXPECT_EQ(req.Report(answered, 0).outcome.cause, AttemptCause::kOk)
            << body;
    }
}

// -32016 answers the client's minContextSlot, which any client may set
// past every node: the read goes to another node, and no node is out of
// rotation for it, however many come (max_fails=1).
TEST(RoutedRequest, AMinContextSlotNotReachedIsFailedOverButNoNodesFailure) {
    BuiltNetwork b({{"a", "http://a", "max_fails=1"},
                    {"b", "http://b", "max_fails=1"}});
    const std::string not_reached =
        R"({"jsonrpc":"2.0","error":{"code":-32016,"message":"Minimum )"
        R"(context slot has not been reached"},"id":1})";
    RoutedRequest::AttemptEnd answered;
    answered.http_status = 200;
    answered.answer = not_reached;
    const std::string ask =
        R"({"jsonrpc":"2.0","id":1,"method":"getBalance","params":["x",)"
        R"({"minContextSlot":999999999999}]})";
    for (int k = 0; k < 3; k++) {
        RoutedRequest read(Parse(ask));
        ASSERT_TRUE(read.Route(b.network, {}, 1000).forward);
        size_t first = read.NextAttempt(1000)->upstream;
        RoutedRequest::AttemptReport r = read.Report(answered, 1000);
        EXPECT_EQ(r.outcome.cause, AttemptCause::kMinContextSlot) << k;
        EXPECT_EQ(r.ejected_ms, 0) << k;
        EXPECT_EQ(b.network.host(first).consecutive_fails.load(), 0u) << k;
        ASSERT_TRUE(read.NextAttempt(1000)) << k;
        EXPECT_EQ(read.Report(answered, 1000).outcome.cause, AttemptCause::kOk)
            << "none left: the answer stands";
    }
    EXPECT_EQ(FirstPicks(b.network, {}, 4, 2000).size(), 2u)
        << "both nodes still take traffic";
    EXPECT_EQ(b.network.host(0).ejections.load() +
                  b.network.host(1).ejections.load(),
              0u);
    // counted as failovers of their own cause, never in the status page's
    // errors; the last answer is the client's mistake
    EXPECT_EQ(b.network.host(0).failovers[static_cast<size_t>(
                                              AttemptCause::kMinContextSlot)]
                      .load() +
                  b.network.host(1).failovers[static_cast<size_t>(
                                                  AttemptCause::kMinContextSlot)]
                      .load(),
              3u);
    RoutedRequest last(Parse(ask));
    ASSERT_TRUE(last.Route(b.network, {}, 3000).forward);
    ASSERT_TRUE(last.NextAttempt(3000));
    last.Finish(200, true, kMinContextSlotNotReached, 5);
    std::map<RequestOutcome, uint64_t> counted;
    ForEachRequestCount(b.network.counters().requests,
                        [&](size_t, size_t, RequestOutcome o, uint64_t n) {
                            counted[o] += n;
                        });
    EXPECT_EQ(counted[RequestOutcome::kClientError], 1u);
    for (const UpstreamTraffic& t : UpstreamTrafficOf(b.network)) {
        EXPECT_EQ(t.errors, 0u);
    }
}

// A client that closed its connection first (nginx's 499) blames no
// upstream: its own outcome, no latency observed, no error on the status
// page.
TEST(RoutedRequest, AClientThatLeftIsNotTheUpstreamsError) {
    TestNetwork t(1);
    RoutedRequest req(Parse(R"({"jsonrpc":"2.0","id":1,"method":"getBalance"})"));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    ASSERT_TRUE(req.NextAttempt(0));
    req.Finish(kClientClosedStatus, false, std::nullopt, 100);
    std::map<RequestOutcome, uint64_t> counted;
    ForEachRequestCount(t.shared->counters.requests,
                        [&](size_t, size_t, RequestOutcome o, uint64_t n) {
                            counted[o] += n;
                        });
    EXPECT_EQ(counted, (std::map<RequestOutcome, uint64_t>{
                           {RequestOutcome::kClientClosed, 1}}));
    EXPECT_EQ(UpstreamTrafficOf(t.network)[0].errors, 0u);
    uint64_t observed = 0;
    for (const auto& count : t.network.host(0).latency_count) {
        observed += count.load();
    }
    EXPECT_EQ(observed, 0u);
}

// The answer views a body that lives as long as the test binary.
RoutedRequest::AttemptEnd ErrorAnswer(int code, const std::string& message) {
    static std::deque<std::string> bodies;
    bodies.push_back(R"({"jsonrpc":"2.0","error":{"code":)" +
                     std::to_string(code) + R"(,"message":")" + message +
                     R"("},"id":3})");
    RoutedRequest::AttemptEnd end;
    end.http_status = 200;
    end.answer = bodies.back();
    return end;
}

const std::string kGetBlock =
    R"({"jsonrpc":"2.0","id":3,"method":"getBlock","params":[500]})";

// A node without the block: ask up to attempts= others that may hold it
// (a shred-insert watermark at or above the slot), after delay=.
TEST(RoutedRequest, MissingDataIsAskedOfUpstreamsThatMayHoldIt) {
    NetworkSettings settings;
    settings.retry_missing_data.attempts = 1;
    settings.retry_missing_data.delay_ms = 150;
    TestNetwork t(4, settings);
    t.network.slots().Suggest(1, kSlotShred, 400);   // cannot hold slot 500
    t.network.slots().Suggest(2, kSlotShred, 600);
    t.network.slots().Suggest(3, kSlotShred, 700);
    RoutedRequest req(Parse(kGetBlock));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    std::set<size_t> asked{req.NextAttempt(0)->upstream};
    RoutedRequest::AttemptReport r =
        req.Report(ErrorAnswer(-32004, "Block not available for slot 500"), 0);
    EXPECT_EQ(r.retry, RoutedRequest::Retry::kMissingData);
    EXPECT_EQ(r.retry_delay_ms, 150u);
    EXPECT_EQ(r.outcome.cause, AttemptCause::kOk) << "not the node's failure";
    EXPECT_EQ(t.network.counters().retries[1].load(), 1u);
    auto next = req.NextAttempt(0);
    ASSERT_TRUE(next);
    EXPECT_NE(next->upstream, 1u) << "its watermark is below the slot";
    asked.insert(next->upstream);
    // attempts=1 spent: this answer is the client's
    RoutedRequest::AttemptReport last =
        req.Report(ErrorAnswer(-32004, "Block not available for slot 500"), 0);
    EXPECT_EQ(last.retry, RoutedRequest::Retry::kNone);
    EXPECT_FALSE(last.answer_kept);
    EXPECT_EQ(asked.size(), 2u);
}

// Skipped: every candidate once, at once; a missing-data answer outranks
// the skipped-slot ones when nobody had the block.
TEST(RoutedRequest, ASkippedSlotIsOneSweepAndMissingDataIsTheAnswer) {
    TestNetwork t(3);
    RoutedRequest req(Parse(kGetBlock));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    req.NextAttempt(0);
    auto pruned = ErrorAnswer(-32001, "Block 500 cleaned up");
    EXPECT_EQ(req.Report(pruned, 0).retry, RoutedRequest::Retry::kMissingData);
    req.NextAttempt(0);
    auto skipped = ErrorAnswer(-32007, "Slot 500 was skipped");
    RoutedRequest::AttemptReport r = req.Report(skipped, 0);
    EXPECT_EQ(r.retry, RoutedRequest::Retry::kSkippedSlot);
    EXPECT_EQ(r.retry_delay_ms, 0u);
    req.NextAttempt(0);
    RoutedRequest::AttemptReport end = req.Report(skipped, 0);
    EXPECT_EQ(end.retry, RoutedRequest::Retry::kNone);
    EXPECT_TRUE(end.answer_kept) << "give up with the -32001";
    EXPECT_FALSE(req.NextAttempt(0));
    ASSERT_NE(req.KeptAnswer(), nullptr);
    EXPECT_EQ(*req.KeptAnswer(), pruned.answer);
}

TEST(RoutedRequest, ClientErrorsAndPolicyOffAreTheClients) {
    TestNetwork t(3);
    RoutedRequest req(Parse(kGetBlock));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    req.NextAttempt(0);
    RoutedRequest::AttemptReport r =
        req.Report(ErrorAnswer(-32602, "Invalid params"), 0);
    EXPECT_EQ(r.retry, RoutedRequest::Retry::kNone);
    EXPECT_EQ(r.outcome.cause, AttemptCause::kOk);
    EXPECT_EQ(req.KeptAnswer(), nullptr);

    NetworkSettings off;
    off.retry_missing_data.on = false;
    TestNetwork quiet(3, off);
    RoutedRequest again(Parse(kGetBlock));
    ASSERT_TRUE(again.Route(quiet.network, {}, 0).forward);
    again.NextAttempt(0);
    EXPECT_EQ(again.Report(ErrorAnswer(-32004, "x"), 0).retry,
              RoutedRequest::Retry::kNone);
    again.NextAttempt(0);
    EXPECT_EQ(again.Report(ErrorAnswer(-32007, "x"), 0).retry,
              RoutedRequest::Retry::kNone);
}

// A merged batch's merge is made in the storage the request keeps when
// cleared; the next requests parsed into it merge (or not) as ones made
// from nothing.
TEST(RoutedRequest, AClearedRequestKeepsAMergesStorageAndNothingOfIt) {
    NetworkSettings mainnet;
    mainnet.cluster = SG_CLUSTER_MAINNET_BETA;
    TestNetwork t(1, mainnet);
    const std::string batch =
        R"([{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"},)"
        R"({"jsonrpc":"2.0","id":"b","method":"getSlot"}])";
    RoutedRequest req;
    req.Parse(batch.data(), batch.size());
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    ASSERT_EQ(req.merge().size(), 2u);
    req.Clear();
    EXPECT_TRUE(req.merge().empty());

    // a single call: no merge
    req.Parse(kGetSlot.data(), kGetSlot.size());
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    EXPECT_TRUE(req.merge().empty());
    req.Clear();

    const std::string other =
        R"([{"jsonrpc":"2.0","id":7,"method":"getSlot"}])";
    RoutedRequest fresh(Parse(other));
    ASSERT_TRUE(fresh.Route(t.network, {}, 0).forward);
    req.Parse(other.data(), other.size());
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    ASSERT_EQ(req.merge().size(), fresh.merge().size());
    ASSERT_EQ(req.merge().size(), 1u);
    EXPECT_TRUE(req.merge()[0].forwarded);
    EXPECT_EQ(req.merge()[0].id, "7");
    EXPECT_EQ(req.merge()[0].text, "");
}

// A node's error answer is counted against it; an error that is the
// client's mistake (its params, a method no Solana node has, one agave
// removed) is counted apart, so that a client's garbage does not make every node look bad.
TEST(RoutedRequest, AClientsMistakeIsCountedApartFromTheNodesErrors) {
    struct Case {
        std::string method;
        bool rpc_error;
        std::optional<int64_t> code;
        RequestOutcome outcome;
    };
    const Case cases[] = {
        {"getBalance", false, std::nullopt, RequestOutcome::kOk},
        {"getBalance", true, -32602, RequestOutcome::kClientError},
        {"sendTransaction", true, -32002, RequestOutcome::kClientError},
        {"getFoo", true, -32601, RequestOutcome::kClientError},
        // removed in agave 2.0: a current node rightly lacks it
        {"getRecentBlockhash", true, -32601, RequestOutcome::kClientError},
        {"getStakeActivation", true, -32601, RequestOutcome::kClientError},
        // a removed method's other errors are still the node's
        {"getFees", true, -32005, RequestOutcome::kRpcError},
        // a Solana method the node does not serve: the node's
        {"getBalance", true, -32601, RequestOutcome::kRpcError},
        {"getBalance", true, -32005, RequestOutcome::kRpcError},
        {"getBalance", true, std::nullopt, RequestOutcome::kRpcError},
    };
    for (const Case& c : cases) {
        TestNetwork t(1);
        RoutedRequest req(Parse(R"({"jsonrpc":"2.0","id":1,"method":")" +
                                c.method + R"("})"));
        ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
        ASSERT_TRUE(req.NextAttempt(0));
        req.Finish(200, c.rpc_error, c.code, 5);
        std::map<RequestOutcome, uint64_t> counted;
        ForEachRequestCount(t.shared->counters.requests,
                            [&](size_t slot, size_t, RequestOutcome o,
                                uint64_t n) {
                                EXPECT_EQ(slot, t.network.RecordIndex(0));
                                counted[o] += n;
                            });
        EXPECT_EQ(counted, (std::map<RequestOutcome, uint64_t>{{c.outcome, 1}}))
            << c.method << " " << c.code.value_or(0);
    }
}

// Nothing of a finished request reaches the next parsed into it: its
// attempts, the upstreams it tried, its kept answer, its retries.
TEST(RoutedRequest, AClearedRequestIsAsANewOne) {
    TestNetwork t(3);
    RoutedRequest req;
    req.Parse(kGetBlock.data(), kGetBlock.size());
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    req.NextAttempt(0);
    req.Report(ErrorAnswer(-32001, "Block 500 cleaned up"), 0);
    req.NextAttempt(0);
    req.Report(ErrorAnswer(-32007, "Slot 500 was skipped"), 0);
    req.NextAttempt(0);
    req.Report(ErrorAnswer(-32007, "Slot 500 was skipped"), 0);
    ASSERT_FALSE(req.NextAttempt(0));
    ASSERT_NE(req.KeptAnswer(), nullptr);
    req.Finish(200, true, -32007, 5);
    req.Clear();

    EXPECT_EQ(req.network(), nullptr);
    EXPECT_EQ(req.attempts(), 0u);
    EXPECT_FALSE(req.upstream());
    EXPECT_EQ(req.KeptAnswer(), nullptr);
    EXPECT_FALSE(req.run());
    EXPECT_EQ(req.parsed().shape, RpcRequest::Shape::kUnreadable);
    EXPECT_TRUE(req.parsed().calls.empty());

    req.Parse(kGetBlock.data(), kGetBlock.size());
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    std::set<size_t> asked;
    for (int k = 0; k < 3; k++) {
        auto attempt = req.NextAttempt(0);
        ASSERT_TRUE(attempt) << k;
        asked.insert(attempt->upstream);
        if (k == 0) {   // its retry is not spent: asked afresh
            EXPECT_EQ(
                req.Report(ErrorAnswer(-32001, "Block 500 cleaned up"), 0)
                    .retry,
                RoutedRequest::Retry::kMissingData);
        }
    }
    EXPECT_EQ(asked.size(), 3u) << "every upstream may be tried again";
    EXPECT_EQ(req.attempts(), 3u);
}

TEST(RoutedRequest, ASplitBatchThatFailsKeepsItsLocalAnswers) {
    NetworkSettings mainnet;
    mainnet.cluster = SG_CLUSTER_MAINNET_BETA;
    TestNetwork t(1, mainnet);
    RoutedRequest req(Parse(R"([{"jsonrpc":"2.0","id":1,"method":"getGenesisHash"},)"
                            R"({"jsonrpc":"2.0","id":"b","method":"getSlot"}])"));
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    ASSERT_TRUE(req.NextAttempt(0));
    EXPECT_FALSE(req.NextAttempt(0));
    EXPECT_EQ(req.AllFailedAnswer(),
              R"([{"jsonrpc":"2.0","result":"5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d","id":1},)"
              R"x({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal )x"
              R"x(error: no upstream could serve the request (1 tried)"},"id":"b"}])x");
    // it holds a result, so it is a 200: a client keeps the body
    EXPECT_EQ(req.AllFailed().http_status, 200u);
    EXPECT_EQ(req.AllFailed().body, req.AllFailedAnswer());
}

// A batch whose only answers made here are errors is a failure as a whole
// (502), as are a single call and a batch of calls all sent.
TEST(RoutedRequest, AFailedBatchWithoutAResultMadeHereIsA502) {
    TestNetwork t(1);
    for (const char* body :
         {R"([{"jsonrpc":"1.0","id":1,"method":"getSlot"},)"
          R"({"jsonrpc":"2.0","id":"b","method":"getSlot"}])",
          R"([{"jsonrpc":"2.0","id":1,"method":"getSlot"},)"
          R"({"jsonrpc":"2.0","id":"b","method":"getSlot"}])",
          R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})"}) {
        RoutedRequest req(Parse(body));
        ASSERT_TRUE(req.Route(t.network, {}, 0).forward) << body;
        ASSERT_TRUE(req.NextAttempt(0));
        EXPECT_EQ(req.AllFailed().http_status, 502u) << body;
    }
}

// A run of a batch that went call by call fails without brackets, and
// says nothing for its notifications (the client's array has no room).
TEST(RoutedRequest, ARunThatFailsAnswersItsCallsWithoutBrackets) {
    TestNetwork t(1);
    RoutedRequest req(Parse(R"([{"jsonrpc":"2.0","id":1,"method":"getBalance"},)"
                            R"({"jsonrpc":"2.0","method":"getBalance"}])"));
    req.SetRun();
    ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
    ASSERT_TRUE(req.NextAttempt(0));
    EXPECT_EQ(req.AllFailedAnswer(),
              R"x({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal )x"
              R"x(error: no upstream could serve the request (1 tried)"},"id":1})x");
    RoutedRequest quiet(Parse(R"([{"jsonrpc":"2.0","method":"sendTransaction"}])"));
    quiet.SetRun();
    ASSERT_TRUE(quiet.Route(t.network, {}, 0).forward);
    ASSERT_TRUE(quiet.NextAttempt(0));
    RoutedRequest::AttemptReport report;
    EXPECT_EQ(quiet.WriteNotRetriedAnswer(report), "");
    EXPECT_EQ(quiet.AllFailedAnswer(), "");
}

// A piece that ended with an HTTP error no failover took, or answered
// nothing: an error per call, in the shape of its place.
TEST(RoutedRequest, APieceThatEndedBadlyAnswersEachCall) {
    TestNetwork t(1);
    RoutedRequest one(Parse(R"({"jsonrpc":"2.0","id":"t","method":"getTransaction"})"));
    ASSERT_TRUE(one.Route(t.network, {}, 0).forward);
    EXPECT_EQ(one.StatusAnswer(403),
              R"({"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal )"
              R"(error: the call ended with HTTP status 403"},"id":"t"})");
    EXPECT_NE(one.StatusAnswer(0).find("answer was empty"), std::string::npos);
    RoutedRequest run(Parse(R"([{"jsonrpc":"2.0","id":1,"method":"getBalance"},)"
                            R"({"jsonrpc":"2.0","method":"getBalance"},)"
                            R"({"jsonrpc":"2.0","id":2,"method":"getSlot"}])"));
    run.SetRun();
    ASSERT_TRUE(run.Route(t.network, {}, 0).forward);
    std::string answer = run.StatusAnswer(404);
    EXPECT_EQ(answer.front(), '{');
    EXPECT_NE(answer.find(R"("id":1},{)"), std::string::npos);
    EXPECT_EQ(answer.substr(answer.size() - 7), R"("id":2})");
}

// One upstream answers a whole batch: it should have reached the highest
// minContextSlot any of its calls asks for.
TEST(RoutedRequest, ABatchGoesWhereItsHighestMinContextSlotIsReached) {
    TestNetwork t(3);
    t.network.slots().Suggest(0, kSlotProcessed, 100);
    t.network.slots().Suggest(1, kSlotProcessed, 300);
    t.network.slots().Suggest(2, kSlotProcessed, 200);
    const std::string batch =
        R"([{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["x",{"minContextSlot":150}]},)"
        R"({"jsonrpc":"2.0","id":2,"method":"getBalance","params":["x",{"minContextSlot":250}]}])";
    for (int i = 0; i < 6; i++) {
        RoutedRequest req(Parse(batch));
        ASSERT_TRUE(req.Route(t.network, {}, 0).forward);
        EXPECT_EQ(req.NextAttempt(0)->upstream, 1u);
    }
}

}  // namespace
}  // namespace solgate
