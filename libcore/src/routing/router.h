// The routing decision for one request body: answer it here or forward it.
#pragma once

#include <string>
#include <string_view>

#include "json/batch_merger.h"
#include "routing/network.h"
#include "routing/route_plan.h"
#include "rpc/answers.h"
#include "rpc/rpc_request.h"

namespace solgate {

struct RouteDecision {
    bool forward = false;
    unsigned http_status = 200;
    std::string answer;  // the local answer when !forward
    // forward, part of a batch answered here: the batch of the other calls
    // to send instead of the client's, and the places of the answers
    // (BatchMerger) in the client's batch.
    std::string forward_body;
    std::vector<BatchMerger::Slot> merge;
};

// Bad input never reaches an upstream: a body or call that is malformed is
// answered here, so is a request the plan cannot route (bad selector, no
// upstream serving the method), and so is getBlock for a slot beyond the
// indexed frontier of the request's upstreams (when the network enforces
// block availability). A batch is judged call by call: those answered here
// take their places in the answer, the others go upstream as one batch
// (the whole body, when none is answered here).
RouteDecision RouteRequest(const RpcRequest& request, const Network& network,
                           const RoutePlan& plan, int64_t now_ms);

// The answer for a call of a batch sent in part that the upstream's answer
// left out (BatchMerger::MissingAnswer).
std::string MissingBatchAnswer(std::string_view id_raw);

// "getSlot", "batch", or "" for an unreadable body.
std::string_view RequestMethodName(const RpcRequest& request);

}  // namespace solgate
