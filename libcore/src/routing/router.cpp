#include "routing/router.h"

#include <optional>

#include "blocks/block_call.h"
#include "json/json_writer.h"
#include "pubsub/ws_holders.h"
#include "routing/fan_out.h"
#include "rpc/cluster.h"
#include "rpc/rpc_errors.h"
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
    // Compared as a string_view (sizes first, inline): std::string ==
    // const char* calls compare(), a strlen and a memcmp, per request.
    if (std::string_view(call.method) == "getGenesisHash") {
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

// A call of a batch Solgate answers here.  A Cube Runner call that does
// not go alone (in a run; a notification, whose answer nobody reads; past
// kMaxAloneCalls) would bypass its keys and limits upstream: refused.
bool AppendBatchLocalAnswer(std::string& out, const RpcCall& call,
                            RouteContext& ctx, bool goes_alone) {
    if (!goes_alone && ctx.network.blocks() != nullptr &&
        IsCubeRunnerMethod(call.method)) {
        AppendErrorEnvelope(out, call.id_raw, kInvalidRequest,
                            "Invalid request: " + call.method +
                                " is served by Cube Runner one call per "
                                "request; send it alone or in a smaller "
                                "batch");
        return true;
    }
    return AppendLocalAnswer(out, call, ctx);
}

std::string_view CallText(const RpcRequest& request, const RpcCall& call) {
    return request.batch_text.substr(call.span_begin,
                                     call.span_end - call.span_begin);
}

// The pieces of a batch that goes call by call; `local[i]` is call i's
// answer made here (empty: it goes upstream), `alone[i]` whether it goes
// alone, `dropped[i]` (if any) a notification answered here: no piece.
std::vector<BatchPiece> CutPieces(const RpcRequest& request,
                                  std::vector<std::string>& local,
                                  const std::vector<unsigned char>& alone,
                                  const std::vector<unsigned char>& dropped) {
    std::vector<BatchPiece> pieces;
    bool in_run = false;
    for (size_t i = 0; i < request.calls.size(); i++) {
        const RpcCall& call = request.calls[i];
        if (!dropped.empty() && dropped[i]) {
            continue;
        }
        if (!local.empty() && !local[i].empty()) {
            in_run = false;
            pieces.push_back({BatchPiece::Kind::kLocal, std::move(local[i]),
                              {}, true});
            continue;
        }
        if (alone[i]) {
            in_run = false;
            pieces.push_back({BatchPiece::Kind::kAlone, {},
                              CallText(request, call), true});
            continue;
        }
        if (!in_run) {
            in_run = true;
            pieces.push_back({BatchPiece::Kind::kRun, "[", {}, false});
        }
        BatchPiece& run = pieces.back();
        if (run.text.size() > 1) {
            run.text.push_back(',');
        }
        run.text.append(CallText(request, call));
        run.answers = run.answers || !call.id_raw.empty();
    }
    for (BatchPiece& piece : pieces) {
        if (piece.kind == BatchPiece::Kind::kRun) {
            piece.text.push_back(']');
        }
    }
    return pieces;
}

RouteDecision RouteBatch(const RpcRequest& request, RouteContext& ctx,
                         RouteOptions options) {
    const uint64_t max = ctx.network.settings().max_batch_size;
    if (!options.run && max > 0 && request.calls.size() > max) {
        RouteDecision refused;
        AppendErrorEnvelope(refused.answer, {}, kInvalidRequest,
                            "Invalid request: a batch of " +
                                std::to_string(request.calls.size()) +
                                " calls is more than max_batch_size " +
                                std::to_string(max));
        return refused;
    }
    const size_t n = request.calls.size();
    // made at the first call answered here, or going alone: a batch that
    // goes upstream whole costs no allocation (a local answer is never
    // empty)
    std::vector<std::string> local;
    std::vector<unsigned char> alone;
    std::vector<unsigned char> dropped;   // notifications answered here
    std::string answer;
    size_t forwarding = 0;
    bool has_get_slot = false;
    size_t alone_calls = 0;
    for (size_t i = 0; i < n; i++) {
        const RpcCall& call = request.calls[i];
        bool goes_alone = !options.run && alone_calls < kMaxAloneCalls &&
                          CallGoesAlone(call, ctx.network);
        if (!AppendBatchLocalAnswer(answer, call, ctx, goes_alone)) {
            forwarding++;
            has_get_slot = has_get_slot ||
                           std::string_view(call.method) == "getSlot";
            if (goes_alone) {
                if (alone.empty()) {
                    alone.resize(n);
                }
                alone[i] = 1;
                alone_calls++;
            }
            continue;
        }
        if (IsNotification(call)) {
            if (dropped.empty()) {
                dropped.resize(n);
            }
            dropped[i] = 1;
            answer.clear();
            continue;
        }
        if (local.empty()) {
            local.resize(n);
        }
        local[i] = std::move(answer);
        answer.clear();
    }
    auto is_dropped = [&](size_t i) { return !dropped.empty() && dropped[i]; };
    RouteDecision decision;
    if (!alone.empty()) {
        decision.forward = true;
        decision.pieces = CutPieces(request, local, alone, dropped);
        return decision;
    }
    const char* open = options.run ? "" : "[";
    const char* close = options.run ? "" : "]";
    // A run's place in the client's array was made for its calls with an
    // id: an answer made here for a notification has no room (and JSON-RPC
    // answers none).
    auto silent = [&](size_t i) {
        return is_dropped(i) ||
               (options.run && request.calls[i].id_raw.empty());
    };
    if (forwarding == 0) {
        decision.answer = open;
        bool any = false;
        for (size_t i = 0; i < n; i++) {
            if (silent(i)) {
                continue;
            }
            if (any) {
                decision.answer.push_back(',');
            }
            decision.answer += local[i];
            any = true;
        }
        // nothing to answer (all notifications): no answer, not "[]"
        if (any) {
            decision.answer += close;
        } else {
            decision.answer.clear();
        }
        return decision;
    }
    decision.forward = true;
    if (forwarding == n && !options.run && !has_get_slot) {
        // The client's body as it is, its answer too: merging costs a
        // 10-call batch some 17k instructions (two fifths of all Solgate
        // adds to it), so only a batch with a getSlot to correct (or a
        // run, whose brackets go) is merged.
        return decision;
    }
    // merged: the local answers and the corrections go in their places
    if (options.merge_room != nullptr) {
        decision.merge.swap(*options.merge_room);
        decision.merge.clear();
    }
    decision.merge.reserve(n);
    if (forwarding < n) {
        decision.forward_body.push_back('[');
    }
    for (size_t i = 0; i < n; i++) {
        const RpcCall& call = request.calls[i];
        if (is_dropped(i)) {
            continue;
        }
        if (!local.empty() && !local[i].empty()) {
            if (!silent(i)) {
                decision.merge.push_back({false, std::move(local[i]), {}, i});
            }
            continue;
        }
        if (forwarding < n) {
            if (decision.forward_body.size() > 1) {
                decision.forward_body.push_back(',');
            }
            decision.forward_body.append(CallText(request, call));
        }
        if (call.id_raw.empty()) {
            continue;   // a notification: the upstream answers nothing
        }
        decision.merge.push_back({true, {}, call.id_raw, i});
    }
    if (forwarding < n) {
        decision.forward_body.push_back(']');
    }
    return decision;
}

// A client refused for ws_max_connections tries again after this long (a
// subscriber's reconnect loop honours Retry-After; without it, many retry
// at once and at once again).
constexpr unsigned kWsConnectionsFullRetryAfterS = 5;

// Whether ws_max_connections is reached, once what killed workers still
// counted is taken off (pubsub/ws_holders.h).
bool WsConnectionsFull(const Network& network) {
    uint64_t max = network.settings().ws_max_connections;
    return max > 0 && network.WsOpen() >= max &&
           (ReapWsHolders(network) == 0 || network.WsOpen() >= max);
}

std::string InternalError(std::string_view id_raw, std::string_view message) {
    std::string out;
    AppendErrorEnvelope(out, id_raw, kInternalError, message);
    return out;
}

}  // namespace

