// What a request may use and whose tip it gets: selectors, method filters,
// the ledger window of Cube Runner's networks, and the errors a plan makes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "routing/route_plan.h"
#include "slots/slot_hooks.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::TestNetwork;

RpcRequest Parse(const std::string& method, const std::string& params = "[]") {
    std::string body = R"({"jsonrpc":"2.0","id":1,"method":")" + method +
                       R"(","params":)" + params + "}";
    return ParseRpcRequest(body.data(), body.size());
}

TEST(RoutePlan, WithoutASelectorEveryUpstreamOnTheNetworkWideLane) {
    TestNetwork t(3);
    RpcRequest req = Parse("getSlot");
    RoutePlan plan = PlanRoute(t.network, req, "");
    EXPECT_FALSE(plan.has_selector);
    EXPECT_EQ(plan.matched, (std::vector<size_t>{0, 1, 2}));
    EXPECT_EQ(plan.serving, plan.matched);
    EXPECT_EQ(plan.allowed, (std::vector<unsigned char>{1, 1, 1}));
    EXPECT_EQ(plan.lane, kAllLane);
    EXPECT_EQ(plan.lane_name, "all");
    EXPECT_FALSE(plan.error);
}

// An earlier plan lends its vectors' storage, never their content: a plan
// made in it is the plan made from nothing.
TEST(RoutePlan, ThePlanMadeInAnEarlierPlansRoomIsTheSame) {
    TestNetwork t(3);
    RpcRequest req = Parse("getSlot");
    RoutePlan earlier = PlanRoute(t.network, req, "up-1");
    earlier.fallback.assign(3, 1);
    earlier.error = RpcError{kInvalidParams, "left over"};
    RoutePlan fresh = PlanRoute(t.network, req, "");
    RoutePlan plan = PlanRoute(t.network, req, "", true, std::move(earlier));
    EXPECT_EQ(plan.has_selector, fresh.has_selector);
    EXPECT_EQ(plan.client_selector, fresh.client_selector);
    EXPECT_EQ(plan.matched, fresh.matched);
    EXPECT_EQ(plan.serving, fresh.serving);
    EXPECT_EQ(plan.allowed, fresh.allowed);
    EXPECT_EQ(plan.fallback, fresh.fallback);
    EXPECT_EQ(plan.lane, fresh.lane);
    EXPECT_EQ(plan.lane_name, fresh.lane_name);
    EXPECT_FALSE(plan.error);
    ResetPlan(plan);
    EXPECT_TRUE(plan.matched.empty() && plan.serving.empty() &&
                plan.allowed.empty() && plan.fallback.empty());
    EXPECT_FALSE(plan.lane);
    EXPECT_TRUE(plan.lane_name.empty());
}

// A selector's plan is copied from the network's cached group into the
// plan's kept storage: the same plan the first time (group made) and
// later (read from the cache), in a fresh plan or in an earlier one's.
TEST(RoutePlan, ASelectorsPlanIsTheSameFromTheCacheAndInAnEarlierRoom) {
    TestNetwork t(4);
    RpcRequest req = Parse("getSlot");
    RoutePlan made = PlanRoute(t.network, req, "up-1|up-2");
    RoutePlan earlier = PlanRoute(t.network, req, "");
    earlier.error = RpcError{kInvalidParams, "left over"};
    RoutePlan cached =
        PlanRoute(t.network, req, "up-1|up-2", true, std::move(earlier));
    for (const RoutePlan* plan : {&made, &cached}) {
        EXPECT_TRUE(plan->has_selector);
        EXPECT_TRUE(plan->client_selector);
        EXPECT_EQ(plan->matched, (std::vector<size_t>{1, 2}));
        EXPECT_EQ(plan->serving, plan->matched);
        EXPECT_EQ(plan->allowed, (std::vector<unsigned char>{0, 1, 1, 0}));
        EXPECT_FALSE(plan->error);
    }
    EXPECT_EQ(cached.lane, made.lane);
    EXPECT_EQ(cached.lane_name, made.lane_name);
    // a simple selector of a proper subset forms a lane, whose name is
    // copied as well
    TestNetwork twelve(12);
    RoutePlan lane = PlanRoute(twelve.network, req, "up-1*");
    ASSERT_TRUE(lane.lane);
    EXPECT_FALSE(lane.lane_name.empty());
    EXPECT_EQ(lane.matched, (std::vector<size_t>{1, 10, 11}));
    RoutePlan lane_again =
        PlanRoute(twelve.network, req, "up-1*", true, std::move(made));
    EXPECT_EQ(lane_again.matched, lane.matched);
    EXPECT_EQ(lane_again.lane, lane.lane);
    EXPECT_EQ(lane_again.lane_name, lane.lane_name);
}

