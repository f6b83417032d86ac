#include "slots/state_poller.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "base/tls_failure.h"
#include "routing/request_metrics.h"
#include "rpc/cluster.h"
#include "slots/poll_reply.h"
#include "slots/upstream_history.h"

namespace solgate {
namespace {

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

std::string Format(const char* fmt, ...) {
    char buf[512];
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, args);
    va_end(args);
    if (n < 0) {
        return "";
    }
    return std::string(buf, std::min(static_cast<size_t>(n), sizeof(buf) - 1));
}

// The tls_* option that is not set where the failure suggests it (the
// issuer is unknown, the name differs, no client certificate was sent),
// as " (tls_... not set)"; "" otherwise.
std::string_view TlsHint(const HttpResult& r, const UpstreamConf& u) {
    auto says = [&r](const char* part) {
        return r.error_text.find(part) != std::string::npos;
    };
    switch (TlsProblemOf(r)) {
    case TlsProblem::kServerCertificate:
        if ((says("issuer") || says("self-signed") || says("self signed")) &&
            u.poll.tls.trusted_pem.empty()) {
            return " (tls_trusted_certificate not set)";
        }
        if (says("target host name") && u.tls_name.empty()) {
            return " (tls_name not set)";
        }
        return "";
    case TlsProblem::kClientCertificate:
        return u.poll.tls.certificate_pem.empty()
                   ? " (tls_certificate not set)"
                   : "";
    default:
        return "";
    }
}

// What went wrong with a poll, for the log and the cordon reason: a TLS
// failure as "TLS: ...", the transport error, the HTTP status, or the
// start of the JSON-RPC answer.
std::string DescribeFailure(const HttpResult& r, const UpstreamConf& u) {
    std::string why = HttpFailure(r);
    if (why.empty()) {
        why = "HTTP 200: " + Excerpt(r.body);
    }
    return why + std::string(TlsHint(r, u));
}

constexpr const char* kRecoveredReason =
    "svm state poller: getHealth ok and shred-insert lag back within "
    "threshold";

}  // namespace

uint64_t IngestionLag(const Network& network, size_t i) {
    uint64_t shred = network.slots().View(i, kSlotShred);
    uint64_t processed = network.slots().View(i, kSlotProcessed);
    return shred > processed && processed > 0 ? shred - processed : 0;
}

std::string CordonReason(const Network& network, size_t i) {
    const CordonStore& cordons = network.cordons();
    switch (cordons.Cordon(i).cause) {
    case CordonCause::kNone:
        return "";
    case CordonCause::kUnhealthy: {
        std::string note = cordons.CordonNote(i);
        return note.empty() ? "svm state poller: getHealth reported unhealthy"
                            : note;
    }
    case CordonCause::kShredLag:
        return Format("svm state poller: shred-insert lag %llu slots exceeds "
                      "threshold %llu (node ingests shreds but does not "
                      "replay them)",
                      static_cast<unsigned long long>(cordons.CordonLag(i)),
                      static_cast<unsigned long long>(kMaxShredInsertSlotLag));
    case CordonCause::kGenesis:
    case CordonCause::kOperator:
        return cordons.CordonNote(i);
    }
    return "";
}

UpstreamPoller::UpstreamPoller(const Network& network, size_t index,
                               Transport& transport, Clock& clock, LogSink log)
    : network_(network),
      index_(index),
      host_(network.host(index)),
      views_(network.slots()),
      cordons_(network.cordons()),
      transport_(transport),
      clock_(clock),
      log_(std::move(log)) {}

std::string UpstreamPoller::Describe() const {
    return "network=" + network_.name() +
           " upstream=" + network_.upstream(index_).id;
}

bool UpstreamPoller::TrafficFresh(int64_t now) const {
    auto fresh = [&](SlotAxis axis) {
        int64_t t = views_.TrafficSeenMs(index_, axis);
        return t > 0 && now - t < network_.DebounceOf(index_);
    };
    return fresh(kSlotProcessed) && fresh(kSlotFinalized);
}

