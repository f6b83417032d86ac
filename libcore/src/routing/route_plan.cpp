#include "routing/route_plan.h"

#include <algorithm>

#include "conf/conf_messages.h"


namespace solgate {
namespace {

using conf::Quoted;

// A selector as an error names it: a client's may be kilobytes long, so
// past kEchoedSelector bytes it is cut (at a character's start) and says
// how long it was.
constexpr size_t kEchoedSelector = 128;

std::string QuotedSelector(std::string_view selector) {
    if (selector.size() <= kEchoedSelector) {
        return Quoted(selector);
    }
    size_t cut = kEchoedSelector;
    while (cut > 0 && (static_cast<unsigned char>(selector[cut]) & 0xC0) == 0x80) {
        cut--;
    }
    return Quoted(selector.substr(0, cut)) + "... (" +
           std::to_string(selector.size()) + " bytes)";
}

// The distinct methods of the request's calls.
std::vector<std::string_view> Methods(const RpcRequest& request) {
    std::vector<std::string_view> methods;
    for (const RpcCall& call : request.calls) {
        if (std::find(methods.begin(), methods.end(), call.method) ==
            methods.end()) {
            methods.push_back(call.method);
        }
    }
    return methods;
}

// One flag per upstream: serves every method of the request.
std::vector<unsigned char> ServingAll(
    const Network& network, const std::vector<std::string_view>& methods) {
    std::vector<unsigned char> serving(network.size(), 1);
    for (std::string_view m : methods) {
        std::vector<unsigned char> set = network.ServingSet(m);
        for (size_t i = 0; i < serving.size(); i++) {
            serving[i] &= set[i];
        }
    }
    return serving;
}

// Whether KeepLedgerHolders may narrow the request's upstreams: a block
// by slot on a network that tracks each node's ledger window.
bool KeepsToLedgerWindow(const Network& network, const RpcRequest& request) {
    return network.settings().track_ledger_window && network.bound() &&
           request.shape == RpcRequest::Shape::kSingle &&
           request.calls[0].first_param_u64 &&
           (request.calls[0].method == "getBlock" ||
            request.calls[0].method == "getConfirmedBlock");
}

// With Cube Runner, a getBlock goes only to nodes whose ledger window
// (getFirstAvailableBlock) holds the slot, when any does; nodes whose
// window is not known yet count as holding it.
void KeepLedgerHolders(const Network& network, const RpcRequest& request,
                       RoutePlan& plan) {
    if (!KeepsToLedgerWindow(network, request)) {
        return;
    }
    uint64_t slot = *request.calls[0].first_param_u64;
    std::vector<unsigned char> holders = plan.allowed;
    bool any = false;
    for (size_t i : plan.serving) {
        std::optional<uint64_t> first = network.slots().FirstAvailable(i);
        if (first && slot < *first) {
            holders[i] = 0;
        }
        any = any || holders[i];
    }
    if (any) {
        plan.allowed = std::move(holders);
    }
}

// A request on use_upstream_default may fall back to the network's backups
// outside that group (those serving its methods and not cordoned).
void KeepFallbackBackups(const Network& network,
                         const std::vector<std::string_view>& methods,
                         RoutePlan& plan) {
    if (!network.has_backups()) {
        return;
    }
    plan.fallback.assign(network.size(), 0);
    for (size_t i = 0; i < network.size(); i++) {
        if (plan.allowed[i] || !network.upstream(i).routing.backup ||
            network.Cordoned(i)) {
            continue;
        }
        bool serves = true;
        for (std::string_view m : methods) {
            serves = serves && network.Serves(i, m);
        }
        plan.fallback[i] = serves ? 1 : 0;
    }
}

// The selector's group into `plan` (matched, lane); false, with the
// plan's error, for a malformed selector. The network's cached group is
// copied into the storage the plan keeps (ResetPlan emptied it): a copy
// of the group, moved into the plan, cost an allocation of its vector
// and the free of the plan's own, every request.
bool PlanSelectorGroup(const Network& network, std::string_view selector,
                       RoutePlan& plan) {
    SelectorGroup scratch;
    const SelectorGroup& group =
        network.ResolveSelectorInto(selector, &scratch);
    if (!group.error.empty()) {
        plan.error = RpcError{kInvalidParams,
                              "Invalid params: use-upstream selector " +
                                  QuotedSelector(selector) + ": " + group.error};
        return false;
    }
    plan.matched.insert(plan.matched.end(), group.matched.begin(),
                        group.matched.end());
    plan.lane = group.lane;
    plan.lane_name.append(group.lane_name);
    return true;
}

std::string MethodList(const std::vector<std::string_view>& methods) {
    std::string out;
    for (std::string_view m : methods) {
        out += (out.empty() ? "" : ", ") + std::string(m);
    }
    return out;
}

}  // namespace

void ResetPlan(RoutePlan& plan) {
    plan.has_selector = false;
    plan.client_selector = false;
    plan.matched.clear();
    plan.serving.clear();
    plan.allowed.clear();
    plan.fallback.clear();
    plan.lane.reset();
    plan.lane_name.clear();
    plan.error.reset();
    plan.every_upstream_of = 0;
}

RoutePlan PlanRoute(const Network& network, const RpcRequest& request,
                    std::string_view selector, bool from_client,
                    RoutePlan room) {
    PlanRouteInto(network, request, selector, from_client, room);
    return room;
}

void PlanRouteInto(const Network& network, const RpcRequest& request,
                   std::string_view selector, bool from_client,
                   RoutePlan& plan) {
    // Most requests may go to every upstream (no selector, no methods=
    // or ignore_methods=, not a subscription): their flags are set here at
    // once; the others' are set below, upstream by upstream. Their plan
    // is the same for all of them: the last one's is kept.
    const bool every_upstream =
        selector.empty() && !network.has_method_filters() &&
        request.shape != RpcRequest::Shape::kSubscription;
    const bool same_for_all =
        every_upstream && !KeepsToLedgerWindow(network, request);
    if (same_for_all && plan.every_upstream_of == network.plan_revision()) {
        return;
    }
    ResetPlan(plan);
    plan.has_selector = !selector.empty();
    plan.client_selector = plan.has_selector && from_client;
    plan.allowed.assign(network.size(), every_upstream ? 1 : 0);

    if (plan.has_selector) {
        if (!PlanSelectorGroup(network, selector, plan)) {
            return;
        }
    } else {
        // every upstream: the network's own list (0 .. size - 1), copied
        // whole, where resize and a loop wrote it element by element
        const std::vector<size_t>& all = network.all_upstreams();
        plan.matched.assign(all.begin(), all.end());
        plan.lane = kAllLane;
        // appended: ResetPlan left it empty, and assign's _M_replace costs
        // twice what _M_append does
        plan.lane_name.append("all");
    }

    std::vector<std::string_view> methods;
    if (request.shape == RpcRequest::Shape::kSubscription) {
        // whatever it subscribes to: only upstreams with a pubsub endpoint
        for (size_t i : plan.matched) {
            if (!network.upstream(i).pubsub.url.empty()) {
                plan.serving.push_back(i);
                plan.allowed[i] = 1;
            }
        }
    } else if (!network.has_method_filters()) {
        // every upstream serves every method: no per-method sets to build
        plan.serving = plan.matched;
        if (!every_upstream) {   // (else every flag is set already)
            for (size_t i : plan.matched) {
                plan.allowed[i] = 1;
            }
        }
    } else {
        methods = Methods(request);
        std::vector<unsigned char> serves = ServingAll(network, methods);
        for (size_t i : plan.matched) {
            if (serves[i]) {
                plan.serving.push_back(i);
                plan.allowed[i] = 1;
            }
        }
    }

    KeepLedgerHolders(network, request, plan);
    if (plan.has_selector && !plan.client_selector &&
        request.shape != RpcRequest::Shape::kSubscription) {
        KeepFallbackBackups(network, methods, plan);
    }

    if (plan.matched.empty()) {
        plan.error = RpcError{kInvalidParams,
                              "Invalid params: use-upstream selector " +
                                  QuotedSelector(selector) +
                                  " matches no upstream of network " +
                                  Quoted(network.name())};
        return;
    }
    if (plan.serving.empty()) {
        plan.error = RpcError{
            kMethodNotFound,
            "Method not found: no upstream " +
                (plan.has_selector
                     ? "matching use-upstream selector " + QuotedSelector(selector)
                     : "of network " + Quoted(network.name())) +
                (request.shape == RpcRequest::Shape::kSubscription
                     ? std::string(" has a WebSocket endpoint (\"ws=\")")
                     : " serves " + MethodList(methods))};
        return;
    }
    if (same_for_all) {
        plan.every_upstream_of = network.plan_revision();
    }
    bool fallback_ready = std::any_of(
        plan.fallback.begin(), plan.fallback.end(),
        [](unsigned char f) { return f != 0; });
    if (plan.has_selector && !fallback_ready &&
        std::all_of(plan.serving.begin(), plan.serving.end(),
                    [&](size_t i) { return network.Cordoned(i); })) {
        plan.error = RpcError{
            kNodeUnhealthy,
            "Node is unhealthy: every upstream matching use-upstream "
            "selector " + QuotedSelector(selector) + " is cordoned"};
        return;
    }
}

Tips PlanTips(const Network& network, const RoutePlan& plan, int64_t now_ms) {
    Tips tips;
    tips.processed = PlanTip(network, plan, kAxisProcessed, now_ms);
    tips.finalized = PlanTip(network, plan, kAxisFinalized, now_ms);
    tips.indexed = PlanIndexed(network, plan);
    return tips;
}

uint64_t PlanTip(const Network& network, const RoutePlan& plan, LaneAxis axis,
                 int64_t now_ms) {
    uint64_t tip = network.PickTip(plan.lane, plan.matched, axis, now_ms);
    // Upstreams that do not serve the method must not push its tip past
    // what the serving ones hold: cap statelessly (no guard, no floor).
    if (plan.serving.size() < plan.matched.size()) {
        tip = std::min(tip, network.PickTip(std::nullopt, plan.serving, axis, now_ms));
    }
    return tip;
}

uint64_t PlanIndexed(const Network& network, const RoutePlan& plan) {
    uint64_t indexed = 0;
    for (size_t i : plan.serving) {
        indexed = std::max(indexed, network.slots().View(i, kSlotShred));
    }
    return indexed;
}

}  // namespace solgate
