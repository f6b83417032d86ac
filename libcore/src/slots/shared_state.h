// The state of one network that every nginx worker shares: a fixed table
// in the network's shared memory zone, one slot per upstream. Everything
// here is lock-free (std::atomic on process-shared memory), because a lock
// held by a worker that crashes would never be released.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "slots/slot_types.h"
#include "solgate/solgate.h"

namespace solgate {

constexpr size_t kMaxUpstreams = SG_MAX_UPSTREAMS;
constexpr size_t kMaxLanes = 16;
constexpr size_t kLaneKeyCapacity = 24;   // "grp:" + 16 hex digits
constexpr size_t kLaneNameCapacity = 64;
constexpr size_t kIdCapacity = 65;         // 64 characters and a NUL
constexpr size_t kReasonCapacity = 192;
constexpr size_t kMethodClasses = 3;     // MethodClass (rpc/solana_methods.h)
constexpr size_t kLatencyBuckets = 11;   // kLatencyBucketMs (request_metrics)
constexpr size_t kAttemptCauses = 7;      // AttemptCause (upstream_health.h)
constexpr size_t kWsEnds = 5;  // closed, then SubscriberMove's (pubsub/)
constexpr size_t kRetryReasons = 3;       // RoutedRequest::Retry
constexpr size_t kConsensusOutcomes = 4;  // ConsensusOutcome (fan_out.h)

enum PollMethod : size_t {
    kPollGetHealth = 0,
    kPollGetSlotProcessed,
    kPollGetSlotFinalized,
    kPollGetMaxShredInsertSlot,
    kPollGetGenesisHash,
    kPollGetFirstAvailableBlock,
    kPollMethodCount
};
std::string_view PollMethodName(PollMethod method);

// How long a writer waits for another before it takes over (the other
// died mid-write).
constexpr int64_t kTextWriterWaitMs = 100;

// A short text written by one process and read by others, of at most
// kCapacity - 1 bytes. One writer at a time (Write takes the odd version
// by CAS and waits for another, up to kTextWriterWaitMs); readers retry
// while a write is in progress.
template <size_t kCapacity>
struct SharedTextOf {
    std::atomic<uint32_t> version;  // odd while being written
    char text[kCapacity];

    void Write(std::string_view value);
    std::string Read() const;
};
// A reason or note.
using SharedText = SharedTextOf<kReasonCapacity>;
// A name: a host id (solgate_host_id: at most 64 characters).
using SharedName = SharedTextOf<kIdCapacity>;

// The last 15 minutes of an upstream as this host's poller saw it, for the
// status page (slots/upstream_history.h): one sample per kHistoryStepMs,
// each a single word tagged with its step, so a word left from an older
// lap of the ring, or never written, reads as no sample; and the request
// and error counts at the start of the last few steps, for rates.
constexpr int64_t kHistoryStepMs = 15000;
constexpr size_t kHistorySteps = 60;   // 15 minutes
constexpr size_t kRateMarks = 5;       // a minute back, and the current step

struct UpstreamHistory {
    std::atomic<uint64_t> lags[kHistorySteps];       // packed LagSample
    std::atomic<uint64_t> requests[kRateMarks];      // packed CountMark
    std::atomic<uint64_t> errors[kRateMarks];
};

// What one host keeps of an upstream for itself, whatever store holds the
// upstream's shared state: the poller's schedule and the metrics counters
// (each host's metrics are scraped on their own).
struct UpstreamHostRecord {
    std::atomic<int64_t> last_fanout_ms;
    std::atomic<uint32_t> gate_skips;  // consecutive ticks without getSlot
    // 1 while this host's getSlot polls of it fail (down, an error page):
    // its slot views are then the last known, not its current, and its
    // lag is no lag (Network::SlotsCurrent).
    std::atomic<uint32_t> slot_polls_failing;
    // When the ledger window was last asked for (monotonic ms).
    std::atomic<int64_t> first_available_polled_ms;
    // Fleet mode: the host that polls it, when another host does (its
    // solgate_host_id; empty: this host, or no fleet).
    SharedName polled_by;

    std::atomic<uint64_t> large_rollbacks;
    std::atomic<uint64_t> cordon_events;
    std::atomic<uint64_t> polls[kPollMethodCount];
    std::atomic<uint64_t> poll_errors[kPollMethodCount];
    std::atomic<uint64_t> gate_skipped_ticks;
    std::atomic<uint64_t> harvested;  // context.slot values from traffic

    // What routing learns of the upstream from this host's polls and
    // client attempts (routing/upstream_health.h).
    std::atomic<uint32_t> latency_ewma_us;    // 0: no sample yet
    std::atomic<uint32_t> failure_ewma;       // share of failures, /65536
    std::atomic<uint32_t> consecutive_fails;
    // Times the failure run was reset (a success, an ejection), wrapping:
    // an answer cut short takes its own success's reset back only if no
    // other came after it.
    std::atomic<uint32_t> run_resets;
    std::atomic<int64_t> ejected_until_ms;    // monotonic; 0: not ejected
    std::atomic<uint32_t> eject_cause;        // AttemptCause of the ejection
    std::atomic<uint32_t> lagging;            // the poller's last verdict
    std::atomic<uint64_t> ejections;

