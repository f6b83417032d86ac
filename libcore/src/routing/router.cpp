#include "routing/router.h"

#include <optional>

#include "blocks/block_call.h"
#include "json/json_writer.h"
#include "rpc/cluster.h"
#include "slots/slot_hooks.h"

namespace solgate {
namespace {

bool IsGetBlock(std::string_view method) {
    return method == "getBlock" || method == "getConfirmedBlock";
}

// The error a call gets before any upstream sees it, if any.
std::optional<RpcError> CallError(const RpcCall& call) {
    if (call.error) {
        return call.error;
    }
    if (IsGetBlock(call.method) && !call.first_param_u64) {
        return RpcError{kInvalidParams,
                        "Invalid params: " + call.method +
                            " expects a slot (a non-negative integer) as "
                            "its first parameter"};
    }
    return std::nullopt;
}

// What routing a request needs; the tips are read only when a getBlock
// guard asks for them.
struct RouteContext {
    const Network& network;
    const RoutePlan& plan;
    int64_t now_ms;
    std::optional<Tips> tips;

    const Tips& PlanTips() {
        if (!tips) {
            tips = solgate::PlanTips(network, plan, now_ms);
        }
        return *tips;
    }
};

// getBlock for a slot none of the request's upstreams has indexed yet: each
// would answer -32004, so answer it here without spending their quota.
std::optional<RpcError> GuardError(const RpcCall& call, RouteContext& ctx) {
    const Network& network = ctx.network;
    if (!IsGetBlock(call.method) ||
        !network.settings().enforce_block_availability || !network.bound()) {
        return std::nullopt;
    }
    uint64_t slot = *call.first_param_u64;
    if (!BlockUnavailable(slot, ctx.PlanTips(),
                          network.GuardMarginOf(ctx.plan.serving))) {
        return std::nullopt;
    }
    network.counters().guard_rejections.fetch_add(1, std::memory_order_relaxed);
    return RpcError{kBlockNotAvailable,
                    "Block not available for slot " + std::to_string(slot)};
}

// The result of a call Solgate answers without an upstream, if any.
std::optional<std::string> LocalResult(const RpcCall& call,
                                       const Network& network) {
    if (call.method == "getGenesisHash") {
        std::string_view hash = GenesisHash(network.settings().cluster);
        if (!hash.empty()) {
            std::string result;
            AppendJsonString(result, hash);
            return result;
        }
    }
    return std::nullopt;
}

// Appends the local answer to one call; false when it must be forwarded.
bool AppendLocalAnswer(std::string& out, const RpcCall& call,
                       RouteContext& ctx) {
    if (auto error = CallError(call)) {
        AppendErrorEnvelope(out, call.id_raw, error->code, error->message);
        return true;
    }
    if (auto result = LocalResult(call, ctx.network)) {
        AppendResultEnvelope(out, call.id_raw, *result);
        return true;
    }
    if (ctx.plan.error) {
        AppendErrorEnvelope(out, call.id_raw, ctx.plan.error->code,
                            ctx.plan.error->message);
        return true;
    }
    if (auto error = GuardError(call, ctx)) {
        AppendErrorEnvelope(out, call.id_raw, error->code, error->message);
        return true;
    }
    return false;
}

// A call of a batch Solgate answers here: a local answer, or a Cube
// Runner call (its keys, plans and limits count requests, so it must come
// alone; the other calls go on).
bool AppendBatchLocalAnswer(std::string& out, const RpcCall& call,
                            RouteContext& ctx) {
    if (ctx.network.blocks() != nullptr && IsCubeRunnerMethod(call.method)) {
        AppendErrorEnvelope(out, call.id_raw, kInvalidRequest,
                            "Invalid request: " + call.method +
                                " is served by Cube Runner one call per "
                                "request; send it alone, not in a batch");
        return true;
    }
    return AppendLocalAnswer(out, call, ctx);
}

RouteDecision RouteBatch(const RpcRequest& request, RouteContext& ctx) {
    const uint64_t max = ctx.network.settings().max_batch_size;
    if (max > 0 && request.calls.size() > max) {
        RouteDecision refused;
        AppendErrorEnvelope(refused.answer, {}, kInvalidRequest,
                            "Invalid request: a batch of " +
                                std::to_string(request.calls.size()) +
                                " calls is more than max_batch_size " +
                                std::to_string(max));
        return refused;
    }
    const size_t n = request.calls.size();
    // made at the first call answered here: a batch that goes upstream
    // whole costs no allocation (a local answer is never empty)
    std::vector<std::string> local;
    std::string answer;
    size_t forwarding = 0;
    for (size_t i = 0; i < n; i++) {
        if (!AppendBatchLocalAnswer(answer, request.calls[i], ctx)) {
            forwarding++;
            continue;
        }
        if (local.empty()) {
            local.resize(n);
        }
        local[i] = std::move(answer);
        answer.clear();
    }
    RouteDecision decision;
    if (forwarding == n) {
        // The client's body as it is. (Its getSlot answers are not
        // corrected: merging costs a 10-call batch some 60k instructions,
        // more than Solgate's whole budget for it.)
        decision.forward = true;
        return decision;
    }
    if (forwarding == 0) {
        decision.answer.push_back('[');
        for (size_t i = 0; i < n; i++) {
            decision.answer += (i > 0 ? "," : "") + local[i];
        }
        decision.answer.push_back(']');
        return decision;
    }
    // part of it answered here: merged
    decision.forward = true;
    decision.forward_body.push_back('[');
    for (size_t i = 0; i < n; i++) {
        const RpcCall& call = request.calls[i];
        if (!local.empty() && !local[i].empty()) {
            decision.merge.push_back({false, std::move(local[i]), {}});
            continue;
        }
        if (decision.forward_body.size() > 1) {
            decision.forward_body.push_back(',');
        }
        decision.forward_body.append(
            request.batch_text.substr(call.span_begin,
                                      call.span_end - call.span_begin));
        if (call.id_raw.empty()) {
            continue;   // a notification: the upstream answers nothing
        }
        decision.merge.push_back({true, {}, call.id_raw});
    }
    decision.forward_body.push_back(']');
    return decision;
}

}  // namespace

std::string MissingBatchAnswer(std::string_view id_raw) {
    std::string out;
    AppendErrorEnvelope(out, id_raw, kInternalError,
                        "Internal error: the upstream answered the batch "
                        "without an answer to this call");
    return out;
}

RouteDecision RouteRequest(const RpcRequest& request, const Network& network,
                           const RoutePlan& plan, int64_t now_ms) {
    RouteContext ctx{network, plan, now_ms, std::nullopt};
    RouteDecision decision;
    switch (request.shape) {
    case RpcRequest::Shape::kUnreadable:
        AppendErrorEnvelope(decision.answer, {}, request.error.code,
                            request.error.message);
        return decision;
    case RpcRequest::Shape::kSingle:
        decision.forward =
            !AppendLocalAnswer(decision.answer, request.calls[0], ctx);
        return decision;
    case RpcRequest::Shape::kBatch:
        return RouteBatch(request, ctx);
    }
    return decision;
}

std::string_view RequestMethodName(const RpcRequest& request) {
    switch (request.shape) {
    case RpcRequest::Shape::kSingle:
        return request.calls[0].method;
    case RpcRequest::Shape::kBatch:
        return "batch";
    case RpcRequest::Shape::kUnreadable:
        break;
    }
    return "";
}

}  // namespace solgate