// Every request that may go to every upstream has the same plan: the next
// one keeps the last one's whole. Any other request, or a network whose
// upstreams changed, makes its own.
TEST(RoutePlan, TheEveryUpstreamPlanIsKeptForTheNextSuchRequest) {
    TestNetwork t(3);
    RpcRequest slot = Parse("getSlot");
    RoutePlan plan = PlanRoute(t.network, slot, "");
    EXPECT_EQ(plan.every_upstream_of, t.network.plan_revision());
    plan.lane_name = "kept";   // (a mark: a plan made anew says "all")
    plan = PlanRoute(t.network, Parse("getBalance", R"(["x"])"), "", true,
                     std::move(plan));
    EXPECT_EQ(plan.lane_name, "kept") << "the same plan, taken as it was";

    // a selector's plan is its own, and the next plan is made anew
    plan = PlanRoute(t.network, slot, "up-1", true, std::move(plan));
    EXPECT_EQ(plan.every_upstream_of, 0u);
    EXPECT_EQ(plan.matched, (std::vector<size_t>{1}));
    plan = PlanRoute(t.network, slot, "", true, std::move(plan));
    EXPECT_EQ(plan.matched, (std::vector<size_t>{0, 1, 2}));
    EXPECT_EQ(plan.allowed, (std::vector<unsigned char>{1, 1, 1}));
    EXPECT_EQ(plan.lane_name, "all");

    // another network (of the same shape) has its own
    TestNetwork other(3);
    EXPECT_NE(other.network.plan_revision(), t.network.plan_revision());
    plan.lane_name = "kept";
    plan = PlanRoute(other.network, slot, "", true, std::move(plan));
    EXPECT_EQ(plan.lane_name, "all");
    EXPECT_EQ(plan.every_upstream_of, other.network.plan_revision());

    // an upstream added: made anew, with it
    Network growing("devnet", NetworkSettings{});
    growing.AddUpstream({"up-0", {"http://10.0.0.1/", "", "", ""}});
    plan = PlanRoute(growing, slot, "", true, std::move(plan));
    EXPECT_EQ(plan.allowed, (std::vector<unsigned char>{1}));
    growing.AddUpstream({"up-1", {"http://10.0.0.2/", "", "", ""}});
    EXPECT_NE(plan.every_upstream_of, growing.plan_revision());
    plan = PlanRoute(growing, slot, "", true, std::move(plan));
    EXPECT_EQ(plan.allowed, (std::vector<unsigned char>{1, 1}));
    EXPECT_EQ(plan.matched, (std::vector<size_t>{0, 1}));
}

// A block by slot where ledger windows are tracked is planned each time,
// and leaves no plan the next request would keep.
TEST(RoutePlan, AGetBlockKeepingToLedgerWindowsHasItsOwnPlan) {
    NetworkSettings settings;
    settings.track_ledger_window = true;
    TestNetwork t(3, settings);
    t.network.slots().SetFirstAvailable(0, 5000);
    RoutePlan plan = PlanRoute(t.network, Parse("getSlot"), "");
    ASSERT_EQ(plan.every_upstream_of, t.network.plan_revision());
    plan = PlanRoute(t.network, Parse("getBlock", "[200]"), "", true,
                     std::move(plan));
    EXPECT_EQ(plan.allowed, (std::vector<unsigned char>{0, 1, 1}));
    EXPECT_EQ(plan.every_upstream_of, 0u);
    plan = PlanRoute(t.network, Parse("getSlot"), "", true, std::move(plan));
    EXPECT_EQ(plan.allowed, (std::vector<unsigned char>{1, 1, 1}));
}