    // Client requests this upstream answered last, by method class (read,
    // heavy, write): a latency histogram (routing/request_metrics.h).
    std::atomic<uint64_t> latency_buckets[kMethodClasses][kLatencyBuckets];
    std::atomic<uint64_t> latency_count[kMethodClasses];
    std::atomic<uint64_t> latency_sum_ms[kMethodClasses];
    // Attempts on it that failed and were failed over, by AttemptCause.
    std::atomic<uint64_t> failovers[kAttemptCauses];
    // Answers that ended before their end (RoutedRequest::ReportCut).
    std::atomic<uint64_t> cut_answers;
    // broadcast attempts sent to it: [0] answered a result, [1] did not.
    std::atomic<uint64_t> broadcasts[2];
    // WebSocket subscription connections on it: open now, ever opened,
    // ended by what ended them, and the bytes they carried.
    std::atomic<int64_t> ws_open;
    std::atomic<uint64_t> ws_opened;
    std::atomic<uint64_t> ws_closed[kWsEnds];
    std::atomic<uint64_t> ws_bytes_to_client;
    std::atomic<uint64_t> ws_bytes_from_client;
    // An operator's drain (monotonic ms): until then its subscribers move
    // and new ones go elsewhere when they can. 0: none.
    std::atomic<int64_t> ws_drain_until_ms;
    UpstreamHistory history;
};

// A process holding subscription connections of the network, with how
// many it holds on each zone slot (pubsub/ws_holders.h). owner: 0 free,
// else the process's packed ProcessIdentity, or, while a dead one's counts
// are taken off, the reaper's with kWsHolderReaping set (a reaper that
// dies meanwhile is reaped in turn).
constexpr size_t kWsHolders = 64;
constexpr uint64_t kWsHolderReaping = uint64_t{1} << 63;

struct WsHolder {
    std::atomic<uint64_t> owner;
    std::atomic<int32_t> open[kMaxUpstreams];
};

// One upstream in the network's zone: the shared state the stores of
// shm_network_state.h hand out, and this host's own record.
struct UpstreamRecord {
    enum Use : uint32_t { kFree = 0, kBound = 1, kRetired = 2 };

    std::atomic<uint32_t> use;
    char id[kIdCapacity];  // written while binding, in the master process

    // Slot views: monotonic with rollback tolerance.
    std::atomic<uint64_t> processed;
    std::atomic<uint64_t> finalized;
    std::atomic<uint64_t> shred;  // getMaxShredInsertSlot watermark
    // The processed slot as last observed (no rollback tolerance).
    std::atomic<uint64_t> observed_processed;
    // When live traffic last fed each view (monotonic ms; 0 = never).
    std::atomic<int64_t> processed_seen_ms;
    std::atomic<int64_t> finalized_seen_ms;

    std::atomic<uint32_t> health;   // HealthOutcome of the last getHealth
    std::atomic<uint32_t> genesis;  // GenesisCheck
    std::atomic<uint64_t> cordon;   // packed CordonState
    std::atomic<uint64_t> cordon_lag;  // lag when the poller cordoned
    // getFirstAvailableBlock + 1 (0: not known yet): the ledger's window.
    std::atomic<uint64_t> first_available_plus1;
    SharedText cordon_note;         // operator's reason, or genesis detail
    // When an operator last cordoned or uncordoned it (wall ms; 0: not in
    // this zone's life): what a fleet orders changes by.
    std::atomic<int64_t> operator_change_ms;

    // Poll ownership: packed (pid, expires monotonic ms); see Lease.
    std::atomic<uint64_t> lease;

    UpstreamHostRecord host;

    // Raises a view to `value`, or lowers it when the drop is larger than
    // kToleratedSlotRollback (counted in host.large_rollbacks). Returns
    // true when the value was accepted.
    bool SuggestProcessed(uint64_t value);
    bool SuggestFinalized(uint64_t value);
    bool SuggestShred(uint64_t value);

    CordonState Cordon() const;
    // Sets the cordon only if the current owner is `expected`; returns
    // whether it changed.
    bool SwapCordon(CordonOwner expected, const CordonState& next);

    void Reset(std::string_view new_id);
};


// What a lane remembers per axis between picks.
struct LaneAxisState {
    std::atomic<uint64_t> last_good;       // regression guard's memory
    std::atomic<int64_t> guard_since_ms;   // holding last_good since; 0 = not
    std::atomic<uint64_t> floor;           // finalized: never lowers
    std::atomic<uint64_t> anchor_slot;     // advance-age anchor
    std::atomic<int64_t> anchor_ms;
    std::atomic<uint64_t> served;          // the last served tip (gauge)
    std::atomic<uint64_t> max_head;        // highest voter head (lag gauge)
};

// A group of upstreams that use-upstream selectors pin traffic to, with
// its own served tip. Members are shared-table slot indices, which stay
// the same across reloads.
struct LaneShared {
    enum State : uint32_t { kFree = 0, kClaimed = 1, kReady = 2 };

