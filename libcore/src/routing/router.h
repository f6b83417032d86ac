// The routing decision for one request body: answer it here or forward it.
#pragma once

#include <string>
#include <string_view>

#include "routing/network.h"
#include "routing/route_plan.h"
#include "rpc/answers.h"
#include "rpc/rpc_request.h"

namespace solgate {

struct RouteDecision {
    bool forward = false;
    unsigned http_status = 200;
    std::string answer;  // the local answer when !forward
};

// Bad input never reaches an upstream: a body or call that is malformed is
// answered here, so is a request the plan cannot route (bad selector, no
// upstream serving the method), and so is getBlock for a slot beyond the
// indexed frontier of the request's upstreams (when the network enforces
// block availability). A batch with any malformed call is answered here as a
// whole (each malformed call with its error, the others with -32600 naming
// the bad element), because forwarding only part of a batch needs response
// merging that Solgate does not do yet.
RouteDecision RouteRequest(const RpcRequest& request, const Network& network,
                           const RoutePlan& plan, int64_t now_ms);

// "getSlot", "batch", or "" for an unreadable body.
std::string_view RequestMethodName(const RpcRequest& request);

}  // namespace solgate