std::string MissingBatchAnswer(std::string_view id_raw) {
    return InternalError(id_raw,
                         "Internal error: the upstream answered the batch "
                         "without an answer to this call");
}

std::string CutShortBatchAnswer(std::string_view id_raw) {
    return InternalError(id_raw,
                         "Internal error: the upstream's answer to the batch "
                         "was cut short");
}

bool CallGoesAlone(const RpcCall& call, const Network& network) {
    if (call.id_raw.empty()) {
        return false;   // a notification: nothing of it comes back
    }
    if (network.blocks() != nullptr && IsCubeRunnerMethod(call.method)) {
        return true;
    }
    const NetworkSettings& settings = network.settings();
    if (settings.retry_missing_data.on && MayLackData(call.method)) {
        return true;
    }
    return ChooseCallFanOut(settings, call) != FanOutKind::kNone;
}

namespace {

// A body that is not a batch. Every path returns `decision` by name, so it
// is built in the caller's object (NRVO): RouteRequest's return of
// RouteBatch among the returns made each of them a move of its strings
// and vectors.
RouteDecision RouteWhole(const RpcRequest& request, RouteContext& ctx) {
    const Network& network = ctx.network;
    const RoutePlan& plan = ctx.plan;
    RouteDecision decision;
    switch (request.shape) {
    case RpcRequest::Shape::kUnreadable:
        AppendErrorEnvelope(decision.answer, {}, request.error.code,
                            request.error.message);
        break;
    case RpcRequest::Shape::kSingle:
        decision.forward =
            !AppendLocalAnswer(decision.answer, request.calls[0], ctx);
        if (!decision.forward && IsNotification(request.calls[0])) {
            decision.answer.clear();   // an empty 200, as from a node
        }
        break;
    case RpcRequest::Shape::kBatch:
        break;   // RouteBatch's
    case RpcRequest::Shape::kSubscription:
        if (!plan.error && WsConnectionsFull(network)) {
            decision.http_status = 503;
            decision.retry_after_s = kWsConnectionsFullRetryAfterS;
            AppendErrorEnvelope(
                decision.answer, {}, kWsConnectionsFull,
                "WebSocket connections full: network " +
                    std::string(network.name()) + " holds its " +
                    std::to_string(network.settings().ws_max_connections) +
                    " (ws_max_connections); try again later");
            break;
        }
        if (plan.error) {
            // a handshake's answer: an HTTP error the client library shows
            decision.http_status =
                plan.error->code == kInvalidParams ? 400 : 503;
            AppendErrorEnvelope(decision.answer, {}, plan.error->code,
                                plan.error->message);
            break;
        }
        decision.forward = true;
        break;
    }
    return decision;
}

}  // namespace

RouteDecision RouteRequest(const RpcRequest& request, const Network& network,
                           const RoutePlan& plan, int64_t now_ms,
                           RouteOptions options) {
    RouteContext ctx{network, plan, now_ms, std::nullopt};
    if (request.shape == RpcRequest::Shape::kBatch) {
        return RouteBatch(request, ctx, options);
    }
    return RouteWhole(request, ctx);
}

std::string_view RequestMethodName(const RpcRequest& request) {
    switch (request.shape) {
    case RpcRequest::Shape::kSingle:
        return request.calls[0].method;
    case RpcRequest::Shape::kBatch:
        return "batch";
    case RpcRequest::Shape::kSubscription:
        return "websocket";
    case RpcRequest::Shape::kUnreadable:
        break;
    }
    return "";
}

}  // namespace solgate
