// The routing decision for one request body: answer it here or forward it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "json/batch_merger.h"
#include "routing/network.h"
#include "routing/route_plan.h"
#include "rpc/answers.h"
#include "rpc/rpc_request.h"

namespace solgate {

// A batch that goes call by call, in the client's order: an answer made
// here, a call that goes alone (the single-call path: Cube Runner,
// retry_missing_data, a policy), or a run of the calls between them that
// go upstream together as one sub-batch.
struct BatchPiece {
    enum class Kind : uint8_t { kLocal, kAlone, kRun };
    Kind kind = Kind::kLocal;
    // kLocal: the answer; kRun: the sub-batch to send ("[...]"); kAlone:
    // empty (the call is `call`).
    std::string text;
    std::string_view call;   // kAlone: the call's text in the client's body
    bool answers = true;     // it puts an element in the client's array
                             // (a run of notifications puts none)
};

struct RouteDecision {
    bool forward = false;
    unsigned http_status = 200;
    unsigned retry_after_s = 0;   // a Retry-After with the answer (0: none)
    std::string answer;  // the local answer when !forward
    // forward, part of a batch answered here: the batch of the other calls
    // to send instead of the client's, and the places of the answers
    // (BatchMerger) in the client's batch.
    std::string forward_body;
    std::vector<BatchMerger::Slot> merge;
    // forward: a batch that goes call by call (pieces, in order); then
    // forward_body and merge are empty.
    std::vector<BatchPiece> pieces;
};

// How a request body is routed.  A run is the sub-batch of a BatchPiece:
// its answer fills part of the client's array, so it is written without
// the array's brackets, its calls never go alone and max_batch_size was
// applied to the client's batch.
struct RouteOptions {
    bool run = false;
    // Storage for the decision's merge (a batch's), taken when one is
    // made: an earlier request's, so a warm thread allocates none.
    std::vector<BatchMerger::Slot>* merge_room = nullptr;
};

// Bad input never reaches an upstream: a body or call that is malformed is
// answered here, so is a request the plan cannot route (bad selector, no
// upstream serving the method), and so is getBlock for a slot beyond the
// indexed frontier of the request's upstreams (when the network enforces
// block availability). A batch is judged call by call: those answered here
// take their places in the answer, the others go upstream as one batch
// (the whole body, when none is answered here).
// A batch with a call that needs the single-call path (a Cube Runner
// method, a policy's method, a method that may lack data while
// retry_missing_data is on) goes call by call (RouteDecision::pieces).
// getSlot answers in a batch are corrected (merged) wherever they go.
RouteDecision RouteRequest(const RpcRequest& request, const Network& network,
                           const RoutePlan& plan, int64_t now_ms,
                           RouteOptions options = {});

// At most this many calls of a batch go alone (each is a subrequest);
// the others go in runs, and a Cube Runner call past it is refused.
constexpr size_t kMaxAloneCalls = 256;

// Whether a call of a batch goes to upstreams alone (see RouteRequest).
bool CallGoesAlone(const RpcCall& call, const Network& network);

// The answer for a call of a batch sent in part that the upstream's answer
// left out (BatchMerger::MissingAnswer).
std::string MissingBatchAnswer(std::string_view id_raw);
// The same for a call whose upstream's answer ended before it was whole.
std::string CutShortBatchAnswer(std::string_view id_raw);

// "getSlot", "batch", or "" for an unreadable body.
std::string_view RequestMethodName(const RpcRequest& request);

}  // namespace solgate
