// The policies that send one call to several upstreams, and how each one
// decides what the client gets:
//   broadcast  a write to many; the first success, once all have ended;
//   consensus  the same read to N participants; M matching answers win;
//   hedge      a second attempt when the first is slow; the first good
//              answer wins and the others are cancelled.
// A FanOut only decides: RoutedRequest picks the upstreams and the glue
// runs the attempts (and cancels them when told).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/failsafe_args.h"
#include "rpc/rpc_request.h"

namespace solgate {

struct NetworkSettings;

enum class FanOutKind : uint8_t { kNone, kBroadcast, kConsensus, kHedge };

std::string_view FanOutKindName(FanOutKind kind);

// Whether `method` is one of a policy's names or globs.
bool ListsMethod(const std::vector<std::string>& methods,
                 std::string_view method);

// A call whose answer is final: finalized commitment (its own or the
// network's), or a method that reads finalized data at its default
// (getBlock, getTransaction, getBlocks, getBlockTime and their old names).
bool IsFinalizedCall(const RpcCall& call, sg_commitment_t default_commitment);

// Which policies list a method: bits of kFanOutBroadcast, ...
constexpr uint8_t kFanOutBroadcast = 1;
constexpr uint8_t kFanOutConsensus = 2;
constexpr uint8_t kFanOutHedge = 4;
uint8_t FanOutFlagsOf(const NetworkSettings& settings,
                      std::string_view method);
// settings.fan_out_flags for every Solana method (empty without policies).
std::vector<uint8_t> FanOutFlagTable(const NetworkSettings& settings);

// The policy a request falls under: broadcast, then consensus (finalized
// calls only), then hedge (never a write); none for a batch.
FanOutKind ChooseFanOut(const NetworkSettings& settings,
                        const RpcRequest& request);
// The same for one call (of a batch, which goes alone when it has one).
FanOutKind ChooseCallFanOut(const NetworkSettings& settings,
                            const RpcCall& call);

enum class ConsensusOutcome : uint8_t {
    kAgreed,            // M participants gave the same answer
    kDispute,           // enough answered, too few agreed
    kLowParticipants,   // fewer than M answered at all
    kFailed,            // nobody answered
};
std::string_view ConsensusOutcomeName(ConsensusOutcome outcome);

class FanOut {
public:
    FanOut() = default;
    FanOut(FanOutKind kind, const NetworkSettings& settings);

    FanOutKind kind() const { return kind_; }
    // An attempt was started on `upstream` (`hedge`: by the timer).
    void Launched(size_t upstream, bool hedge);
    size_t pending() const { return launched_ - ended_; }
    size_t launched() const { return launched_; }
    // Hedges the timer may still send.
    bool HedgeLeft() const {
        return kind_ == FanOutKind::kHedge && !decided_ &&
               hedges_sent_ < hedge_.max;
    }
    uint32_t hedge_after_ms() const { return hedge_.after_ms; }
    size_t hedges_sent() const { return hedges_sent_; }

    // An attempt ended: `answer` is its whole body when it answered HTTP
    // 200, empty otherwise; a cancelled one ends without a say. Returns
    // whether the answer is decided (the glue cancels the rest, then asks
    // for Result once none is pending).
    bool Ended(size_t upstream, std::string_view answer, bool cancelled);
    bool decided() const { return decided_; }
    // An attempt answered HTTP 200 with no body: a node's answer to a
    // notification (broadcast: it was delivered).
    void NoteEmptyAnswer() { empty_answers_++; }
    size_t empty_answers() const { return empty_answers_; }
    // A hedge with nothing pending and no candidate left: what it has is
    // the answer.
    void Settle() { decided_ = true; }

    struct Result {
        // The body to send byte for byte; empty when there is none (the
        // caller answers its all-failed or dispute error).
        std::string_view answer;
        std::optional<size_t> upstream;   // whose answer it is
        bool from_hedge = false;
        ConsensusOutcome consensus = ConsensusOutcome::kFailed;
        // consensus without agreement: the answers that voted, and "2+1"
        // (answers per distinct vote, most first) for the dispute message
        uint32_t answered = 0;
        std::string split;
    };
    Result Decide() const;

private:
    struct Vote {
        std::string key;
        std::string answer;   // the first answer with this key
        size_t upstream = 0;
        uint32_t count = 0;
    };
    void EndedBroadcast(size_t upstream, std::string_view answer);
    void EndedConsensus(size_t upstream, std::string_view answer);
    void EndedHedge(size_t upstream, std::string_view answer);
    const Vote* Leader() const;
    uint32_t Votes() const;

    FanOutKind kind_ = FanOutKind::kNone;
    conf::Consensus consensus_;
    conf::Hedge hedge_;
    size_t launched_ = 0;
    size_t ended_ = 0;
    size_t hedges_sent_ = 0;
    size_t empty_answers_ = 0;
    bool decided_ = false;
    // upstreams launched by the hedge timer
    std::vector<size_t> hedged_;
    // broadcast: the first success and the first JSON-RPC error; hedge:
    // the winner, else the best other answer (kept_rank_)
    std::string first_;
    std::optional<size_t> first_upstream_;
    std::string kept_;
    std::optional<size_t> kept_upstream_;
    int kept_rank_ = 0;
    std::vector<Vote> votes_;
};

// The answer when a consensus found no agreement (dispute=error):
// kConsensusDispute, with a message naming how the `asked` participants
// split.
std::string ConsensusDisputeAnswer(const RpcRequest& request,
                                   const conf::Consensus& policy,
                                   const FanOut::Result& result, size_t asked);

}  // namespace solgate
