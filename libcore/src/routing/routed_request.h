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

#include "routing/fan_out.h"
#include "routing/network.h"
#include "routing/route_plan.h"
#include "routing/router.h"
#include "routing/selector_sources.h"
#include "rpc/rpc_request.h"

namespace solgate {

class RoutedRequest {
public:
    // An empty request, for Parse: the C API keeps finished requests
    // whole, cleared, and parses the next into one (sg_request_parse), so
    // a warm thread builds and destroys no request and allocates nothing.
    RoutedRequest() = default;
    // By reference, not by value: each is moved once, into its member.
    // The room's plan is taken whole and emptied in place (ResetPlan):
    // cheaper than building an empty plan and moving each vector into it.
    explicit RoutedRequest(RpcRequest&& parsed, RoutePlan&& plan_room = {})
        : parsed_(std::move(parsed)), plan_(std::move(plan_room)) {
        ResetPlan(plan_);
    }

    // `body`, parsed into this request (as new or cleared), in place: its
    // calls' storage is reused.
    void Parse(const char* body, size_t len);
    // Whether the request's storage is small enough to keep for another
    // (a large batch's calls, a long kept answer are let go with it): a
    // thread keeps up to 128 finished requests, so their storage is
    // bounded (kKeptAnswerBytes for each answer a request holds).
    bool WorthKeeping() const;
    static constexpr size_t kKeptAnswerBytes = 4096;
    // Makes the request as RoutedRequest() is, keeping its storage. Every
    // member is reset here, but the route plan, which Route makes anew
    // unless it is the next request's too (RoutePlan::every_upstream_of).
    void Clear();

    const RpcRequest& parsed() const { return parsed_; }
    // nullptr before Route.
    const Network* network() const { return network_; }
    // An empty plan before Route.
    const RoutePlan& plan() const { return routed_ ? plan_ : kNoPlan; }

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
        // retry_missing_data gave up: this answer lacks the data and no
        // upstream is asked again (it, or the kept one, is the client's).
        bool data_given_up = false;
    };
    // How the current attempt ended (see ClassifyAttempt); updates the
    // upstream's passive health. A single read answered with a JSON-RPC
    // error (AttemptEnd::answer) may go on while a candidate is left:
    // -32005 and the other server-side codes fail over; missing data
    // (-32004, ...) asks up to retry_missing_data's attempts= more
    // upstreams that may hold it; a skipped slot (-32007, -32009) asks each
    // candidate once. The best such answer is kept for GiveUpAnswer.
    AttemptReport Report(const AttemptEnd& end, int64_t now_ms);
    // The attempt Report took as answered ended before its answer did (the
    // connection closed or timed out mid-answer, after its status went to
    // the client, so it cannot fail over): a failed attempt for the
    // upstream's health all the same, and counted as cut. Returns how long
    // that took the upstream out of rotation (0: not).
    int64_t ReportCut(int64_t now_ms);
    // The request is over: count it (upstream, method, outcome) and, when
    // an upstream answered, its latency. Once; `rpc_error` when the
    // upstream's answer was a JSON-RPC error, with its code when read (a
    // client's mistake counts apart: IsClientMistake).
    void Finish(unsigned http_status, bool rpc_error,
                std::optional<int64_t> error_code, int64_t duration_ms);

    // The answer for a write_not_retried report.
    std::string WriteNotRetriedAnswer(const AttemptReport& report) const;

    // broadcast, consensus and hedge (fan_out.h): once, after Route said
    // forward, the policy the request falls under and the upstreams of
    // its first attempts, sent at once (kNone: one attempt as usual).
    // Consensus first leaves out upstreams whose finalized slot trails by
    // more than max_finalized_slot_lag.
    struct FanOutStart {
        FanOutKind kind = FanOutKind::kNone;
        std::vector<size_t> targets;
        uint32_t hedge_after_ms = 0;   // hedge: when to send the next
    };
    FanOutStart StartFanOut(int64_t now_ms);
    // Whether a policy takes the request, so StartFanOut is worth asking
    // (most requests: no policy, one attempt).
    bool MayFanOut() const {
        return network_ != nullptr &&
               ChooseFanOut(network_->settings(), parsed_) != FanOutKind::kNone;
    }
    struct FanOutStep {
        bool decided = false;           // cancel the attempts still running
        std::optional<size_t> launch;   // hedge: start this attempt now
    };
    // An attempt of the fan-out ended (end.answer: its whole body), or was
    // cancelled (then it counts nowhere).
    FanOutStep ReportFanOut(size_t upstream, const AttemptEnd& end,
                            bool cancelled, int64_t now_ms);
    // The hedge timer fired: the upstream of the next hedge, if any is
    // left (the timer is set again while HedgeLeft).
    std::optional<size_t> NextHedge(int64_t now_ms);
    bool HedgeLeft() const { return fan_out_ && fan_out_->HedgeLeft(); }
    size_t FanOutPending() const { return fan_out_ ? fan_out_->pending() : 0; }
    struct Answer {
        unsigned http_status = 200;
        std::string body;
    };
    // Once no attempt is pending: the answer (counted in the policy's
    // metrics). Broadcast: the first success, else the first JSON-RPC
    // error, else AllFailedAnswer. Consensus: the agreed answer, else the
    // dispute error (or the most common answer). Hedge: the first good
    // answer, else the best other one.
    Answer FanOutAnswer();

