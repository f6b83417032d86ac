#include "routing/routed_request.h"

#include <algorithm>

#include "json/error_answer.h"
#include "json/json_writer.h"
#include "routing/request_metrics.h"
#include "rpc/answers.h"
#include "routing/selector.h"
#include "rpc/rpc_errors.h"

namespace solgate {

RouteDecision RoutedRequest::Route(const Network& network,
                                   const SelectorSources& sources,
                                   int64_t now_ms) {
    network_ = &network;
    ChosenSelector selector =
        ChooseSelector(sources, network.settings().default_selector,
                       network.settings().use_upstream_from_client);
    plan_ = PlanRoute(network, parsed_, selector.text, selector.from_client);
    RouteDecision decision = RouteRequest(parsed_, network, plan_, now_ms);
    merge_ = std::move(decision.merge);
    return decision;
}

Network::PickRequest RoutedRequest::NextPick(int64_t now_ms) const {
    Network::PickRequest pick;
    // a batch goes to one upstream: the highest minContextSlot of its calls
    for (const RpcCall& call : parsed_.calls) {
        if (call.min_context_slot &&
            (!pick.min_context_slot ||
             *call.min_context_slot > *pick.min_context_slot)) {
            pick.min_context_slot = call.min_context_slot;
        }
    }
    pick.tried = tried_.data();
    pick.allowed = &plan_.allowed;
    pick.fallback = plan_.fallback.empty() ? nullptr : &plan_.fallback;
    pick.holding_slot = holding_slot_;
    pick.lag_reference = network_->settings().max_slot_lag > 0
                             ? network_->LagReferenceOf(plan_.matched)
                             : 0;
    pick.now_ms = now_ms;
    return pick;
}

bool RoutedRequest::AnotherCandidate(int64_t now_ms) const {
    Network::PickRequest pick = NextPick(now_ms);
    pick.probe = true;
    return network_->Pick(pick).has_value();
}

std::optional<RoutedRequest::Attempt> RoutedRequest::NextAttempt(
    int64_t now_ms) {
    if (network_ == nullptr) {
        return std::nullopt;
    }
    auto picked = network_->Pick(NextPick(now_ms));
    if (!picked) {
        return std::nullopt;
    }
    bool all_cordoned = picked->all_cordoned &&
                        picked->tier == CandidateTier::kCordoned;
    if (all_cordoned) {
        network_->counters().all_cordoned_fallbacks.fetch_add(
            1, std::memory_order_relaxed);
    }
    tried_[picked->upstream] = 1;
    upstream_ = picked->upstream;
    attempts_++;
    return Attempt{picked->upstream, picked->tier,
                   all_cordoned && network_->TakeAllCordonedWarning(now_ms)};
}

RoutedRequest::AttemptReport RoutedRequest::Report(const AttemptEnd& end,
                                                  int64_t now_ms) {
    AttemptReport report;
    report.outcome =
        ClassifyAttempt(end.http_status, end.timed_out, end.retry_after);
    if (report.outcome.cause == AttemptCause::kOk) {
        JudgeAnswer(end, now_ms, &report);
    }
    if (network_ != nullptr && upstream_) {
        report.ejected_ms =
            network_->ReportAttempt(*upstream_, report.outcome, now_ms);
    }
    bool failed = report.outcome.cause != AttemptCause::kOk;
    report.write_not_retried = failed && end.connected && parsed_.HasWrite();
    if (failed && !report.write_not_retried && network_ != nullptr &&
        upstream_) {
        network_->host(*upstream_)
            .failovers[static_cast<size_t>(report.outcome.cause)]
            .fetch_add(1, std::memory_order_relaxed);
    }
    return report;
}

std::vector<size_t> RoutedRequest::BroadcastTargets(int64_t now_ms) {
    std::vector<size_t> targets;
    const conf::Broadcast& policy =
        network_ != nullptr ? network_->settings().broadcast
                            : conf::Broadcast{};
    if (policy.methods.empty() || parsed_.shape != RpcRequest::Shape::kSingle) {
        return targets;
    }
    const std::string& method = parsed_.calls[0].method;
    bool listed = std::any_of(
        policy.methods.begin(), policy.methods.end(),
        [&](const std::string& glob) { return GlobMatch(glob, method); });
    if (!listed) {
        return targets;
    }
    size_t want = policy.to == 0 ? network_->size() : policy.to;
    while (targets.size() < want) {
        auto attempt = NextAttempt(now_ms);
        if (!attempt ||
            (attempt->tier == CandidateTier::kCordoned && !targets.empty())) {
            break;
        }
        targets.push_back(attempt->upstream);
    }
    return targets;
}

bool RoutedRequest::ReportBroadcast(size_t upstream, const AttemptEnd& end,
                                    int64_t now_ms) {
    AttemptOutcome outcome =
        ClassifyAttempt(end.http_status, end.timed_out, end.retry_after);
    network_->ReportAttempt(upstream, outcome, now_ms);
    bool success = end.http_status == 200 && !end.answer.empty() &&
                   !LooksLikeRpcError(end.answer);
    network_->host(upstream)
        .broadcasts[success ? 0 : 1]
        .fetch_add(1, std::memory_order_relaxed);
    if (!success) {
        if (end.http_status == 200 && !end.answer.empty() &&
            broadcast_error_.empty()) {
            broadcast_error_ = std::string(end.answer);
        }
        return false;
    }
    if (broadcast_success_.empty()) {
        broadcast_success_ = std::string(end.answer);
        upstream_ = upstream;   // the request counts as answered by it
    }
    return true;
}

RoutedRequest::Answer RoutedRequest::BroadcastAnswer() const {
    if (!broadcast_success_.empty()) {
        return {200, broadcast_success_};
    }
    if (!broadcast_error_.empty()) {
        return {200, broadcast_error_};
    }
    return {kAllFailedHttpStatus, AllFailedAnswer()};
}

// Only a single read: a batch's answers are the client's to judge per
// element, and a write is never sent twice.
void RoutedRequest::JudgeAnswer(const AttemptEnd& end, int64_t now_ms,
                                AttemptReport* report) {
    if (end.answer.empty() || end.http_status != 200 ||
        parsed_.shape != RpcRequest::Shape::kSingle || parsed_.HasWrite() ||
        network_ == nullptr || !LooksLikeRpcError(end.answer)) {
        return;
    }
    std::optional<int64_t> code = ParseErrorCode(end.answer);
    if (!code) {
        return;
    }
    const conf::RetryMissingData& policy =
        network_->settings().retry_missing_data;
    switch (ClassifyRpcError(*code)) {
    case RpcErrorClass::kServerRetryable:
        if (AnotherCandidate(now_ms)) {
            report->outcome.cause = AttemptCause::kNodeBehind;
        }
        return;
    case RpcErrorClass::kMissingData: {
        KeepAnswer(end.answer, 2);
        if (!policy.on || data_retries_ >= policy.attempts) {
            return;
        }
        const RpcCall& call = parsed_.calls[0];
        bool block = call.method == "getBlock" ||
                     call.method == "getConfirmedBlock";
        if (block && call.first_param_u64) {
            holding_slot_ = call.first_param_u64;
        }
        if (!AnotherCandidate(now_ms)) {
            return;
        }
        data_retries_++;
        report->retry = Retry::kMissingData;
        report->retry_delay_ms = policy.delay_ms;
        break;
    }
    case RpcErrorClass::kSkippedSlot:
        // One sweep: every candidate once, at once; never a timed re-sweep.
        KeepAnswer(end.answer, 1);
        if (!policy.on || !AnotherCandidate(now_ms)) {
            report->answer_kept = kept_rank_ > 1;
            return;
        }
        report->retry = Retry::kSkippedSlot;
        break;
    case RpcErrorClass::kClient:
    case RpcErrorClass::kOther:
        return;
    }
    network_->counters()
        .retries[static_cast<size_t>(report->retry)]
        .fetch_add(1, std::memory_order_relaxed);
}

// The first answer of the best kind: missing data says the slot exists.
void RoutedRequest::KeepAnswer(std::string_view answer, int rank) {
    if (rank > kept_rank_) {
        kept_answer_ = std::string(answer);
        kept_rank_ = rank;
    }
}

std::string_view RoutedRequest::RetryName(Retry retry) {
    switch (retry) {
    case Retry::kMissingData:
        return "missing_data";
    case Retry::kSkippedSlot:
        return "skipped_slot";
    case Retry::kNone:
        break;
    }
    return "none";
}

void RoutedRequest::Finish(unsigned http_status, bool rpc_error,
                           int64_t duration_ms) {
    if (network_ == nullptr || finished_) {
        return;
    }
    finished_ = true;
    std::string_view method = RequestMethodName(parsed_);
    RequestOutcome outcome = !upstream_               ? RequestOutcome::kLocal
                             : http_status != 200     ? RequestOutcome::kHttpError
                             : rpc_error              ? RequestOutcome::kRpcError
                                                      : RequestOutcome::kOk;
    size_t slot =
        upstream_ ? network_->RecordIndex(*upstream_) : kNoUpstreamSlot;
    CountRequest(network_->counters().requests, slot,
                 SolanaMethodIndex(method), outcome);
    if (upstream_) {
        ObserveLatency(network_->host(*upstream_), ClassOfMethod(method),
                       static_cast<uint64_t>(std::max<int64_t>(duration_ms, 0)));
    }
}

std::string RoutedRequest::WriteNotRetriedAnswer(
    const AttemptReport& report) const {
    return solgate::WriteNotRetriedAnswer(
        parsed_, AttemptCauseName(report.outcome.cause));
}

std::string RoutedRequest::AllFailedAnswer() const {
    if (merge_.empty()) {
        return solgate::AllFailedAnswer(parsed_, attempts_);
    }
    // a batch sent in part keeps the answers made here
    std::string out = "[";
    for (const BatchMerger::Slot& slot : merge_) {
        if (out.size() > 1) {
            out.push_back(',');
        }
        if (!slot.forwarded) {
            out += slot.text;
            continue;
        }
        AppendErrorEnvelope(out, slot.id, kInternalError,
                            "Internal error: no upstream could serve the "
                            "request (" + std::to_string(attempts_) +
                                " tried)");
    }
    out.push_back(']');
    return out;
}

}  // namespace solgate
