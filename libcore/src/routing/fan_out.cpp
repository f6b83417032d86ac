#include "routing/fan_out.h"

#include <algorithm>

#include "json/consensus_vote.h"
#include "json/error_answer.h"
#include "routing/network.h"
#include "routing/selector.h"
#include "rpc/answers.h"
#include "rpc/rpc_errors.h"
#include "rpc/solana_methods.h"

namespace solgate {

std::string_view FanOutKindName(FanOutKind kind) {
    switch (kind) {
    case FanOutKind::kBroadcast:
        return "broadcast";
    case FanOutKind::kConsensus:
        return "consensus";
    case FanOutKind::kHedge:
        return "hedge";
    case FanOutKind::kNone:
        break;
    }
    return "none";
}

std::string_view ConsensusOutcomeName(ConsensusOutcome outcome) {
    switch (outcome) {
    case ConsensusOutcome::kAgreed:
        return "agreed";
    case ConsensusOutcome::kDispute:
        return "dispute";
    case ConsensusOutcome::kLowParticipants:
        return "low_participants";
    case ConsensusOutcome::kFailed:
        break;
    }
    return "failed";
}

bool ListsMethod(const std::vector<std::string>& methods,
                 std::string_view method) {
    return std::any_of(methods.begin(), methods.end(),
                       [&](const std::string& glob) {
                           return GlobMatch(glob, method);
                       });
}

bool IsFinalizedCall(const RpcCall& call, sg_commitment_t default_commitment) {
    if (call.commitment) {
        return *call.commitment == SG_COMMITMENT_FINALIZED;
    }
    if (default_commitment != SG_COMMITMENT_NONE) {
        return default_commitment == SG_COMMITMENT_FINALIZED;
    }
    static constexpr std::string_view kFinalizedByDefault[] = {
        "getBlock",  "getConfirmedBlock", "getTransaction",
        "getConfirmedTransaction", "getBlocks", "getBlocksWithLimit",
        "getBlockTime",
    };
    return std::find(std::begin(kFinalizedByDefault),
                     std::end(kFinalizedByDefault),
                     call.method) != std::end(kFinalizedByDefault);
}

uint8_t FanOutFlagsOf(const NetworkSettings& settings,
                      std::string_view method) {
    uint8_t flags = 0;
    if (ListsMethod(settings.broadcast.methods, method)) {
        flags |= kFanOutBroadcast;
    }
    if (ListsMethod(settings.consensus.methods, method)) {
        flags |= kFanOutConsensus;
    }
    if (ListsMethod(settings.hedge.methods, method)) {
        flags |= kFanOutHedge;
    }
    return flags;
}

std::vector<uint8_t> FanOutFlagTable(const NetworkSettings& settings) {
    std::vector<uint8_t> table;
    if (settings.broadcast.methods.empty() &&
        settings.consensus.methods.empty() && settings.hedge.methods.empty()) {
        return table;
    }
    table.resize(kOtherMethod);   // the named methods
    for (size_t i = 0; i < kOtherMethod; i++) {
        table[i] = FanOutFlagsOf(settings, SolanaMethodName(i));
    }
    return table;
}

FanOutKind ChooseFanOut(const NetworkSettings& settings,
                        const RpcRequest& request) {
    if (request.shape != RpcRequest::Shape::kSingle) {
        return FanOutKind::kNone;
    }
    return ChooseCallFanOut(settings, request.calls[0]);
}

FanOutKind ChooseCallFanOut(const NetworkSettings& settings,
                            const RpcCall& call) {
    if (call.error) {
        return FanOutKind::kNone;
    }
    uint8_t flags = 0;
    const std::vector<uint8_t>& table = settings.fan_out_flags;
    if (!table.empty()) {
        size_t index = SolanaMethodIndex(call.method);
        flags = index < table.size() ? table[index]
                                     : FanOutFlagsOf(settings, call.method);
    } else if (!settings.broadcast.methods.empty() ||
               !settings.consensus.methods.empty() ||
               !settings.hedge.methods.empty()) {
        flags = FanOutFlagsOf(settings, call.method);
    }
    if (flags == 0) {
        return FanOutKind::kNone;
    }
    if (flags & kFanOutBroadcast) {
        return FanOutKind::kBroadcast;
    }
    if (call.id_raw.empty()) {
        // a notification: no answer to compare or race for (a broadcast
        // still delivers it everywhere)
        return FanOutKind::kNone;
    }
    if (IsWriteMethod(call.method)) {
        return FanOutKind::kNone;   // sent once, never compared or hedged
    }
    if ((flags & kFanOutConsensus) &&
        IsFinalizedCall(call, settings.default_commitment)) {
        return FanOutKind::kConsensus;
    }
    if (flags & kFanOutHedge) {
        return FanOutKind::kHedge;
    }
    return FanOutKind::kNone;
}

std::string ConsensusDisputeAnswer(const RpcRequest& request,
                                   const conf::Consensus& policy,
                                   const FanOut::Result& result,
                                   size_t asked) {
    std::string need = std::to_string(policy.agreement) + " must agree";
    if (result.consensus == ConsensusOutcome::kLowParticipants) {
        return FailRequest(request, kConsensusDispute,
                           "Consensus failed: " +
                               std::to_string(result.answered) + " of " +
                               std::to_string(asked) +
                               " participants answered, " + need);
    }
    return FailRequest(request, kConsensusDispute,
                       "Consensus dispute: " + std::to_string(asked) +
                           " participants asked, answers split " +
                           result.split + ", " + need);
}

FanOut::FanOut(FanOutKind kind, const NetworkSettings& settings)
    : kind_(kind), consensus_(settings.consensus), hedge_(settings.hedge) {}

void FanOut::Launched(size_t upstream, bool hedge) {
    launched_++;
    if (hedge) {
        hedges_sent_++;
        hedged_.push_back(upstream);
    }
}

bool FanOut::Ended(size_t upstream, std::string_view answer,
                   bool cancelled) {
    ended_ = std::min(ended_ + 1, launched_);
    if (!cancelled && !decided_) {
        switch (kind_) {
        case FanOutKind::kBroadcast:
            EndedBroadcast(upstream, answer);
            break;
        case FanOutKind::kConsensus:
            EndedConsensus(upstream, answer);
            break;
        case FanOutKind::kHedge:
            EndedHedge(upstream, answer);
            break;
        case FanOutKind::kNone:
            break;
        }
    }
    if (pending() == 0 && kind_ != FanOutKind::kHedge) {
        decided_ = true;   // a hedge may still fail over: its caller says
    }
    return decided_;
}

void FanOut::EndedBroadcast(size_t upstream, std::string_view answer) {
    if (answer.empty()) {
        return;
    }
    if (!LooksLikeRpcError(answer)) {
        if (!first_upstream_) {
            first_ = std::string(answer);
            first_upstream_ = upstream;
        }
    } else if (!kept_upstream_) {
        kept_ = std::string(answer);
        kept_upstream_ = upstream;
    }
}

const FanOut::Vote* FanOut::Leader() const {
    const Vote* leader = nullptr;
    for (const Vote& vote : votes_) {
        if (leader == nullptr || vote.count > leader->count) {
            leader = &vote;   // ties: the first to arrive
        }
    }
    return leader;
}

uint32_t FanOut::Votes() const {
    uint32_t n = 0;
    for (const Vote& vote : votes_) {
        n += vote.count;
    }
    return n;
}

void FanOut::EndedConsensus(size_t upstream, std::string_view answer) {
    std::optional<std::string> key;
    if (!answer.empty()) {
        key = ConsensusVote(answer);
    }
    if (key) {
        auto same = std::find_if(votes_.begin(), votes_.end(),
                                 [&](const Vote& v) { return v.key == *key; });
        if (same == votes_.end()) {
            votes_.push_back(Vote{std::move(*key), std::string(answer),
                                  upstream, 0});
            same = votes_.end() - 1;
        }
        same->count++;
    }
    const Vote* leader = Leader();
    uint32_t most = leader != nullptr ? leader->count : 0;
    if (most >= consensus_.agreement) {
        decided_ = true;
    } else if (consensus_.dispute == conf::Consensus::Dispute::kError &&
               most + pending() < consensus_.agreement) {
        decided_ = true;   // agreement can no longer be reached
    }
}

// Ranks of answers that do not end a hedge's race, best first: an empty
// result (the node answered, but nothing), missing data, a skipped slot,
// a node that cannot serve now.
static int HedgeRank(std::string_view answer) {
    if (answer.empty()) {
        return 0;
    }
    if (!LooksLikeRpcError(answer)) {
        std::optional<std::string> vote = ConsensusVote(answer);
        if (!vote) {
            return 0;
        }
        bool empty = *vote == "r:null" ||
                     (vote->rfind("r:{\"context\":", 0) == 0 &&
                      vote->size() >= 14 &&
                      vote->compare(vote->size() - 14, 14,
                                    ",\"value\":null}") == 0);
        return empty ? 4 : 5;
    }
    std::optional<int64_t> code = ParseErrorCode(answer);
    if (!code) {
        return 0;
    }
    switch (ClassifyRpcError(*code)) {
    case RpcErrorClass::kMissingData:
        return 3;
    case RpcErrorClass::kSkippedSlot:
        return 2;
    case RpcErrorClass::kServerRetryable:
        return 1;
    case RpcErrorClass::kClient:
    case RpcErrorClass::kOther:
        break;
    }
    return 5;   // the client's own error: a real answer
}

void FanOut::EndedHedge(size_t upstream, std::string_view answer) {
    int rank = HedgeRank(answer);
    if (rank == 5) {
        first_ = std::string(answer);
        first_upstream_ = upstream;
        decided_ = true;
        return;
    }
    if (rank > kept_rank_) {
        kept_ = std::string(answer);
        kept_upstream_ = upstream;
        kept_rank_ = rank;
    }
}

FanOut::Result FanOut::Decide() const {
    Result result;
    auto from = [&](std::string_view answer, std::optional<size_t> upstream) {
        result.answer = answer;
        result.upstream = upstream;
        result.from_hedge =
            upstream && std::find(hedged_.begin(), hedged_.end(),
                                  *upstream) != hedged_.end();
    };
    switch (kind_) {
    case FanOutKind::kBroadcast:
    case FanOutKind::kHedge:
        if (first_upstream_) {
            from(first_, first_upstream_);
        } else if (kept_upstream_) {
            from(kept_, kept_upstream_);
        }
        return result;
    case FanOutKind::kConsensus:
        break;
    case FanOutKind::kNone:
        return result;
    }
    const Vote* leader = Leader();
    if (leader == nullptr) {
        result.consensus = ConsensusOutcome::kFailed;
        return result;
    }
    if (leader->count >= consensus_.agreement) {
        result.consensus = ConsensusOutcome::kAgreed;
        from(leader->answer, leader->upstream);
        return result;
    }
    result.answered = Votes();
    result.consensus = result.answered < consensus_.agreement
                           ? ConsensusOutcome::kLowParticipants
                           : ConsensusOutcome::kDispute;
    if (consensus_.dispute == conf::Consensus::Dispute::kMostCommon) {
        from(leader->answer, leader->upstream);
        return result;
    }
    std::vector<uint32_t> counts;
    for (const Vote& vote : votes_) {
        counts.push_back(vote.count);
    }
    std::sort(counts.begin(), counts.end(), std::greater<uint32_t>());
    for (uint32_t count : counts) {
        if (!result.split.empty()) {
            result.split.push_back('+');
        }
        result.split += std::to_string(count);
    }
    return result;
}

}  // namespace solgate
