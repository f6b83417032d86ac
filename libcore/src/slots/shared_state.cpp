#include "slots/shared_state.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <thread>

namespace solgate {

static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "shared counters must be lock-free to work across processes");
static_assert(std::is_standard_layout_v<NetworkShared>);

std::string_view PollMethodName(PollMethod method) {
    static constexpr std::array<std::string_view, kPollMethodCount> kNames{
        "getHealth", "getSlot_processed", "getSlot_finalized",
        "getMaxShredInsertSlot", "getGenesisHash", "getFirstAvailableBlock"};
    return method < kPollMethodCount ? kNames[method] : "";
}

std::string_view LaneAxisName(LaneAxis axis) {
    return axis == kAxisProcessed ? "processed" : "finalized";
}

std::string_view CordonCauseName(CordonCause cause) {
    switch (cause) {
    case CordonCause::kNone: return "";
    case CordonCause::kUnhealthy: return "unhealthy";
    case CordonCause::kShredLag: return "shred_lag";
    case CordonCause::kGenesis: return "genesis";
    case CordonCause::kOperator: return "operator";
    }
    return "";
}

template <size_t kCapacity>
void SharedTextOf<kCapacity>::Write(std::string_view value) {
    // One writer at a time: a poller thread (the state poller's notes, a
    // cordon the fleet reported) and the admin endpoint may write at once.
    // A writer makes the version odd by CAS; one that died mid-write
    // leaves it odd, and after a bounded wait the next writer takes over.
    uint32_t v = version.load(std::memory_order_relaxed);
    auto give_up = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(kTextWriterWaitMs);
    for (uint32_t spins = 0;; spins++) {
        if ((v & 1u) != 0 &&
            ((spins & 255u) != 0 ||
             std::chrono::steady_clock::now() < give_up)) {
            std::this_thread::yield();
            v = version.load(std::memory_order_relaxed);
            continue;
        }
        uint32_t mine = (v & 1u) != 0 ? v + 2 : v + 1;   // odd
        if (version.compare_exchange_weak(v, mine, std::memory_order_acquire,
                                          std::memory_order_relaxed)) {
            v = mine;
            break;
        }
    }
    std::atomic_thread_fence(std::memory_order_release);
    size_t n = std::min(value.size(), kCapacity - 1);
    // never cut a UTF-8 sequence in two
    while (n > 0 && n < value.size() &&
           (static_cast<unsigned char>(value[n]) & 0xc0) == 0x80) {
        n--;
    }
    std::memcpy(text, value.data(), n);
    text[n] = '\0';
    // A writer taken over (it was slow, not dead) publishes nothing: the
    // one that took over publishes its own text.
    version.compare_exchange_strong(v, v + 1, std::memory_order_release,
                                    std::memory_order_relaxed);
}

template <size_t kCapacity>
std::string SharedTextOf<kCapacity>::Read() const {
    // A writer that died mid-write leaves the version odd: give up after a
    // bounded number of tries rather than spin forever.
    for (int attempt = 0; attempt < 100; attempt++) {
        uint32_t before = version.load(std::memory_order_acquire);
        if (before & 1u) {
            continue;
        }
        char copy[kCapacity];
        std::memcpy(copy, text, sizeof(copy));
        std::atomic_thread_fence(std::memory_order_acquire);
        if (version.load(std::memory_order_relaxed) == before) {
            copy[kCapacity - 1] = '\0';
            return copy;
        }
    }
    return "";
}

template struct SharedTextOf<kReasonCapacity>;
template struct SharedTextOf<kIdCapacity>;

bool SuggestSlot(std::atomic<uint64_t>& view, uint64_t value,
                 std::atomic<uint64_t>& large_rollbacks) {
    if (value == 0) {
        return false;
    }
    uint64_t current = view.load(std::memory_order_relaxed);
    for (;;) {
        if (value == current) {
            return false;
        }
        bool rollback = value < current;
        if (rollback && current - value <= kToleratedSlotRollback) {
            return false;
        }
        if (view.compare_exchange_weak(current, value,
                                       std::memory_order_acq_rel)) {
            if (rollback) {
                large_rollbacks.fetch_add(1, std::memory_order_relaxed);
            }
            return true;
        }
    }
}

bool UpstreamRecord::SuggestProcessed(uint64_t value) {
    return SuggestSlot(processed, value, host.large_rollbacks);
}

bool UpstreamRecord::SuggestFinalized(uint64_t value) {
    return SuggestSlot(finalized, value, host.large_rollbacks);
}

bool UpstreamRecord::SuggestShred(uint64_t value) {
    return SuggestSlot(shred, value, host.large_rollbacks);
}

// owner: bits 56-63, cause: bits 48-55, since: bits 0-47 (ms, ~8900 years)
static uint64_t PackCordon(const CordonState& s) {
    return (static_cast<uint64_t>(s.owner) << 56) |
           (static_cast<uint64_t>(s.cause) << 48) |
           (static_cast<uint64_t>(s.since_wall_ms) & ((1ULL << 48) - 1));
}