void UpstreamPoller::Tick() {
    if (pending_ > 0) {
        return;  // the previous fan-out is still out
    }
    int64_t now = clock_.MonotonicMs();
    int64_t last = host_.last_fanout_ms.load(std::memory_order_relaxed);
    if (last != 0 && now - last + kTickJitterMs < network_.DebounceOf(index_)) {
        return;  // inside the debounce window: no RPC at all
    }
    if (!bootstrapped_) {
        bootstrapped_ = true;
        log_(kLogDebug, Format("bootstrapping svm state poller: %s "
                               "tickInterval=%ums debounce=%ums",
                               Describe().c_str(), kPollIntervalMs,
                               network_.DebounceOf(index_)));
    }
    host_.last_fanout_ms.store(now, std::memory_order_relaxed);

    pending_ = 1;  // held until every call below is issued
    Call(kPollGetHealth, RequestBody("getHealth"), [this](const HttpResult& r) {
        bool healthy = ReplyHealthy(r);
        if (!healthy) {
            health_failure_ = DescribeFailure(r, network_.upstream(index_));
        }
        HealthOutcome before = views_.ExchangeHealth(
            index_, healthy ? HealthOutcome::kOk : HealthOutcome::kFailed);
        if (!healthy && before != HealthOutcome::kFailed) {
            log_(kLogWarn, Format("svm state poller: getHealth failed: %s %s",
                                  Describe().c_str(),
                                  health_failure_.c_str()));
        }
    });
    Call(kPollGetMaxShredInsertSlot, RequestBody("getMaxShredInsertSlot"),
         [this](const HttpResult& r) {
             if (auto v = ReplyU64(r)) {
                 views_.Suggest(index_, kSlotShred, *v);
             }
         });

    // Live traffic that keeps both views fresh stands in for the two
    // getSlot calls, at most kMaxGateSkips ticks in a row.
    if (TrafficFresh(now) && host_.gate_skips.load() < kMaxGateSkips) {
        host_.gate_skips.fetch_add(1);
        host_.gate_skipped_ticks.fetch_add(1);
        // its answers keep its slots current, whatever a poll last found
        host_.slot_polls_failing.store(0, std::memory_order_relaxed);
    } else {
        host_.gate_skips.store(0);
        Call(kPollGetSlotProcessed,
             RequestBody("getSlot", "[{\"commitment\":\"processed\"}]"),
             [this](const HttpResult& r) {
                 auto v = ReplyU64(r);
                 host_.slot_polls_failing.store(v ? 0 : 1,
                                                std::memory_order_relaxed);
                 if (v) {
                     views_.Suggest(index_, kSlotProcessed, *v);
                     views_.Observe(index_, *v);
                 }
             });
        Call(kPollGetSlotFinalized,
             RequestBody("getSlot", "[{\"commitment\":\"finalized\"}]"),
             [this](const HttpResult& r) {
                 if (auto v = ReplyU64(r)) {
                     views_.Suggest(index_, kSlotFinalized, *v);
                 }
             });
    }

    PollLedgerWindow(now);

    std::string_view expected = GenesisHash(network_.settings().cluster);
    if (!expected.empty() &&
        views_.Genesis(index_) == GenesisCheck::kUnchecked) {
        Call(kPollGetGenesisHash, RequestBody("getGenesisHash"),
             [this, expected](const HttpResult& r) {
                 auto hash = ReplyString(r);
                 if (!hash) {
                     return;  // asked again at the next fan-out
                 }
                 if (*hash == expected) {
                     views_.SetGenesis(index_, GenesisCheck::kMatches);
                     return;
                 }
                 cordons_.SetCordonNote(index_, Format(
                     "svm state poller: genesis hash %s is not %s's (%s)",
                     hash->c_str(),
                     std::string(ClusterName(network_.settings().cluster)).c_str(),
                     std::string(expected).c_str()));
                 views_.SetGenesis(index_, GenesisCheck::kDiffers);
             });
    }
    CallDone();
}