TEST(RoutePlan, SelectorErrorsAreTheClientsInvalidParams) {
    TestNetwork t(2);
    RpcRequest req = Parse("getSlot");
    RoutePlan bad = PlanRoute(t.network, req, "a |");
    ASSERT_TRUE(bad.error);
    EXPECT_EQ(bad.error->code, kInvalidParams);
    EXPECT_EQ(bad.error->message,
              "Invalid params: use-upstream selector \"a |\": missing pattern "
              "after '|' at position 3");
    RoutePlan none = PlanRoute(t.network, req, "nothing-*");
    ASSERT_TRUE(none.error);
    EXPECT_EQ(none.error->message,
              "Invalid params: use-upstream selector \"nothing-*\" matches no "
              "upstream of network \"mainnet\"");
    // a client's selector of kilobytes is named by its first 128 bytes
    std::string long_one = "é" + std::string(7000, 'x');
    RoutePlan long_none = PlanRoute(t.network, req, long_one);
    ASSERT_TRUE(long_none.error);
    EXPECT_EQ(long_none.error->message,
              "Invalid params: use-upstream selector \"" + long_one.substr(0, 128) +
                  "\"... (7002 bytes): selector longer than 1024 characters");
    // cut at a character's start, never inside one
    std::string wide = std::string(127, 'x') + "é";
    RoutePlan wide_none = PlanRoute(t.network, req, wide + "y");
    ASSERT_TRUE(wide_none.error);
    EXPECT_NE(wide_none.error->message.find("\"" + std::string(127, 'x') +
                                            "\"... (130 bytes)"),
              std::string::npos)
        << wide_none.error->message;
}

TEST(RoutePlan, EverySelectedUpstreamCordonedIsNodeUnhealthy) {
    TestNetwork t(2);
    t.network.cordons().SwapCordon(
        1, CordonOwner::kNone, {CordonOwner::kPoller, CordonCause::kUnhealthy, 1});
    RpcRequest req = Parse("getSlot");
    RoutePlan plan = PlanRoute(t.network, req, "up-1");
    ASSERT_TRUE(plan.error);
    EXPECT_EQ(plan.error->code, kNodeUnhealthy);
    EXPECT_FALSE(PlanRoute(t.network, req, "up-0").error);
    // without a selector the network falls back to cordoned upstreams
    EXPECT_FALSE(PlanRoute(t.network, req, "").error);
}

TEST(RoutePlan, NoUpstreamServingTheMethodIsMethodNotFound) {
    Network n("mainnet", {});
    UpstreamConf only(std::string("archive"));
    only.methods = {"getBlock"};
    n.AddUpstream(only);
    auto shared = std::make_unique<NetworkShared>();
    std::string error;
    ASSERT_TRUE(n.Bind(shared.get(), true, 0, &error));
    RpcRequest req = Parse("getSlot");
    RoutePlan plan = PlanRoute(n, req, "");
    ASSERT_TRUE(plan.error);
    EXPECT_EQ(plan.error->code, kMethodNotFound);
    EXPECT_EQ(plan.error->message,
              "Method not found: no upstream of network \"mainnet\" serves "
              "getSlot");
}

RpcRequest Subscription() {
    RpcRequest req;
    req.shape = RpcRequest::Shape::kSubscription;
    return req;
}

// up-0, up-1, up-2, with ws= on those listed.
struct PubsubNetwork : testing::PubsubTestNetwork {
    explicit PubsubNetwork(std::vector<size_t> with_ws)
        : PubsubTestNetwork(3, std::move(with_ws)) {}
};

