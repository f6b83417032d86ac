#include "routing/routed_request.h"

#include "rpc/answers.h"

namespace solgate {

RouteDecision RoutedRequest::Route(const Network& network,
                                   const SelectorSources& sources,
                                   int64_t now_ms) {
    network_ = &network;
    std::string_view selector =
        ChooseSelector(sources, network.settings().default_selector);
    plan_ = PlanRoute(network, parsed_, selector);
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
    bool all_cordoned = false;
    auto index = network_->Pick(tried_.data(), min_context_slot,
                                &all_cordoned, &plan_.allowed);
    if (!index) {
        return std::nullopt;
    }
    if (all_cordoned) {
        network_->counters().all_cordoned_fallbacks.fetch_add(
            1, std::memory_order_relaxed);
    }
    tried_[*index] = 1;
    upstream_ = index;
    attempts_++;
    return Attempt{*index,
                   all_cordoned && network_->TakeAllCordonedWarning(now_ms)};
}

std::string RoutedRequest::AllFailedAnswer() const {
    return solgate::AllFailedAnswer(parsed_, attempts_);
}

}  // namespace solgate
