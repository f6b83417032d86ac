// What the client requests of a network did, for the metrics: counts by
// upstream, method and outcome, a latency histogram by upstream and
// method class, and the attempts failed over by cause. All in the
// network's zone (this host's), bounded whatever clients send; relaxed
// atomics, no lock, no allocation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "rpc/solana_methods.h"
#include "slots/shared_state.h"

namespace solgate {

class Network;

enum class RequestOutcome : uint32_t {
    kOk = 0,     // an upstream's answer with a result
    kRpcError,   // an upstream's answer with a JSON-RPC error
    kHttpError,  // an HTTP error status (an upstream's or Solgate's 502)
    kLocal,      // answered by Solgate without an upstream
    // an upstream's JSON-RPC error that is the client's mistake
    // (IsClientMistake): not counted against the upstream
    kClientError,
    // the client closed the connection before its answer (nginx's 499):
    // not counted against the upstream
    kClientClosed,
    // the upstream's answer was cut short after its headers went to the
    // client (too late to fail over): the client got a broken answer
    kCut,
    kCount
};
std::string_view RequestOutcomeName(RequestOutcome outcome);

// The histogram's upper bounds in ms (the last bucket, +Inf, is the count).
constexpr std::array<uint64_t, kLatencyBuckets> kLatencyBucketMs{
    5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000};

// The record slot that stands for "no upstream" (local answers).
constexpr size_t kNoUpstreamSlot = kMaxUpstreams;

// Adds one to (slot, method, outcome); slot is a record index or
// kNoUpstreamSlot, method a SolanaMethodIndex.
void CountRequest(RequestCountTable& table, size_t slot, size_t method,
                  RequestOutcome outcome);

// Every counted key: fn(slot, method, outcome, count).
void ForEachRequestCount(
    const RequestCountTable& table,
    const std::function<void(size_t, size_t, RequestOutcome, uint64_t)>& fn);

void ObserveLatency(UpstreamHostRecord& host, MethodClass method_class,
                    uint64_t duration_ms);

// What an upstream did for clients on this host, as counted so far:
// requests it answered (the last attempt of a request, whatever the
// answer), and errors: those answers that were an HTTP or JSON-RPC error
// (not a client's mistake) or were cut short, plus the attempts on it that
// failed and were retried elsewhere.
struct UpstreamTraffic {
    uint64_t requests = 0;
    uint64_t errors = 0;
};
// One per upstream of the network, in its order (one walk of the table).
std::vector<UpstreamTraffic> UpstreamTrafficOf(const Network& network);

// Fleet mode: one command's round trip to the shared store.
void ObserveStoreRoundTrip(NetworkHostCounters& counters, uint64_t us);

}  // namespace solgate
