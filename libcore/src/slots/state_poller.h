// The state poller of the spec, for one upstream (UpstreamPoller) and for
// one network (NetworkPoller, which polls only the upstreams whose lease
// this process holds). Runs on the poller thread; time and HTTP injected.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "routing/network.h"
#include "routing/request_metrics.h"
#include "base/transport.h"

namespace solgate {

// Log levels use nginx's numbering, so the module maps them 1:1.
enum LogLevel : int {
    kLogError = 4,
    kLogWarn = 5,
    kLogNotice = 6,
    kLogInfo = 7,
    kLogDebug = 8
};
using LogSink = std::function<void(int level, const std::string& line)>;

constexpr uint32_t kMaxGateSkips = 4;
constexpr uint32_t kPollTimeoutMs = 2000;
constexpr int64_t kLeaseTtlMs = 2000;
// Ticks come every 400 ms but a timer can fire a millisecond early; without
// slack a 400 ms debounce would skip every other tick.
constexpr int64_t kTickJitterMs = 20;

// The reason text of upstream i's current cordon ("" when none).
std::string CordonReason(const Network& network, size_t i);
// ingestion lag = shred watermark - processed slot; negative reads as 0.
uint64_t IngestionLag(const Network& network, size_t i);

class UpstreamPoller {
public:
    UpstreamPoller(const Network& network, size_t index, Transport& transport,
                   Clock& clock, LogSink log);

    // One tick of the fixed ticker; the caller holds the lease.
    void Tick();
    // Publishes the health verdict: cordons or uncordons on a transition.
    void Evaluate();

private:
    void Call(PollMethod method, std::string body,
              std::function<void(const HttpResult&)> on_reply);
    void CallDone();
    void PollLedgerWindow(int64_t now);
    bool TrafficFresh(int64_t now) const;
    std::string Describe() const;

    const Network& network_;
    size_t index_;
    UpstreamHostRecord& host_;  // this host's schedule and counters
    SlotStore& views_;
    CordonStore& cordons_;
    Transport& transport_;
    Clock& clock_;
    LogSink log_;
    int pending_ = 0;
    std::string health_failure_;   // what the last failed getHealth got
    bool bootstrapped_ = false;
};

class NetworkPoller {
public:
    // Whether this process polls upstream i itself, its lease held (fleet
    // mode: not while another host polls it for the fleet).
    using PollGate = std::function<bool(size_t upstream, int64_t now_ms)>;

    NetworkPoller(const Network& network, Transport& transport, Clock& clock,
                  LogSink log, uint32_t pid);
    ~NetworkPoller();  // gives up its leases so another process takes over

    void SetGate(PollGate gate) { gate_ = std::move(gate); }
    void Tick();

private:
    // Logs upstream i's lag verdict when it changed (the lease holder's).
    void NoteLag(size_t i, uint64_t reference);
    // Adds this tick to upstream i's history for the status page (the
    // lease holder's); the counts are summed once per tick, when a mark
    // needs them.
    void SampleHistory(size_t i, uint64_t reference, int64_t now,
                       std::optional<std::vector<UpstreamTraffic>>& traffic);

    const Network& network_;
    Clock& clock_;
    LogSink log_;
    uint32_t pid_;
    PollGate gate_;
    std::vector<std::unique_ptr<UpstreamPoller>> upstreams_;
};

}  // namespace solgate
