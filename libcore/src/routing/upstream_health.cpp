#include "routing/upstream_health.h"

#include <algorithm>
#include <array>
#include <functional>

namespace solgate {
namespace {

constexpr uint32_t kShareOne = 65536;

// One step of a moving average: old + (sample - old) / 8.
uint32_t Step(uint32_t old, uint32_t sample) {
    return static_cast<uint32_t>(int64_t{old} +
                                 (int64_t{sample} - int64_t{old}) / 8);
}

// The latency average: the first sample is taken as it is, and it never
// falls to 0 (which means "no sample yet").
uint32_t Ewma(uint32_t old, uint32_t sample) {
    return old == 0 ? sample : std::max<uint32_t>(Step(old, sample), 1);
}

void RecordFailureShare(UpstreamHostRecord& host, bool failed) {
    uint32_t old = host.failure_ewma.load(std::memory_order_relaxed);
    host.failure_ewma.store(Step(old, failed ? kShareOne : 0),
                            std::memory_order_relaxed);
}

}  // namespace

uint64_t LagReference(uint64_t* heads, size_t n) {
    // A request's group is a handful of upstreams: sorted by insertion as
    // they are compacted, they cost a fifth of std::remove and
    // std::nth_element, whose set-up outweighs a few comparisons. A large
    // group keeps nth_element's linear time.
    constexpr size_t kSortedInPlace = 8;
    if (n <= kSortedInPlace) {
        size_t live = 0;
        for (size_t k = 0; k < n; k++) {
            uint64_t head = heads[k];
            if (head == 0) {
                continue;
            }
            size_t at = live++;
            for (; at > 0 && heads[at - 1] < head; at--) {
                heads[at] = heads[at - 1];
            }
            heads[at] = head;
        }
        return live == 0 ? 0 : heads[(live - 1) / 2];
    }
    uint64_t* end = std::remove(heads, heads + n, uint64_t{0});
    size_t live = static_cast<size_t>(end - heads);
    if (live == 0) {
        return 0;
    }
    // highest first; the upper median is at (live - 1) / 2
    uint64_t* at = heads + (live - 1) / 2;
    std::nth_element(heads, at, end, std::greater<uint64_t>());
    return *at;
}

std::string_view AttemptCauseName(AttemptCause cause) {
    static constexpr std::array<std::string_view,
                                static_cast<size_t>(AttemptCause::kCount)>
        kNames{"ok",       "transport", "timeout",          "http_429",
               "http_5xx", "node_behind", "min_context_slot"};
    size_t i = static_cast<size_t>(cause);
    return i < kNames.size() ? kNames[i] : "other";
}

AttemptOutcome ClassifyAttempt(unsigned http_status, bool timed_out,
                               std::string_view retry_after) {
    AttemptOutcome outcome;
    switch (http_status) {
    case 0:
        outcome.cause =
            timed_out ? AttemptCause::kTimeout : AttemptCause::kTransport;
        break;
    case 429: {
        outcome.cause = AttemptCause::kRateLimited;
        uint64_t seconds = 0;
        bool digits = !retry_after.empty() && retry_after.size() <= 9;
        for (char c : retry_after) {
            digits = digits && c >= '0' && c <= '9';
            seconds = seconds * 10 + static_cast<uint64_t>(c - '0');
        }
        if (digits) {
            outcome.retry_after_ms = static_cast<uint32_t>(
                std::min<uint64_t>(seconds * 1000, kMaxRetryAfterMs));
        }
        break;
    }
    case 500:
    case 502:
    case 503:
    case 504:
        outcome.cause = AttemptCause::kHttpError;
        break;
    default:
        break;
    }
    return outcome;
}

int64_t RecordAttempt(UpstreamHostRecord& host,
                      const conf::UpstreamRouting& routing,
                      const AttemptOutcome& outcome, int64_t now_ms,
                      FailureRun* run) {
    if (!outcome.health) {
        return 0;
    }
    bool failed = outcome.cause != AttemptCause::kOk;
    RecordFailureShare(host, failed);
    if (!failed) {
        uint32_t fails =
            host.consecutive_fails.exchange(0, std::memory_order_relaxed);
        uint32_t resets =
            host.run_resets.fetch_add(1, std::memory_order_relaxed) + 1;
        if (run != nullptr) {
            *run = FailureRun{fails, resets};
        }
        return 0;
    }
    uint32_t run_length =
        host.consecutive_fails.fetch_add(1, std::memory_order_relaxed) + 1;
    int64_t until = 0;
    if (outcome.retry_after_ms > 0) {
        until = now_ms + std::min(outcome.retry_after_ms, kMaxRetryAfterMs);
    }
    if (routing.max_fails > 0 && run_length >= routing.max_fails) {
        until = std::max(until, now_ms + int64_t{routing.fail_timeout_ms});
    }
    if (until == 0) {
        return 0;
    }
    int64_t before = host.ejected_until_ms.load(std::memory_order_relaxed);
    host.eject_cause.store(static_cast<uint32_t>(outcome.cause),
                           std::memory_order_relaxed);
    host.ejected_until_ms.store(std::max(before, until),
                                std::memory_order_relaxed);
    host.consecutive_fails.store(0, std::memory_order_relaxed);
    host.run_resets.fetch_add(1, std::memory_order_relaxed);
    if (before > now_ms) {
        return 0;  // already out: extended, not a new ejection
    }
    host.ejections.fetch_add(1, std::memory_order_relaxed);
    return until - now_ms;
}

void RecordPoll(UpstreamHostRecord& host, bool ok, uint32_t latency_ms) {
    RecordFailureShare(host, !ok);
    if (ok) {
        uint32_t us = std::max<uint32_t>(latency_ms, 1) * 1000;
        host.latency_ewma_us.store(
            Ewma(host.latency_ewma_us.load(std::memory_order_relaxed), us),
            std::memory_order_relaxed);
    }
}

double UpstreamCost(const UpstreamHostRecord& host, uint64_t lag,
                    uint64_t max_slot_lag) {
    double latency = std::max(
        host.latency_ewma_us.load(std::memory_order_relaxed), kLatencyFloorUs);
    double failures =
        host.failure_ewma.load(std::memory_order_relaxed) / double{kShareOne};
    double cost = latency * (1.0 + 8.0 * failures);
    if (max_slot_lag > 0 && lag > max_slot_lag / 2) {
        cost *= 1.0 + double(lag - max_slot_lag / 2) / double(max_slot_lag);
    }
    return cost;
}

}  // namespace solgate