static CordonState UnpackCordon(uint64_t word) {
    CordonState s;
    s.owner = static_cast<CordonOwner>(word >> 56);
    s.cause = static_cast<CordonCause>((word >> 48) & 0xff);
    s.since_wall_ms = static_cast<int64_t>(word & ((1ULL << 48) - 1));
    return s;
}

CordonState UpstreamRecord::Cordon() const {
    return UnpackCordon(cordon.load(std::memory_order_acquire));
}

bool UpstreamRecord::SwapCordon(CordonOwner expected, const CordonState& next) {
    uint64_t current = cordon.load(std::memory_order_acquire);
    for (;;) {
        if (UnpackCordon(current).owner != expected) {
            return false;
        }
        if (cordon.compare_exchange_weak(current, PackCordon(next),
                                         std::memory_order_acq_rel)) {
            return true;
        }
    }
}

void UpstreamRecord::Reset(std::string_view new_id) {
    // Only the master touches a record being (re)bound, before workers
    // fork or while the record is free: plain stores are enough.
    processed.store(0);
    finalized.store(0);
    shred.store(0);
    observed_processed.store(0);
    processed_seen_ms.store(0);
    finalized_seen_ms.store(0);
    health.store(static_cast<uint32_t>(HealthOutcome::kUnknown));
    genesis.store(static_cast<uint32_t>(GenesisCheck::kUnchecked));
    cordon.store(0);
    cordon_lag.store(0);
    first_available_plus1.store(0);
    cordon_note.Write("");
    operator_change_ms.store(0);
    lease.store(0);
    host.last_fanout_ms.store(0);
    host.gate_skips.store(0);
    host.slot_polls_failing.store(0);
    host.first_available_polled_ms.store(0);
    host.large_rollbacks.store(0);
    host.cordon_events.store(0);
    for (size_t m = 0; m < kPollMethodCount; m++) {
        host.polls[m].store(0);
        host.poll_errors[m].store(0);
    }
    host.gate_skipped_ticks.store(0);
    host.harvested.store(0);
    host.latency_ewma_us.store(0);
    host.polled_by.Write("");
    host.failure_ewma.store(0);
    host.consecutive_fails.store(0);
    host.run_resets.store(0);
    host.ejected_until_ms.store(0);
    host.eject_cause.store(0);
    host.lagging.store(0);
    host.ejections.store(0);
    for (size_t c = 0; c < kMethodClasses; c++) {
        for (size_t b = 0; b < kLatencyBuckets; b++) {
            host.latency_buckets[c][b].store(0);
        }
        host.latency_count[c].store(0);
        host.latency_sum_ms[c].store(0);
    }
    for (size_t c = 0; c < kAttemptCauses; c++) {
        host.failovers[c].store(0);
    }
    host.cut_answers.store(0);
    host.ws_drain_until_ms.store(0);   // the last id's drain is not this one's
    for (auto& count : host.broadcasts) {
        count.store(0);
    }
    // a record given to another id must not show the last one's history
    for (auto& sample : host.history.lags) {
        sample.store(0);
    }
    for (size_t k = 0; k < kRateMarks; k++) {
        host.history.requests[k].store(0);
        host.history.errors[k].store(0);
    }
    size_t n = std::min(new_id.size(), kIdCapacity - 1);
    std::memcpy(id, new_id.data(), n);
    id[n] = '\0';
    use.store(kBound);
}

// pid: bits 40-63 (24 bits), expires: bits 0-39 (ms of uptime, ~34 years)
Lease Lease::Unpack(uint64_t word) {
    Lease l;
    l.pid = static_cast<uint32_t>(word >> 40);
    l.expires_ms = static_cast<int64_t>(word & ((1ULL << 40) - 1));
    return l;
}

uint64_t Lease::Pack() const {
    return (static_cast<uint64_t>(pid & 0xffffff) << 40) |
           (static_cast<uint64_t>(expires_ms) & ((1ULL << 40) - 1));
}

bool ClaimLease(std::atomic<uint64_t>& word, uint32_t pid, int64_t now_ms,
                int64_t ttl_ms) {
    uint64_t current = word.load(std::memory_order_acquire);
    Lease next{pid & 0xffffff, now_ms + ttl_ms};
    for (;;) {
        Lease held = Lease::Unpack(current);
        bool mine = held.pid == (pid & 0xffffff);
        if (!mine && held.HeldAt(now_ms)) {
            return false;
        }
        if (word.compare_exchange_weak(current, next.Pack(),
                                       std::memory_order_acq_rel)) {
            return true;
        }
    }
}

void ReleaseLease(std::atomic<uint64_t>& word, uint32_t pid) {
    uint64_t current = word.load(std::memory_order_acquire);
    if (Lease::Unpack(current).pid == (pid & 0xffffff)) {
        word.compare_exchange_strong(current, 0, std::memory_order_acq_rel);
    }
}

}  // namespace solgate
