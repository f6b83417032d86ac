// What the response path does for one forwarded request: rewrite a getSlot
// answer, harvest context.slot from an envelope, or nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "json/context_slot_scanner.h"
#include "routing/network.h"
#include "routing/route_plan.h"
#include "rpc/rpc_request.h"

namespace solgate {

sg_commitment_t EffectiveCommitment(const RpcCall& call,
                                    const NetworkSettings& settings);

class ResponseHook {
public:
    enum class Kind { kRewriteSlot, kHarvest };

    // nullopt when the response needs nothing (batches, other methods,
    // an envelope when it is not the upstream's harvest turn: see
    // Network::TakeHarvestTurn). By value: the caller keeps it where it
    // keeps the request's other state, with no allocation of its own.
    static std::optional<ResponseHook> For(const Network& network,
                                           const RpcRequest& request,
                                           const RoutePlan& plan,
                                           size_t upstream, int64_t now_ms);
    // The same for one call, whose answer the caller has on its own (an
    // element of a batch's answer).
    static std::optional<ResponseHook> ForCall(const Network& network,
                                               const RpcCall& call,
                                               const RoutePlan& plan,
                                               size_t upstream);

    Kind kind() const { return kind_; }

    // Harvest: feed body bytes; true once nothing more is needed.
    bool Feed(const char* data, size_t len, int64_t now_ms);
    void Finish(int64_t now_ms);

    // Rewrite: the corrected body, or nullopt to send the answer as it is.
    struct Correction {
        std::string body;
        uint64_t from;
        uint64_t to;
    };
    std::optional<Correction> Rewrite(std::string_view body, int64_t now_ms);

private:
    ResponseHook(const Network& network, const RoutePlan& plan,
                 size_t upstream, Kind kind, sg_commitment_t commitment)
        : network_(network), plan_(plan), upstream_(upstream), kind_(kind),
          commitment_(commitment) {}

    // Which hook a call's answer from `upstream` needs, if any.
    static std::optional<Kind> KindFor(const Network& network,
                                       const RpcCall& call, size_t upstream);
    void Harvested(int64_t now_ms);

    const Network& network_;
    const RoutePlan& plan_;
    size_t upstream_;
    Kind kind_;
    sg_commitment_t commitment_;
    // Only a harvest needs one: made on first use.
    std::optional<ContextSlotScanner> scanner_;
    // The plan's tips, read once per response (a batch's getSlot answers
    // share them).
    std::optional<Tips> tips_;
    bool done_ = false;
};

}  // namespace solgate
