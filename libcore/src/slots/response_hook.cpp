#include "slots/response_hook.h"

#include "json/slot_answer.h"
#include "slots/slot_hooks.h"

namespace solgate {

sg_commitment_t EffectiveCommitment(const RpcCall& call,
                                    const NetworkSettings& settings) {
    return call.commitment ? *call.commitment : settings.default_commitment;
}

std::optional<ResponseHook::Kind> ResponseHook::KindFor(const Network& network,
                                                       const RpcCall& call,
                                                       size_t upstream) {
    if (!network.bound() || upstream >= network.size()) {
        return std::nullopt;
    }
    // getBlockHeight is a different counter and is never corrected.
    // as a string_view: sizes first, inline (std::string == const char*
    // is an out-of-line compare with a strlen)
    if (std::string_view(call.method) == "getSlot") {
        return Kind::kRewriteSlot;
    }
    if (IsEnvelopeMethod(call.method)) {
        return Kind::kHarvest;
    }
    return std::nullopt;
}

std::optional<ResponseHook> ResponseHook::For(const Network& network,
                                              const RpcRequest& request,
                                              const RoutePlan& plan,
                                              size_t upstream,
                                              int64_t now_ms) {
    if (request.shape != RpcRequest::Shape::kSingle) {
        return std::nullopt;
    }
    const RpcCall& call = request.calls[0];
    std::optional<Kind> kind = KindFor(network, call, upstream);
    if (!kind) {
        return std::nullopt;
    }
    sg_commitment_t commitment = EffectiveCommitment(call, network.settings());
    // most harvests are not this one's turn: decided before a hook is made
    if (*kind == Kind::kHarvest &&
        !network.TakeHarvestTurn(upstream,
                                 commitment == SG_COMMITMENT_FINALIZED,
                                 now_ms)) {
        return std::nullopt;
    }
    return ResponseHook(network, plan, upstream, *kind, commitment);
}

std::optional<ResponseHook> ResponseHook::ForCall(const Network& network,
                                                  const RpcCall& call,
                                                  const RoutePlan& plan,
                                                  size_t upstream) {
    std::optional<Kind> kind = KindFor(network, call, upstream);
    if (!kind) {
        return std::nullopt;
    }
    return ResponseHook(network, plan, upstream, *kind,
                        EffectiveCommitment(call, network.settings()));
}

bool ResponseHook::Feed(const char* data, size_t len, int64_t now_ms) {
    if (done_) {
        return true;
    }
    if (!scanner_) {
        scanner_.emplace();
    }
    switch (scanner_->Feed(data, len)) {
    case ContextSlotScanner::State::kMore:
        return false;
    case ContextSlotScanner::State::kFound:
        Harvested(now_ms);
        break;
    case ContextSlotScanner::State::kNotFound:
        break;
    }
    done_ = true;
    return true;
}

void ResponseHook::Finish(int64_t now_ms) {
    if (!done_ && scanner_ &&
        scanner_->Finish() == ContextSlotScanner::State::kFound) {
        Harvested(now_ms);
    }
    done_ = true;
}

void ResponseHook::Harvested(int64_t now_ms) {
    HarvestContextSlot(network_, upstream_, commitment_, scanner_->slot(),
                       now_ms);
}

std::optional<ResponseHook::Correction> ResponseHook::Rewrite(
    std::string_view body, int64_t now_ms) {
    auto answer = ParseSlotAnswer(body);
    if (!answer) {
        return std::nullopt;  // an error or something unexpected: untouched
    }
    TipStore& tips = network_.tips();
    // The memory of answered slots is network-wide, so only requests
    // without a selector use it: a group may rightly be behind the rest.
    bool latest = commitment_ == SG_COMMITMENT_PROCESSED ||
                  commitment_ == SG_COMMITMENT_NONE;
    bool processed = latest && !plan_.has_selector;
    if (!tips_) {
        tips_ = GetSlotTips(commitment_, network_, plan_, now_ms);
    }
    uint64_t corrected = CorrectGetSlot(
        commitment_, answer->slot, *tips_, processed ? tips.Answered() : 0,
        latest ? GetSlotCeiling(network_, plan_) : SlotCeiling{});
    if (processed) {
        tips.SuggestAnswered(corrected);
    }
    if (corrected == answer->slot) {
        return std::nullopt;
    }
    network_.counters().getslot_corrections.fetch_add(
        1, std::memory_order_relaxed);
    return Correction{ReplaceSlot(body, *answer, corrected), answer->slot,
                      corrected};
}

}  // namespace solgate
