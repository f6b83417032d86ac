// One request through routing: the selector by precedence, the attempts,
// the answer when all of them failed.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "routing/routed_request.h"
#include "routing/selector_sources.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::TestNetwork;

RpcRequest Parse(const std::string& body) {
    return ParseRpcRequest(body.data(), body.size());
}

const std::string kGetSlot = R"({"jsonrpc":"2.0","id":3,"method":"getSlot"})";

TEST(ChooseSelector, HeaderThenAliasThenQueryThenDefault) {
    SelectorSources s;
    EXPECT_EQ(ChooseSelector(s, "dflt"), "dflt");
    s.query = "q";
    EXPECT_EQ(ChooseSelector(s, "dflt"), "q");
    s.erpc_header = "e";
    EXPECT_EQ(ChooseSelector(s, "dflt"), "e");
    s.header = "h";
    EXPECT_EQ(ChooseSelector(s, "dflt"), "h");
    s.header = "";   // present but empty: no selector at all
    EXPECT_EQ(ChooseSelector(s, "dflt"), "");
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

}  // namespace
}  // namespace solgate
