// One request body through routing, from the access phase to its last
// failover attempt: the parse, the plan against the network, the upstreams
// tried so far. It lives as long as the nginx request does (across the
// internal redirect to the retry location).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "routing/network.h"
#include "routing/route_plan.h"
#include "routing/router.h"
#include "routing/selector_sources.h"
#include "rpc/rpc_request.h"

namespace solgate {

class RoutedRequest {
public:
    explicit RoutedRequest(RpcRequest parsed) : parsed_(std::move(parsed)) {}

    const RpcRequest& parsed() const { return parsed_; }
    // nullptr before Route.
    const Network* network() const { return network_; }
    const RoutePlan& plan() const { return plan_; }

    // Plans the route against `network` (which must outlive this request)
    // for the selector the sources name, and decides: forward it, or the
    // answer to give here.
    RouteDecision Route(const Network& network, const SelectorSources& sources,
                        int64_t now_ms);

    struct Attempt {
        size_t upstream;
        CandidateTier tier;  // why it was chosen (eligible, backup, ...)
        // Every allowed upstream is cordoned (the pick ignored cordons) and
        // this process has not said so for a while: log it.
        bool warn_all_cordoned;
    };
    // The upstream for the next attempt, never one tried before for this
    // request; nullopt when none is left. Only after Route said forward.
    std::optional<Attempt> NextAttempt(int64_t now_ms);

    struct AttemptEnd {
        unsigned http_status = 0;   // 0: no HTTP answer
        bool timed_out = false;
        bool connected = true;      // the request may have reached the node
        std::string_view retry_after;
        // The whole answer, when the glue holds it before passing it on
        // (small, arrived with its headers); empty otherwise.
        std::string_view answer;
    };
    enum class Retry : uint8_t { kNone, kMissingData, kSkippedSlot };
    struct AttemptReport {
        AttemptOutcome outcome;
        int64_t ejected_ms = 0;     // took the upstream out this long
        // A failed write that may have reached the node: answer
        // WriteNotRetriedAnswer rather than try another upstream.
        bool write_not_retried = false;
        // The node answered, but lacks the data: ask another after
        // retry_delay_ms (the node's health is not touched).
        Retry retry = Retry::kNone;
        uint32_t retry_delay_ms = 0;
        // No upstream is left, and an earlier one's answer was better (a
        // missing-data error before this skipped slot): give up with it.
        bool answer_kept = false;
    };
    // How the current attempt ended (see ClassifyAttempt); updates the
    // upstream's passive health. A single read answered with a JSON-RPC
    // error (AttemptEnd::answer) may go on while a candidate is left:
    // -32005 and the other server-side codes fail over; missing data
    // (-32004, ...) asks up to retry_missing_data's attempts= more
    // upstreams that may hold it; a skipped slot (-32007, -32009) asks each
    // candidate once. The best such answer is kept for GiveUpAnswer.
    AttemptReport Report(const AttemptEnd& end, int64_t now_ms);
    // The request is over: count it (upstream, method, outcome) and, when
    // an upstream answered, its latency. Once; `rpc_error` when the
    // upstream's answer was a JSON-RPC error.
    void Finish(unsigned http_status, bool rpc_error, int64_t duration_ms);

    // The answer for a write_not_retried report.
    std::string WriteNotRetriedAnswer(const AttemptReport& report) const;

    // broadcast: when the request is one call of a broadcast method, the
    // upstreams to send it to at once (best first, at most to=, cordoned
    // ones only when no other is left); empty otherwise. Once, after Route.
    std::vector<size_t> BroadcastTargets(int64_t now_ms);
    // How the attempt on `upstream` ended; whether it was a success (HTTP
    // 200 and a result). The first success is the answer.
    bool ReportBroadcast(size_t upstream, const AttemptEnd& end,
                         int64_t now_ms);
    // The answer once every attempt ended: the first success, else the
    // first JSON-RPC error an upstream answered, else AllFailedAnswer.
    struct Answer {
        unsigned http_status = 200;
        std::string body;
    };
    Answer BroadcastAnswer() const;

    // The upstream of the current attempt, if one was picked.
    std::optional<size_t> upstream() const { return upstream_; }
    size_t attempts() const { return attempts_; }

    // The answer (kAllFailedHttpStatus) when every attempt failed.
    std::string AllFailedAnswer() const;
    // When no attempt is left: the kept missing-data (before skipped-slot)
    // answer, byte for byte, if an upstream gave one; else nullptr (answer
    // AllFailedAnswer).
    const std::string* KeptAnswer() const {
        return kept_rank_ > 0 ? &kept_answer_ : nullptr;
    }
    static std::string_view RetryName(Retry retry);
    // A batch sent upstream in part: the places of the answers in the
    // client's batch (for a BatchMerger per attempt); empty otherwise.
    const std::vector<BatchMerger::Slot>& merge() const { return merge_; }

private:
    Network::PickRequest NextPick(int64_t now_ms) const;
    // Whether NextAttempt would find an upstream (without taking a turn).
    bool AnotherCandidate(int64_t now_ms) const;
    // What a single read's whole error answer asks for (see Report).
    void JudgeAnswer(const AttemptEnd& end, int64_t now_ms,
                     AttemptReport* report);
    void KeepAnswer(std::string_view answer, int rank);

    RpcRequest parsed_;
    const Network* network_ = nullptr;
    RoutePlan plan_;
    // One flag per upstream; inline, so a request costs no allocation for
    // it (kMaxUpstreams bytes).
    std::array<unsigned char, kMaxUpstreams> tried_{};
    std::optional<size_t> upstream_;
    size_t attempts_ = 0;
    bool finished_ = false;
    // Missing-data retries made; the getBlock slot they look for.
    uint32_t data_retries_ = 0;
    std::optional<uint64_t> holding_slot_;
    std::vector<BatchMerger::Slot> merge_;
    std::string broadcast_success_;
    std::string broadcast_error_;
    std::string kept_answer_;
    int kept_rank_ = 0;  // 2: missing data, 1: skipped slot, 0: none
};

}  // namespace solgate