void UpstreamPoller::PollLedgerWindow(int64_t now) {
    if (!network_.settings().track_ledger_window) {
        return;
    }
    int64_t last = host_.first_available_polled_ms.load();
    if (last != 0 && now - last < kFirstAvailablePollMs) {
        return;
    }
    host_.first_available_polled_ms.store(now);
    Call(kPollGetFirstAvailableBlock, RequestBody("getFirstAvailableBlock"),
         [this, now](const HttpResult& r) {
             if (auto v = ReplyU64(r)) {
                 views_.SetFirstAvailable(index_, *v);
             } else {
                 // asked again in kFirstAvailableRetryMs, not every tick
                 host_.first_available_polled_ms.store(
                     now - kFirstAvailablePollMs + kFirstAvailableRetryMs);
             }
         });
}

void UpstreamPoller::Call(PollMethod method, std::string body,
                          std::function<void(const HttpResult&)> on_reply) {
    pending_++;
    host_.polls[method].fetch_add(1, std::memory_order_relaxed);
    int64_t sent_ms = clock_.MonotonicMs();
    transport_.Post(network_.upstream(index_).poll, std::move(body),
                    kPollTimeoutMs,
                    [this, method, on_reply, sent_ms](HttpResult reply) {
                        bool ok = reply.transport_error == 0 &&
                                  reply.http_status == 200;
                        if (!ok) {
                            host_.poll_errors[method].fetch_add(1);
                        }
                        int64_t took = clock_.MonotonicMs() - sent_ms;
                        RecordPoll(host_, ok,
                                   static_cast<uint32_t>(std::clamp<int64_t>(
                                       took, 0, kPollTimeoutMs)));
                        on_reply(reply);
                        CallDone();
                    });
}

void UpstreamPoller::CallDone() {
    if (--pending_ == 0) {
        Evaluate();
    }
}

void UpstreamPoller::Evaluate() {
    uint64_t lag = IngestionLag(network_, index_);
    bool health_failed = views_.Health(index_) == HealthOutcome::kFailed;
    bool genesis_differs = views_.Genesis(index_) == GenesisCheck::kDiffers;
    bool lagging = lag > kMaxShredInsertSlotLag;
    CordonState current = cordons_.Cordon(index_);

    if (health_failed || lagging || genesis_differs) {
        if (current.owner != CordonOwner::kNone) {
            return;  // edge-triggered: already out of rotation
        }
        CordonCause cause = genesis_differs ? CordonCause::kGenesis
                            : health_failed ? CordonCause::kUnhealthy
                                            : CordonCause::kShredLag;
        cordons_.SetCordonLag(index_, lag);
        if (cause == CordonCause::kUnhealthy) {
            // the real cause: a transport error, an HTTP status, a timeout
            // or the node's own answer
            cordons_.SetCordonNote(index_, "svm state poller: getHealth failed: " +
                                               health_failure_);
        }
        if (!cordons_.SwapCordon(index_, CordonOwner::kNone,
                              {CordonOwner::kPoller, cause, clock_.WallMs()})) {
            return;  // an operator got there first
        }
        host_.cordon_events.fetch_add(1);
        log_(kLogWarn,
             Format("svm upstream unhealthy; cordoning out of rotation: %s "
                    "shredInsertSlot=%llu shredInsertSlotLag=%llu "
                    "latestSlot=%llu reason=\"%s\"",
                    Describe().c_str(),
                    static_cast<unsigned long long>(
                        views_.View(index_, kSlotShred)),
                    static_cast<unsigned long long>(lag),
                    static_cast<unsigned long long>(
                        views_.View(index_, kSlotProcessed)),
                    CordonReason(network_, index_).c_str()));
        return;
    }

    // Only the poller's own cordon is lifted, never an operator's.
    if (current.owner == CordonOwner::kPoller &&
        cordons_.SwapCordon(index_, CordonOwner::kPoller, CordonState{})) {
        log_(kLogInfo,
             Format("svm upstream recovered; uncordoning: %s "
                    "shredInsertSlotLag=%llu reason=\"%s\"",
                    Describe().c_str(), static_cast<unsigned long long>(lag),
                    kRecoveredReason));
    }
}

