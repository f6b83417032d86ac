#include "routing/routed_request.h"

#include <algorithm>
#include <optional>

#include "json/error_answer.h"
#include "json/json_writer.h"
#include "routing/request_metrics.h"
#include "rpc/answers.h"
#include "routing/selector.h"
#include "rpc/rpc_errors.h"
#include "slots/served_tip.h"

namespace solgate {

const RoutePlan RoutedRequest::kNoPlan{};

RouteDecision RoutedRequest::Route(const Network& network,
                                   const SelectorSources& sources,
                                   int64_t now_ms) {
    network_ = &network;
    ChosenSelector selector =
        ChooseSelector(sources, network.settings().default_selector,
                       network.settings().use_upstream_from_client);
    // in place: plan_ already holds the storage a warm thread reuses
    PlanRouteInto(network, parsed_, selector.text, selector.from_client,
                  plan_);
    routed_ = true;
    if (!selector.twice.empty()) {
        plan_.every_upstream_of = 0;   // no longer every request's plan
        plan_.error = RpcError{kInvalidParams,
                               "Invalid params: use-upstream selector given "
                               "twice (" + std::string(selector.twice) +
                                   "): send one"};
    }
    merge_.clear();   // (its storage stays, for the merge made below)
    RouteDecision decision = RouteRequest(parsed_, network, plan_, now_ms,
                                          RouteOptions{run_, &merge_});
    // a merge is made in merge_'s storage, swapped out: swapped back
    if (decision.merge.capacity() > 0) {
        merge_.swap(decision.merge);
    }
    pieces_ = std::move(decision.pieces);
    return decision;
}

void RoutedRequest::Parse(const char* body, size_t len) {
    ParseRpcRequestInto(body, len, parsed_);
}

bool RoutedRequest::WorthKeeping() const {
    constexpr size_t kCallsKept = 64;
    return parsed_.calls.capacity() <= kCallsKept &&
           merge_.capacity() <= kCallsKept &&
           pieces_.capacity() <= kCallsKept &&
           kept_answer_.capacity() <= kKeptAnswerBytes;
}

void RoutedRequest::Clear() {
    ResetRequest(parsed_);
    network_ = nullptr;
    // plan_ is kept: the next request's may be the same (RoutePlan's
    // every_upstream_of); Route makes it anew otherwise
    routed_ = false;
    tried_.fill(0);
    upstream_.reset();
    answer_run_ = FailureRun{};
    answered_ = false;
    cut_ = false;
    attempts_ = 0;
    finished_ = false;
    data_retries_ = 0;
    holding_slot_.reset();
    merge_.clear();
    pieces_.clear();
    run_ = false;
    fan_out_.reset();
    kept_answer_.clear();
    kept_rank_ = 0;
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
    pick.subscription = parsed_.shape == RpcRequest::Shape::kSubscription;
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
    answered_ = false;
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
        report.ejected_ms = network_->ReportAttempt(
            *upstream_, report.outcome, now_ms, &answer_run_);
    }
    answered_ = report.outcome.cause == AttemptCause::kOk;
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

int64_t RoutedRequest::ReportCut(int64_t now_ms) {
    if (network_ == nullptr || !upstream_ || !answered_) {
        return 0;
    }
    answered_ = false;
    cut_ = true;
    UpstreamHostRecord& host = network_->host(*upstream_);
    host.cut_answers.fetch_add(1, std::memory_order_relaxed);
    // Report's success for the header ended the upstream's failure run:
    // the cut takes that back, so cuts in a row reach max_fails; unless
    // another answer has ended the run since, which stands (with max_fails
    // 1, the default, any cut ejects)
    if (host.run_resets.load(std::memory_order_relaxed) ==
        answer_run_.resets_after) {
        uint32_t run = host.consecutive_fails.load(std::memory_order_relaxed);
        if (run < answer_run_.fails_before) {
            host.consecutive_fails.store(answer_run_.fails_before,
                                         std::memory_order_relaxed);
        }
    }
    return network_->ReportAttempt(
        *upstream_, ClassifyAttempt(0, false, std::string_view()), now_ms);
}

std::vector<size_t> RoutedRequest::TakeTargets(size_t want, int64_t now_ms) {
    std::vector<size_t> targets;
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

void RoutedRequest::LeaveOutTrailingFinalized() {
    int64_t max_lag = network_->settings().max_finalized_slot_lag;
    if (max_lag <= 0) {
        return;
    }
    std::vector<size_t> candidates;
    for (size_t i = 0; i < network_->size(); i++) {
        if (plan_.allowed.empty() || plan_.allowed[i]) {
            candidates.push_back(i);
        }
    }
    std::vector<uint64_t> finalized;
    network_->slots().Views(candidates, kSlotFinalized, &finalized);
    std::vector<size_t> kept = FilterByFinalizedSlotLag(finalized, max_lag);
    std::vector<unsigned char> keep(candidates.size(), 0);
    for (size_t k : kept) {
        keep[k] = 1;
    }
    for (size_t k = 0; k < candidates.size(); k++) {
        if (!keep[k]) {
            tried_[candidates[k]] = 1;   // never picked for this request
        }
    }
}

RoutedRequest::FanOutStart RoutedRequest::StartFanOut(int64_t now_ms) {
    FanOutStart start;
    if (network_ == nullptr) {
        return start;
    }
    const NetworkSettings& settings = network_->settings();
    FanOutKind kind = ChooseFanOut(settings, parsed_);
    if (kind == FanOutKind::kNone) {
        return start;
    }
    fan_out_.emplace(kind, settings);
    size_t want = 1;
    switch (kind) {
    case FanOutKind::kBroadcast:
        want = settings.broadcast.to == 0 ? network_->size()
                                          : settings.broadcast.to;
        break;
    case FanOutKind::kConsensus:
        if (network_->bound()) {
            LeaveOutTrailingFinalized();
        }
        want = settings.consensus.participants;
        break;
    case FanOutKind::kHedge:
        start.hedge_after_ms = settings.hedge.after_ms;
        break;
    case FanOutKind::kNone:
        break;
    }
    start.targets = TakeTargets(want, now_ms);
    if (start.targets.empty()) {
        fan_out_.reset();
        return start;   // nobody to ask: the usual path answers
    }
    for (size_t upstream : start.targets) {
        fan_out().Launched(upstream, false);
    }
    start.kind = kind;
    return start;
}

RoutedRequest::FanOutStep RoutedRequest::ReportFanOut(
    size_t upstream, const AttemptEnd& end, bool cancelled, int64_t now_ms) {
    FanOutStep step;
    std::string_view answer;
    if (!cancelled) {
        AttemptOutcome outcome =
            ClassifyAttempt(end.http_status, end.timed_out, end.retry_after);
        network_->ReportAttempt(upstream, outcome, now_ms);
        if (end.http_status == 200) {
            answer = end.answer;
            if (answer.empty()) {
                fan_out().NoteEmptyAnswer();
            }
        }
        if (fan_out().kind() == FanOutKind::kBroadcast) {
            // a notification's success is a node's empty 200
            bool success = answer.empty()
                               ? end.http_status == 200 && parsed_.IsNotification()
                               : !LooksLikeRpcError(answer);
            network_->host(upstream)
                .broadcasts[success ? 0 : 1]
                .fetch_add(1, std::memory_order_relaxed);
        }
    }
    step.decided = fan_out().Ended(upstream, answer, cancelled);
    if (!step.decided && fan_out().kind() == FanOutKind::kHedge &&
        fan_out().pending() == 0) {
        // every attempt so far ended without a good answer: fail over
        auto next = NextAttempt(now_ms);
        if (next) {
            fan_out().Launched(next->upstream, false);
            step.launch = next->upstream;
        } else {
            fan_out().Settle();
            step.decided = true;
        }
    }
    return step;
}

std::optional<size_t> RoutedRequest::NextHedge(int64_t now_ms) {
    if (!HedgeLeft()) {
        return std::nullopt;
    }
    auto next = NextAttempt(now_ms);
    if (!next) {
        return std::nullopt;
    }
    fan_out().Launched(next->upstream, true);
    network_->counters().hedges_sent.fetch_add(1, std::memory_order_relaxed);
    return next->upstream;
}

RoutedRequest::Answer RoutedRequest::FanOutAnswer() {
    FanOut::Result result = fan_out().Decide();
    if (result.upstream) {
        upstream_ = result.upstream;   // the request counts as answered by it
    }
    NetworkHostCounters& counters = network_->counters();
    if (fan_out().kind() == FanOutKind::kConsensus) {
        counters.consensus[static_cast<size_t>(result.consensus)].fetch_add(
            1, std::memory_order_relaxed);
    }
    if (result.from_hedge) {
        counters.hedges_won.fetch_add(1, std::memory_order_relaxed);
    }
    if (!result.answer.empty()) {
        return {200, std::string(result.answer)};
    }
    if (parsed_.IsNotification() && fan_out().empty_answers() > 0) {
        return {200, std::string()};   // delivered; nothing to answer
    }
    if (fan_out().kind() == FanOutKind::kConsensus &&
        result.consensus != ConsensusOutcome::kFailed) {
        upstream_.reset();   // Solgate's own answer
        return {200, ConsensusDisputeAnswer(parsed_,
                                            network_->settings().consensus,
                                            result, fan_out().launched())};
    }
    return AllFailed();
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
            // -32016: the client's minContextSlot, which any client may set
            // past every node (or name at a commitment behind the one the
            // node is at), is not the node's failure
            bool client_slot = *code == kMinContextSlotNotReached;
            report->outcome.cause = client_slot
                                        ? AttemptCause::kMinContextSlot
                                        : AttemptCause::kNodeBehind;
            report->outcome.health = !client_slot;
        }
        return;
    case RpcErrorClass::kMissingData: {
        KeepAnswer(end.answer, 2);
        report->data_given_up = policy.on;   // unless a retry follows
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
        report->data_given_up = false;
        report->retry = Retry::kMissingData;
        report->retry_delay_ms = policy.delay_ms;
        break;
    }
    case RpcErrorClass::kSkippedSlot:
        // One sweep: every candidate once, at once; never a timed re-sweep.
        KeepAnswer(end.answer, 1);
        if (!policy.on || !AnotherCandidate(now_ms)) {
            report->answer_kept = kept_rank_ > 1;
            report->data_given_up = policy.on;
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
                           std::optional<int64_t> error_code,
                           int64_t duration_ms) {
    if (network_ == nullptr || finished_) {
        return;
    }
    finished_ = true;
    std::string_view method = RequestMethodName(parsed_);
    // the name is looked up once: its class follows from its index
    size_t method_index = SolanaMethodIndex(method);
    // a batch that went call by call was answered by its pieces' upstreams
    RequestOutcome outcome =
        !upstream_ && pieces_.empty()        ? RequestOutcome::kLocal
        : http_status == kClientClosedStatus ? RequestOutcome::kClientClosed
        : cut_                               ? RequestOutcome::kCut
        : http_status != 200                 ? RequestOutcome::kHttpError
        : !rpc_error                  ? RequestOutcome::kOk
        : error_code &&
                IsClientMistake(*error_code,
                                method_index != kOtherMethod &&
                                    !IsRemovedMethodIndex(method_index))
            ? RequestOutcome::kClientError
            : RequestOutcome::kRpcError;
    size_t slot =
        upstream_ ? network_->RecordIndex(*upstream_) : kNoUpstreamSlot;
    CountRequest(network_->counters().requests, slot, method_index, outcome);
    if (upstream_ && outcome != RequestOutcome::kClientClosed) {
        // (a client that left says nothing of the upstream's time)
        ObserveLatency(network_->host(*upstream_),
                       ClassOfMethodIndex(method_index),
                       static_cast<uint64_t>(std::max<int64_t>(duration_ms, 0)));
    }
}

std::string RoutedRequest::WriteNotRetriedAnswer(
    const AttemptReport& report) const {
    std::string message =
        WriteNotRetriedMessage(AttemptCauseName(report.outcome.cause));
    if (merge_.empty() && !run_) {
        return FailRequest(parsed_, kInternalError, message);
    }
    return MergedFailAnswer(message);
}

std::string RoutedRequest::StatusAnswer(unsigned http_status) const {
    std::string message =
        http_status == 0
            ? std::string("Internal error: the upstream's answer was empty")
            : "Internal error: the call ended with HTTP status " +
                  std::to_string(http_status);
    if (merge_.empty() && !run_) {
        return FailRequest(parsed_, kInternalError, message);
    }
    return MergedFailAnswer(message);
}

RoutedRequest::Answer RoutedRequest::AllFailed() const {
    bool answered_here = false;
    if (!run_) {   // a run's status is its batch's, not its own
        for (const BatchMerger::Slot& slot : merge_) {
            answered_here = answered_here ||
                            (!slot.forwarded && !slot.text.empty() &&
                             !LooksLikeRpcError(slot.text));
        }
    }
    return {answered_here ? 200u : kAllFailedHttpStatus, AllFailedAnswer()};
}

std::string RoutedRequest::AllFailedAnswer() const {
    if (merge_.empty() && !run_) {
        return solgate::AllFailedAnswer(parsed_, attempts_);
    }
    return MergedFailAnswer(AllFailedMessage(attempts_));
}

// A merged batch keeps the answers made here; a run has no brackets, and
// nothing for its notifications.
std::string RoutedRequest::MergedFailAnswer(std::string_view message) const {
    std::string out = run_ ? "" : "[";
    const size_t open = out.size();
    for (const BatchMerger::Slot& slot : merge_) {
        if (out.size() > open) {
            out.push_back(',');
        }
        if (!slot.forwarded) {
            out += slot.text;
            continue;
        }
        AppendErrorEnvelope(out, slot.id, kInternalError, message);
    }
    if (!run_) {
        out.push_back(']');
    }
    return out;
}

}  // namespace solgate