TEST(RoutePlan, ASubscriptionGoesOnlyToUpstreamsWithAPubsubEndpoint) {
    PubsubNetwork t({0, 2});
    RoutePlan plan = PlanRoute(t.network, Subscription(), "");
    EXPECT_FALSE(plan.error);
    EXPECT_EQ(plan.matched, (std::vector<size_t>{0, 1, 2}));
    EXPECT_EQ(plan.serving, (std::vector<size_t>{0, 2}));
    EXPECT_EQ(plan.allowed, (std::vector<unsigned char>{1, 0, 1}));
    EXPECT_EQ(plan.lane_name, "all");
    RoutePlan one = PlanRoute(t.network, Subscription(), "up-2");
    EXPECT_EQ(one.allowed, (std::vector<unsigned char>{0, 0, 1}));
}

TEST(RoutePlan, NoPubsubEndpointIsMethodNotFoundNamingWs) {
    PubsubNetwork t({0});
    RoutePlan plan = PlanRoute(t.network, Subscription(), "up-1");
    ASSERT_TRUE(plan.error);
    EXPECT_EQ(plan.error->code, kMethodNotFound);
    EXPECT_EQ(plan.error->message,
              "Method not found: no upstream matching use-upstream selector "
              "\"up-1\" has a WebSocket endpoint (\"ws=\")");
    PubsubNetwork none({});
    RoutePlan all = PlanRoute(none.network, Subscription(), "");
    ASSERT_TRUE(all.error);
    EXPECT_EQ(all.error->message,
              "Method not found: no upstream of network \"mainnet\" has a "
              "WebSocket endpoint (\"ws=\")");
}

TEST(RoutePlan, GetBlockGoesToLedgersHoldingTheSlotWhenAnyDoes) {
    NetworkSettings settings;
    settings.track_ledger_window = true;
    TestNetwork t(3, settings);
    t.network.slots().SetFirstAvailable(0, 5000);
    t.network.slots().SetFirstAvailable(1, 100);
    // upstream 2's window is not known yet: it counts as holding
    RpcRequest old = Parse("getBlock", "[200]");
    EXPECT_EQ(PlanRoute(t.network, old, "").allowed,
              (std::vector<unsigned char>{0, 1, 1}));
    t.network.slots().SetFirstAvailable(2, 300);
    EXPECT_EQ(PlanRoute(t.network, old, "").allowed,
              (std::vector<unsigned char>{0, 1, 0}));
    // nobody holds slot 50: every serving upstream stays allowed
    RpcRequest older = Parse("getBlock", "[50]");
    EXPECT_EQ(PlanRoute(t.network, older, "").allowed,
              (std::vector<unsigned char>{1, 1, 1}));
}

TEST(RoutePlan, TipsOfTheServingUpstreams) {
    TestNetwork t(3);
    SlotStore& views = t.network.slots();
    for (size_t i = 0; i < 3; i++) {
        views.Suggest(i, kSlotProcessed, 1000 + i);
        views.Suggest(i, kSlotFinalized, 960 + i);
        views.Suggest(i, kSlotShred, 1010 + i);
    }
    RpcRequest req = Parse("getSlot");
    Tips tips = PlanTips(t.network, PlanRoute(t.network, req, ""), 1);
    EXPECT_EQ(tips.processed, 1001u);
    EXPECT_EQ(tips.finalized, 961u);
    EXPECT_EQ(tips.indexed, 1012u);
    // a getSlot answer picks only the tips its correction reads
    RoutePlan plan = PlanRoute(t.network, req, "");
    Tips processed = GetSlotTips(SG_COMMITMENT_PROCESSED, t.network, plan, 1);
    EXPECT_EQ(processed.processed, 1001u);
    EXPECT_EQ(processed.finalized + processed.indexed, 0u);
    Tips finalized = GetSlotTips(SG_COMMITMENT_FINALIZED, t.network, plan, 1);
    EXPECT_EQ(finalized.finalized, 961u);
    EXPECT_EQ(finalized.indexed, 1012u);
    EXPECT_EQ(finalized.processed, 0u);
    Tips none = GetSlotTips(SG_COMMITMENT_CONFIRMED, t.network, plan, 1);
    EXPECT_EQ(none.processed + none.finalized + none.indexed, 0u);
    EXPECT_EQ(GetSlotTips(SG_COMMITMENT_NONE, t.network, plan, 1).processed, 1001u);
}

}  // namespace
}  // namespace solgate
