// Which upstreams a request may use and whose tip it is served: the
// use-upstream selector, the methods each upstream serves, and the lane.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/network.h"
#include "rpc/rpc_request.h"

namespace solgate {

struct RoutePlan {
    bool has_selector = false;
    bool client_selector = false;  // the request named it (not the default)
    std::vector<size_t> matched;   // match the selector: vote on the tip
    std::vector<size_t> serving;   // of those, serve the method(s)
    std::vector<unsigned char> allowed;  // by upstream index: may receive it
    // Backups outside use_upstream_default's group it may fall back to
    // when none of the group is eligible (empty: none).
    std::vector<unsigned char> fallback;
    std::optional<LaneId> lane;    // nullopt: the stateless subset pick
    std::string lane_name;         // "all", a group's name, or "" (no lane)
    // Set when the request cannot be routed at all.
    std::optional<RpcError> error;
    // Not 0: this is the plan of every request on the network of that
    // plan_revision() that may go to every upstream (no selector, no
    // methods=, not a subscription, no ledger window to keep to), which
    // the next such request takes as it is rather than build it again.
    uint64_t every_upstream_of = 0;
};

// `selector` is the request's use-upstream selector ("" for none);
// from_client false when it is the network's use_upstream_default.
// `room`: an earlier plan, whose vectors' capacity the new plan takes
// (their content is dropped), so a warm thread allocates none.
RoutePlan PlanRoute(const Network& network, const RpcRequest& request,
                    std::string_view selector, bool from_client = true,
                    RoutePlan room = {});

// The same, written into `plan` in place (its earlier content is dropped,
// its vectors' capacity kept): what a request does once per route, where
// PlanRoute's moves of a RoutePlan in and out (four vectors, a string, an
// optional error) cost more than the plan of a single call.
void PlanRouteInto(const Network& network, const RpcRequest& request,
                   std::string_view selector, bool from_client,
                   RoutePlan& plan);

// Makes `plan` as RoutePlan{} is, in place, keeping its vectors' storage.
// Every member of RoutePlan is reset here.
void ResetPlan(RoutePlan& plan);


// The tips for the request's subset: its lane's view (or the stateless
// pick), capped at the serving upstreams' majority when only some of the
// matched upstreams serve the method; indexed = their highest watermark.
Tips PlanTips(const Network& network, const RoutePlan& plan, int64_t now_ms);
// Its parts: the tip on one axis, and the indexed watermark.
uint64_t PlanTip(const Network& network, const RoutePlan& plan, LaneAxis axis,
                 int64_t now_ms);
uint64_t PlanIndexed(const Network& network, const RoutePlan& plan);

}  // namespace solgate
