#include "routing/routed_request.h"

#include "rpc/answers.h"

namespace solgate {

RouteDecision RoutedRequest::Route(const Network& network,
                                   const SelectorSources& sources,
                                   int64_t now_ms) {
    network_ = &network;
    ChosenSelector selector =
        ChooseSelector(sources, network.settings().default_selector,
                       network.settings().use_upstream_from_client);
    plan_ = PlanRoute(network, parsed_, selector.text, selector.from_client);
    return RouteRequest(parsed_, network, plan_, now_ms);
}

std::optional<RoutedRequest::Attempt> RoutedRequest::NextAttempt(
    int64_t now_ms) {
    if (network_ == nullptr) {
        return std::nullopt;
    }
    std::optional<uint64_t> min_context_slot;
    if (parsed_.shape == RpcRequest::Shape::kSingle) {
        min_context_slot = parsed_.calls[0].min_context_slot;
    }
    Network::PickRequest pick;
    pick.tried = tried_.data();
    pick.allowed = &plan_.allowed;
    pick.fallback = plan_.fallback.empty() ? nullptr : &plan_.fallback;
    pick.min_context_slot = min_context_slot;
    pick.lag_reference = network_->settings().max_slot_lag > 0
                             ? network_->LagReferenceOf(plan_.matched)
                             : 0;
    pick.now_ms = now_ms;
    auto picked = network_->Pick(pick);
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

AttemptOutcome RoutedRequest::Report(unsigned http_status, bool timed_out,
                                     std::string_view retry_after,
                                     int64_t now_ms, int64_t* ejected_ms) {
    AttemptOutcome outcome =
        ClassifyAttempt(http_status, timed_out, retry_after);
    *ejected_ms = network_ != nullptr && upstream_
                      ? network_->ReportAttempt(*upstream_, outcome, now_ms)
                      : 0;
    return outcome;
}

std::string RoutedRequest::AllFailedAnswer() const {
    return solgate::AllFailedAnswer(parsed_, attempts_);
}

}  // namespace solgate
