// What routing weighs an upstream by besides its cordon: how far it trails
// its group (max_slot_lag), whether recent failures ejected it for a while
// (max_fails, fail_timeout, a 429's Retry-After), and its cost, from the
// latency of its recent polls and its recent failure share. The figures
// live in the upstream's host record, so every worker of the host sees the
// same; every update is a relaxed atomic, never a lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "conf/upstream_args.h"
#include "slots/shared_state.h"

namespace solgate {

// The slot a group's members are measured against: the upper median of
// their known processed views (the higher of two, the middle of three), so
// one node stalled or far ahead cannot move it. Reorders `heads`.
uint64_t LagReference(uint64_t* heads, size_t n);

// How far `observed` trails `reference`; 0 when unknown or ahead.
inline uint64_t SlotLag(uint64_t reference, uint64_t observed) {
    return observed == 0 || observed >= reference ? 0 : reference - observed;
}

inline bool Lagging(uint64_t lag, uint64_t max_slot_lag) {
    return max_slot_lag > 0 && lag > max_slot_lag;
}

// Why an attempt on an upstream failed (or kOk).
enum class AttemptCause : uint32_t {
    kOk = 0,
    kTransport,     // no HTTP answer: refused, reset, DNS
    kTimeout,       // no answer in time
    kRateLimited,   // HTTP 429
    kHttpError,     // HTTP 500, 502, 503 or 504
    kNodeBehind,    // a read answered -32005: the node says it is behind
    // a read answered -32016: the node has not reached the call's
    // minContextSlot, which the client chose (never the node's failure)
    kMinContextSlot,
    kCount
};
// "ok", "transport", "timeout", "http_429", "http_5xx", "node_behind",
// "min_context_slot": metric labels.
std::string_view AttemptCauseName(AttemptCause cause);

// The longest Retry-After honoured.
constexpr uint32_t kMaxRetryAfterMs = 60000;

struct AttemptOutcome {
    AttemptCause cause = AttemptCause::kOk;
    uint32_t retry_after_ms = 0;   // a 429's Retry-After, 0 when none
    // false: the answer reflects what the client asked (a minContextSlot
    // the node has not reached), not the node's health: failed over, but
    // neither a failure towards max_fails nor one in its failure share
    bool health = true;
};

// What an attempt's answer means: status 0 is no HTTP answer (a timeout
// when timed_out); 429 asks to wait for Retry-After (delta-seconds; an
// HTTP-date or nonsense counts as none); 500, 502, 503 and 504 are the
// node failing; anything else is an answer.
AttemptOutcome ClassifyAttempt(unsigned http_status, bool timed_out,
                               std::string_view retry_after);

// One client attempt's outcome: a success clears the failure run; the
// max_fails-th failure in a row ejects the upstream for fail_timeout, and a
// Retry-After for as long as it asks (up to kMaxRetryAfterMs); an outcome
// that says nothing of its health changes nothing. Returns for how many ms
// this attempt ejected it (0: it did not, or it was out).
//
// `run`, when given, is set by a success (the only attempt a cut answer
// can follow): the failure run it ended and the host's reset count it
// left, each read by the atomic operation that changed it, so another
// worker's report in between is never taken for this one's
// (RoutedRequest::ReportCut takes the success back only while no other
// answer has ended the run since).
struct FailureRun {
    uint32_t fails_before = 0;   // consecutive_fails before this attempt
    uint32_t resets_after = 0;   // run_resets after it
};
int64_t RecordAttempt(UpstreamHostRecord& host,
                      const conf::UpstreamRouting& routing,
                      const AttemptOutcome& outcome, int64_t now_ms,
                      FailureRun* run = nullptr);

// One poll's round trip (failed polls count as failures, not latency).
void RecordPoll(UpstreamHostRecord& host, bool ok, uint32_t latency_ms);

inline bool Ejected(const UpstreamHostRecord& host, int64_t now_ms) {
    return host.ejected_until_ms.load(std::memory_order_relaxed) > now_ms;
}

// Latencies below this count as equal, so loopback jitter never breaks
// the turn of equal upstreams.
constexpr uint32_t kLatencyFloorUs = 5000;

// The relative cost of one request to the upstream: its latency (floored)
// times 1 + 8 x its failure share, times 1 + the part of its slot lag above
// half of max_slot_lag, over max_slot_lag.
double UpstreamCost(const UpstreamHostRecord& host, uint64_t lag,
                    uint64_t max_slot_lag);

}  // namespace solgate