    std::atomic<uint32_t> state;
    char key[kLaneKeyCapacity];
    char name[kLaneNameCapacity];
    uint64_t members[kMaxUpstreams / 64];
    LaneAxisState axes[kAxisCount];

    bool HasMember(size_t slot) const {
        return (members[slot / 64] >> (slot % 64)) & 1;
    }
};

// Client requests by (upstream, method, outcome), this host's: a fixed
// open-addressing table, so whatever clients send, memory and label sets
// stay bounded (a key that finds no free slot is counted as dropped).
struct RequestCountTable {
    static constexpr size_t kSlots = 4096;
    std::atomic<uint32_t> keys[kSlots];    // 0: free, else packed key + 1
    std::atomic<uint64_t> counts[kSlots];
    std::atomic<uint64_t> dropped;
};

// What one host counts of a network for itself (and its round robin).
// NetworkHostCounters::fleet_link: no solgate_shared_state, its store
// down, up.
constexpr uint64_t kFleetLinkNone = 0;
constexpr uint64_t kFleetLinkDown = 1;
constexpr uint64_t kFleetLinkUp = 2;
// The round-trip histogram's upper bounds in us (then +Inf).
constexpr size_t kRoundTripBuckets = 9;
constexpr uint64_t kRoundTripBucketUs[kRoundTripBuckets] = {
    250, 500, 1000, 2500, 5000, 10000, 25000, 100000, 250000};

struct NetworkHostCounters {
    std::atomic<uint64_t> rr_turn;
    std::atomic<uint64_t> answered_rollbacks;
    std::atomic<uint64_t> getslot_corrections;
    std::atomic<uint64_t> guard_rejections;
    std::atomic<uint64_t> all_cordoned_fallbacks;
    std::atomic<uint64_t> lane_cap_misses;  // lane-worthy groups past the cap
    // Calls asked of another upstream because one lacked the data, by
    // RoutedRequest::Retry (0 unused; missing data, skipped slot).
    std::atomic<uint64_t> retries[kRetryReasons];
    // consensus decisions, by ConsensusOutcome
    std::atomic<uint64_t> consensus[kConsensusOutcomes];
    // hedge: attempts sent because the first was slow, and the ones whose
    // answer the client got
    std::atomic<uint64_t> hedges_sent;
    std::atomic<uint64_t> hedges_won;
    // fleet mode, as this host's poller last saw it: kFleetLink*
    std::atomic<uint64_t> fleet_link;
    // fleet mode: the round trips of this host's commands to the store
    // (kRoundTripBucketUs; every network of the host sees them all)
    std::atomic<uint64_t> store_round_trips[kRoundTripBuckets];
    std::atomic<uint64_t> store_round_trip_count;
    std::atomic<uint64_t> store_round_trip_sum_us;
    RequestCountTable requests;
};

struct NetworkShared {
    static constexpr uint32_t kMagic = 0x534c4754;  // "SLGT"
    static constexpr uint32_t kLayout = 21;

    uint32_t magic;
    uint32_t layout;
    // Random, drawn when the zone is laid out: which nginx (this master,
    // through its reloads) holds the zone, for a fleet's leases (two hosts
    // given one solgate_host_id still hold theirs apart).
    uint64_t instance;
    // The highest processed slot any worker has answered getSlot with, so
    // no client sees the slot move backwards across upstreams.
    std::atomic<uint64_t> processed_answered;
    // A reload gave the network a new zone (its size changed) and read the
    // operator's state file into it: until then (monotonic ms) the old
    // workers still on this zone keep no operator change (0: never).
    std::atomic<int64_t> superseded_until_ms;
    LaneShared all;                          // the network-wide lane
    LaneShared lanes[kMaxLanes];
    UpstreamRecord records[kMaxUpstreams];
    NetworkHostCounters counters;
    WsHolder ws_holders[kWsHolders];
};

// Renews the lease when `pid` holds it, or takes it when it has expired.
// Returns true when `pid` holds the lease afterwards.
bool ClaimLease(std::atomic<uint64_t>& word, uint32_t pid, int64_t now_ms,
                int64_t ttl_ms);
void ReleaseLease(std::atomic<uint64_t>& word, uint32_t pid);

// Monotonic max with rollback tolerance, on one counter. `large_rollbacks`
// is incremented when a drop beyond the tolerance is accepted.
bool SuggestSlot(std::atomic<uint64_t>& view, uint64_t value,
                 std::atomic<uint64_t>& large_rollbacks);

}  // namespace solgate
