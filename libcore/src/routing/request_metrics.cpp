#include "routing/request_metrics.h"

#include "routing/network.h"
#include "routing/upstream_health.h"

namespace solgate {
namespace {

// slot: 9 bits (0-256), method: 8 bits, outcome: 3 bits.
constexpr unsigned kOutcomeBits = 3;
constexpr unsigned kMethodBits = 8;
static_assert(static_cast<unsigned>(RequestOutcome::kCount) <=
              (1u << kOutcomeBits));

uint32_t PackKey(size_t slot, size_t method, RequestOutcome outcome) {
    return static_cast<uint32_t>(
        (slot << (kMethodBits + kOutcomeBits)) | (method << kOutcomeBits) |
        static_cast<uint32_t>(outcome));
}

// A multiplicative hash of the key: neighbouring keys spread out.
size_t Home(uint32_t key) {
    return (static_cast<uint64_t>(key) * 2654435761u) %
           RequestCountTable::kSlots;
}

constexpr size_t kMaxProbes = 64;

static_assert(kMethodClasses == static_cast<size_t>(MethodClass::kCount));
static_assert(kAttemptCauses == static_cast<size_t>(AttemptCause::kCount));

}  // namespace

std::string_view RequestOutcomeName(RequestOutcome outcome) {
    switch (outcome) {
    case RequestOutcome::kOk:
        return "ok";
    case RequestOutcome::kRpcError:
        return "rpc_error";
    case RequestOutcome::kHttpError:
        return "http_error";
    case RequestOutcome::kLocal:
        return "local";
    case RequestOutcome::kClientError:
        return "client_error";
    case RequestOutcome::kClientClosed:
        return "client_closed";
    case RequestOutcome::kCut:
        return "cut";
    case RequestOutcome::kCount:
        break;
    }
    return "ok";
}

void CountRequest(RequestCountTable& table, size_t slot, size_t method,
                  RequestOutcome outcome) {
    uint32_t stored = PackKey(slot, method, outcome) + 1;
    size_t at = Home(stored);
    for (size_t probe = 0; probe < kMaxProbes; probe++) {
        size_t i = (at + probe) % RequestCountTable::kSlots;
        uint32_t key = table.keys[i].load(std::memory_order_acquire);
        if (key == 0 &&
            table.keys[i].compare_exchange_strong(key, stored,
                                                  std::memory_order_acq_rel)) {
            key = stored;
        }
        if (key == stored) {
            table.counts[i].fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }
    table.dropped.fetch_add(1, std::memory_order_relaxed);
}

void ForEachRequestCount(
    const RequestCountTable& table,
    const std::function<void(size_t, size_t, RequestOutcome, uint64_t)>& fn) {
    for (size_t i = 0; i < RequestCountTable::kSlots; i++) {
        uint32_t key = table.keys[i].load(std::memory_order_acquire);
        if (key == 0) {
            continue;
        }
        key -= 1;
        fn(key >> (kMethodBits + kOutcomeBits),
           (key >> kOutcomeBits) & ((1u << kMethodBits) - 1),
           static_cast<RequestOutcome>(key & ((1u << kOutcomeBits) - 1)),
           table.counts[i].load(std::memory_order_relaxed));
    }
}

void ObserveLatency(UpstreamHostRecord& host, MethodClass method_class,
                    uint64_t duration_ms) {
    size_t c = static_cast<size_t>(method_class);
    if (c >= kMethodClasses) {
        return;
    }
    for (size_t b = 0; b < kLatencyBuckets; b++) {
        if (duration_ms <= kLatencyBucketMs[b]) {
            host.latency_buckets[c][b].fetch_add(1, std::memory_order_relaxed);
            break;
        }
    }
    host.latency_count[c].fetch_add(1, std::memory_order_relaxed);
    host.latency_sum_ms[c].fetch_add(duration_ms, std::memory_order_relaxed);
}

std::vector<UpstreamTraffic> UpstreamTrafficOf(const Network& network) {
    std::vector<UpstreamTraffic> traffic(network.size());
    std::vector<UpstreamTraffic*> by_slot(kMaxUpstreams + 1, nullptr);
    for (size_t i = 0; i < network.size(); i++) {
        by_slot[network.RecordIndex(i)] = &traffic[i];
        const UpstreamHostRecord& host = network.host(i);
        for (size_t c = 1; c < kAttemptCauses; c++) {  // 0 is "ok"
            if (c == static_cast<size_t>(AttemptCause::kMinContextSlot)) {
                continue;   // the client's slot, not the node's error
            }
            traffic[i].errors +=
                host.failovers[c].load(std::memory_order_relaxed);
        }
    }
    ForEachRequestCount(
        network.counters().requests,
        [&](size_t slot, size_t, RequestOutcome outcome, uint64_t n) {
            UpstreamTraffic* t = slot < by_slot.size() ? by_slot[slot] : nullptr;
            if (t == nullptr) {
                return;  // Solgate's own answers, or a retired record
            }
            t->requests += n;
            if (outcome == RequestOutcome::kHttpError ||
                outcome == RequestOutcome::kRpcError ||
                outcome == RequestOutcome::kCut) {
                t->errors += n;
            }
        });
    return traffic;
}

void ObserveStoreRoundTrip(NetworkHostCounters& counters, uint64_t us) {
    for (size_t b = 0; b < kRoundTripBuckets; b++) {
        if (us <= kRoundTripBucketUs[b]) {
            counters.store_round_trips[b].fetch_add(1,
                                                    std::memory_order_relaxed);
            break;
        }
    }
    counters.store_round_trip_count.fetch_add(1, std::memory_order_relaxed);
    counters.store_round_trip_sum_us.fetch_add(us, std::memory_order_relaxed);
}

}  // namespace solgate