    // The upstream of the current attempt, if one was picked.
    std::optional<size_t> upstream() const { return upstream_; }
    size_t attempts() const { return attempts_; }

    // The answer when every attempt failed: kAllFailedHttpStatus, unless
    // it is a batch's that carries a result answered here (the genesis
    // hash, ...): then 200, as the client's other calls were answered (a
    // client drops the body of an HTTP error, and those results with it).
    Answer AllFailed() const;
    // Its body.
    std::string AllFailedAnswer() const;
    // A piece of a batch that ended with an HTTP error no failover took
    // (an upstream's 403, an error page of nginx's), or (0) whose upstream
    // answered 200 with nothing: its calls' errors, for their places in the
    // client's array (which answers HTTP 200).
    std::string StatusAnswer(unsigned http_status) const;
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
    // A batch that goes call by call: its pieces, in order (router.h);
    // empty otherwise.
    const std::vector<BatchPiece>& pieces() const { return pieces_; }
    // Before Route: this request is a run of calls cut from a client's
    // batch (RouteOptions::run).
    void SetRun() { run_ = true; }
    bool run() const { return run_; }

private:
    Network::PickRequest NextPick(int64_t now_ms) const;
    // Whether NextAttempt would find an upstream (without taking a turn).
    bool AnotherCandidate(int64_t now_ms) const;
    // What a single read's whole error answer asks for (see Report).
    void JudgeAnswer(const AttemptEnd& end, int64_t now_ms,
                     AttemptReport* report);
    void KeepAnswer(std::string_view answer, int rank);
    std::string MergedFailAnswer(std::string_view message) const;
    // Marks upstreams a consensus must not ask (max_finalized_slot_lag).
    void LeaveOutTrailingFinalized();
    // Up to `want` upstreams for attempts at once, best first; cordoned
    // ones only when no other is left.
    std::vector<size_t> TakeTargets(size_t want, int64_t now_ms);

    RpcRequest parsed_;
    const Network* network_ = nullptr;
    RoutePlan plan_;
    bool routed_ = false;   // plan_ is this request's
    static const RoutePlan kNoPlan;
    // One flag per upstream; inline, so a request costs no allocation for
    // it (kMaxUpstreams bytes).
    std::array<unsigned char, kMaxUpstreams> tried_{};
    std::optional<size_t> upstream_;
    FailureRun answer_run_;              // the last success's, for ReportCut
    bool answered_ = false;              // the last Report was a success
    bool cut_ = false;                   // ReportCut: that answer was cut
    size_t attempts_ = 0;
    bool finished_ = false;
    // Missing-data retries made; the getBlock slot they look for.
    uint32_t data_retries_ = 0;
    std::optional<uint64_t> holding_slot_;
    // Route hands its storage to RouteRequest for a batch's merge.
    std::vector<BatchMerger::Slot> merge_;
    std::vector<BatchPiece> pieces_;
    bool run_ = false;
    // Made when a policy takes the request (or on first use): most
    // requests have none, and an idle FanOut (its vectors and strings)
    // cost a construction and a destruction each. An empty one reads as a
    // default FanOut would (kind kNone, nothing pending, no hedge left).
    std::optional<FanOut> fan_out_;
    FanOut& fan_out() {
        if (!fan_out_) {
            fan_out_.emplace();
        }
        return *fan_out_;
    }
    std::string kept_answer_;
    int kept_rank_ = 0;  // 2: missing data, 1: skipped slot, 0: none
};

}  // namespace solgate