NetworkPoller::NetworkPoller(const Network& network, Transport& transport,
                             Clock& clock, LogSink log, uint32_t pid)
    : network_(network), clock_(clock), log_(log), pid_(pid) {
    for (size_t i = 0; i < network.size(); i++) {
        upstreams_.push_back(std::make_unique<UpstreamPoller>(
            network, i, transport, clock, log));
    }
}

NetworkPoller::~NetworkPoller() {
    for (size_t i = 0; i < network_.size(); i++) {
        network_.leases().ReleaseLease(i, pid_);
    }
}

void NetworkPoller::Tick() {
    int64_t now = clock_.MonotonicMs();
    network_.RefreshLanes(now);
    uint64_t reference = network_.LagReferenceOf(network_.all_upstreams());
    std::optional<std::vector<UpstreamTraffic>> traffic;  // summed if needed
    for (size_t i = 0; i < upstreams_.size(); i++) {
        // An old worker draining after a reload must not poll into a
        // record that the new configuration gave to another upstream.
        if (!network_.OwnsRecord(i)) {
            continue;
        }
        if (network_.leases().ClaimLease(i, pid_, now, kLeaseTtlMs)) {
            // else another host of the fleet polls it: the views it
            // shares stand, and its word on whether its slot polls fail
            // (FleetSync::TakeViews), whatever this host's last found
            if (!gate_ || gate_(i, now)) {
                upstreams_[i]->Tick();
            }
            NoteLag(i, reference);
            SampleHistory(i, reference, now, traffic);
        }
    }
}

void NetworkPoller::SampleHistory(
    size_t i, uint64_t reference, int64_t now,
    std::optional<std::vector<UpstreamTraffic>>& traffic) {
    UpstreamHistory& history = network_.host(i).history;
    // nothing known of it yet, or only its last slot: a gap, not a lag
    if (network_.slots().Observed(i) != 0 && network_.SlotsCurrent(i)) {
        RecordLags(history, now, network_.SlotLagOf(i, reference),
                   IngestionLag(network_, i));
    }
    if (NeedsCountMark(history, now)) {
        if (!traffic) {
            traffic = UpstreamTrafficOf(network_);
        }
        MarkCounts(history, now, (*traffic)[i].requests, (*traffic)[i].errors);
    }
}

void NetworkPoller::NoteLag(size_t i, uint64_t reference) {
    if (!network_.SlotsCurrent(i)) {
        return;   // down: said by its cordon, not a lag that grows
    }
    uint64_t max_lag = network_.settings().max_slot_lag;
    uint64_t lag = network_.SlotLagOf(i, reference);
    uint32_t lagging = Lagging(lag, max_lag) ? 1 : 0;
    if (network_.host(i).lagging.exchange(lagging) == lagging) {
        return;
    }
    // Not a cordon: routing already keeps it out while others are current.
    log_(kLogInfo,
         Format(lagging ? "svm upstream lagging; no client traffic while "
                          "others are current: network=%s upstream=%s "
                          "slotLag=%llu maxSlotLag=%llu observedSlot=%llu "
                          "referenceSlot=%llu"
                        : "svm upstream caught up; back in rotation: "
                          "network=%s upstream=%s slotLag=%llu "
                          "maxSlotLag=%llu observedSlot=%llu "
                          "referenceSlot=%llu",
                network_.name().c_str(), network_.upstream(i).id.c_str(),
                static_cast<unsigned long long>(lag),
                static_cast<unsigned long long>(max_lag),
                static_cast<unsigned long long>(network_.slots().Observed(i)),
                static_cast<unsigned long long>(reference)));
}

}  // namespace solgate
