// One solgate_network: its settings, its upstreams, and their shared state.
// Built at configuration time in the nginx master and inherited by every
// worker; the shared table it points into lives in the network's zone.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "conf/block_servers.h"
#include "conf/failsafe_args.h"
#include "conf/upstream_args.h"
#include "slots/shm_network_state.h"
#include "routing/upstream_choice.h"
#include "routing/upstream_health.h"
#include "rpc/cluster.h"
#include "solgate/solgate.h"
#include "base/transport.h"

namespace solgate {

class BlockService;

// Health threshold of the spec: a compile-time constant, not a setting.
constexpr uint64_t kMaxShredInsertSlotLag = 100;
constexpr uint32_t kPollIntervalMs = 400;
// A whole outage would fill the log with "every upstream is cordoned".
constexpr int64_t kAllCordonedWarnMs = 10000;

struct NetworkSettings {
    sg_cluster_t cluster = SG_CLUSTER_CUSTOM;
    sg_commitment_t default_commitment = SG_COMMITMENT_NONE;
    uint32_t debounce_ms = SG_DEFAULT_DEBOUNCE_MS;
    int64_t max_finalized_slot_lag =
        SG_DEFAULT_MAX_FINALIZED_LAG;  // 0: consensus filter disabled
    bool enforce_block_availability = true;
    // An upstream more than this many slots behind its group gets no
    // client traffic while another is within it (0: never).
    uint64_t max_slot_lag = SG_DEFAULT_MAX_SLOT_LAG;
    // Whether clients may pick upstreams (header, query) at all.
    bool use_upstream_from_client = true;
    // A missing-data answer is asked of other upstreams that may hold it.
    conf::RetryMissingData retry_missing_data;
    // A batch of more calls is refused here (0: no limit).
    uint64_t max_batch_size = SG_DEFAULT_MAX_BATCH_SIZE;
    // Subscription connections this host takes at most (0: no limit).
    uint64_t ws_max_connections = 0;
    // Calls sent to several upstreams at once (broadcast), compared
    // (consensus), or sent again when slow (hedge).
    conf::Broadcast broadcast;
    conf::Consensus consensus;
    conf::Hedge hedge;
    // Which of the three list each Solana method by name (FanOutFlags by
    // SolanaMethodIndex), so a request does not match globs; empty when
    // no policy is set (or in a test that sets them directly: globs).
    std::vector<uint8_t> fan_out_flags;
    // use_upstream_default: the selector of requests that send none.
    std::string default_selector;
    // Cube Runner serves blocks for this network: the poller also learns
    // each upstream's ledger window (getFirstAvailableBlock).
    bool track_ledger_window = false;
    // `state PATH`: where the operator's cordons and drains are kept on
    // disk (store/operator_state.h); empty: only in the zone.
    std::string state_dir;
};

// The ledger window moves slowly (a node prunes in large steps).
constexpr int64_t kFirstAvailablePollMs = 30000;
constexpr int64_t kFirstAvailableRetryMs = 5000;

struct UpstreamConf {
    UpstreamConf() = default;
    UpstreamConf(std::string upstream_id, HttpTarget target = {})  // NOLINT
        : id(std::move(upstream_id)), poll(std::move(target)) {}

    std::string id;
    HttpTarget poll;
    conf::ProxyTarget proxy;                  // where proxy_pass sends it
    conf::ProxyTarget pubsub;                 // its ws=, url empty: none
    std::vector<std::string> tags;            // "key:value"
    std::vector<std::string> methods;         // served only these (globs)
    std::vector<std::string> ignore_methods;  // never these (globs)
    conf::UpstreamRouting routing;            // weight, backup, max_fails
    // A node of an upstream split by server (its URL names an upstream {}
    // block of several servers): the upstream's id, which selectors also
    // match, and the node's server in the block (1-based). Empty and 0 for
    // an upstream that is one node.
    std::string group;
    uint32_t block_server = 0;
    // tls_name=: the name the poller checks and sends as SNI (its poll URL
    // has it as host, and connect_to the address); empty: the URL's host,
    // or host= for an upstream {} block.
    std::string tls_name;
};

// The settings nginx merges from the network block and the defaults.
struct NetworkTuning {
    uint32_t debounce_ms = SG_DEFAULT_DEBOUNCE_MS;
    int64_t max_finalized_slot_lag = SG_DEFAULT_MAX_FINALIZED_LAG;
    bool enforce_block_availability = true;
    int64_t max_slot_lag = SG_DEFAULT_MAX_SLOT_LAG;
    bool use_upstream_from_client = true;
    conf::RetryMissingData retry_missing_data;
    int64_t max_batch_size = SG_DEFAULT_MAX_BATCH_SIZE;
    int64_t ws_max_connections = 0;
};

// What a use-upstream selector resolves to on this configuration.
struct SelectorGroup {
    std::string error;            // set when the selector is malformed
    std::vector<size_t> matched;  // upstream indices it matches
    std::optional<LaneId> lane;   // its lane, when it forms one
    std::string lane_name;
};

// The stores a bound network's routing and poller go through. Bind makes
// them the shared memory zone's; fleet mode (or a test) may put others in
// front with UseStores, without routing noticing.
struct NetworkStores {
    SlotStore* slots = nullptr;
    CordonStore* cordons = nullptr;
    LeaseStore* leases = nullptr;
    TipStore* tips = nullptr;
};

struct Tips {
    uint64_t processed = 0;  // served tip of the processed views
    uint64_t finalized = 0;  // served tip of the finalized views
    uint64_t indexed = 0;    // highest shred-insert watermark in the pool
};

class Network {
public:
    Network(std::string name, NetworkSettings settings)
        : name_(std::move(name)), settings_(settings) {}

    void AddUpstream(UpstreamConf upstream);
    // The upstream list changed shape: recount what is kept about it.
    void Reindex();

    // Configuration as nginx reads it; each returns nullopt, or the message
    // `nginx -t` prints. Settings given twice are refused.
    std::optional<std::string> SetCluster(std::string_view name);
    std::optional<std::string> SetCommitment(std::string_view level);
    std::optional<std::string> SetDefaultSelector(std::string_view text);
    // state PATH: an absolute directory (nginx makes relative ones so).
    std::optional<std::string> SetStateDir(std::string_view dir);
    // broadcast, consensus or hedge (`policy`), with its arguments.
    std::optional<std::string> SetPolicy(
        std::string_view policy, const std::vector<std::string_view>& args);
    // Whether SetPolicy would take them (for a defaults block, which has
    // no network yet).
    static std::optional<std::string> CheckPolicy(
        std::string_view policy, const std::vector<std::string_view>& args);
    // Where relative tls_* files are: nginx's configuration directory.
    void SetConfPrefix(std::string_view prefix) { conf_prefix_ = prefix; }
    // upstream ID URL [options]; *index is the new upstream's.
    std::optional<std::string> AddUpstreamArgs(
        const std::vector<std::string_view>& args, size_t* index);
    // Upstream i's URL names an nginx upstream block with these servers
    // (in the block's order). One server: the poller connects to it. More:
    // upstream i becomes one node per server not marked down, "ID.N" (N
    // the server's place in the block), each polled at its own address and
    // a backup when the server is; the upstreams after it move up by
    // *nodes - 1. The poller names the real host in its URL (so TLS sends
    // the right server name). A unix socket is refused.
    std::optional<std::string> ReachThroughBlock(
        size_t i, const std::vector<BlockServer>& servers, size_t* nodes);
    // The settings once nginx has merged them; checks the network is whole.
    std::optional<std::string> Configure(const NetworkTuning& tuning);
    // Once every upstream is added: a use_upstream_default that matches
    // none of them (every request would get -32602). Configure checks it
    // too; nginx asks first, to name the directive's own line.
    std::optional<std::string> CheckDefaultSelector() const;
    // Once every upstream is added and split into nodes: a consensus that
    // asks more to agree than the network has upstreams, which no call it
    // takes could pass.
    std::optional<std::string> CheckConsensusReach() const;

    // Attaches to the shared table: `fresh` memory is initialised; reused
    // memory (a reload) keeps the state of upstreams whose id is still
    // configured, frees the others' slots once no process polls them.
    bool Bind(void* memory, bool fresh, int64_t now_ms, std::string* error);

    const std::string& name() const { return name_; }
    // Cube Runner serves this network: poll each upstream's ledger window.
    void TrackLedgerWindow() { settings_.track_ledger_window = true; }
    // The network's Cube Runner, when a solgate_blocks block names it.
    // (Not const: the poller thread's BlockSync copies into its cache.)
    void set_blocks(BlockService* blocks) { blocks_ = blocks; }
    BlockService* blocks() const { return blocks_; }
    const NetworkSettings& settings() const { return settings_; }
    size_t size() const { return upstreams_.size(); }
    // 0 .. size()-1: the voters of the network-wide lag reference.
    const std::vector<size_t>& all_upstreams() const { return all_; }
    const UpstreamConf& upstream(size_t i) const { return upstreams_[i]; }
    std::optional<size_t> FindUpstream(std::string_view id) const;

    bool bound() const { return state_ != nullptr; }
    // Bind found the zone empty (nginx starting, a reload that resized it,
    // another version's layout): what the operator said is to be taken
    // back from the state file.
    bool started_empty() const { return state_ && state_->started_empty(); }
    // A reload gave the network a new zone and took the operator's state
    // from the file into it: the old workers, still on the zone at
    // `memory`, keep no operator change for kSupersededMs (they stop
    // taking requests within about 100 ms; a reload that fails after
    // making the zone lets them go on after that).
    static constexpr int64_t kSupersededMs = 10000;
    static void Supersede(void* memory, int64_t now_ms) {
        ShmNetworkState::Supersede(memory, now_ms + kSupersededMs);
    }
    bool Superseded(int64_t now_ms) const {
        return state_ && now_ms < state_->SupersededUntil();
    }
    // The shared state, through its stores (bound networks only).
    SlotStore& slots() const { return *stores_.slots; }
    CordonStore& cordons() const { return *stores_.cordons; }
    LeaseStore& leases() const { return *stores_.leases; }
    TipStore& tips() const { return *stores_.tips; }
    // After Bind: other stores in front of the zone's (they must outlive
    // this network; a null member keeps the zone's).
    void UseStores(const NetworkStores& stores);
    // What stays per host whatever the stores: the poller's schedule and
    // the counters the metrics read.
    UpstreamHostRecord& host(size_t i) const { return state_->host(i); }
    NetworkHostCounters& counters() const { return state_->counters(); }
    NetworkShared& table() const { return state_->table(); }
    // The zone's whole record of upstream i: for tests that set the zone
    // up. The rest of libcore goes through the stores and host().
    UpstreamRecord& record(size_t i) const { return state_->record(i); }
    // Upstream i's zone slot, which keeps to its id across reloads (what
    // this host's request counts are keyed by).
    size_t RecordIndex(size_t i) const { return state_->RecordIndex(i); }
    // Which nginx holds the zone (NetworkShared::instance); 0 unbound.
    uint64_t Instance() const { return state_ ? state_->Instance() : 0; }
    // Whether upstream i's record is still its own after a reload.
    bool OwnsRecord(size_t i) const {
        return state_->Owns(i, upstreams_[i].id);
    }

    // Stateless tips over every upstream (for tests and diagnostics).
    Tips CurrentTips() const;
    bool Cordoned(size_t i) const;
    // Whether upstream i serves `method` (its methods=/ignore_methods=).
    bool Serves(size_t i, std::string_view method) const;
    // Which upstreams serve `method`, one flag per upstream. Built once per
    // method name the filters spell out (a new configuration brings a new
    // Network, so the sets follow it); other names are resolved per call,
    // so arbitrary client method names never grow the cache.
    std::vector<unsigned char> ServingSet(std::string_view method) const;
    bool has_method_filters() const { return has_method_filters_; }
    // Changes whenever the upstreams do, and differs between networks (of
    // a process): what a kept route plan was made for (RoutePlan).
    uint64_t plan_revision() const { return plan_revision_; }

    // Re-picks the network-wide lane and every lane, so their gauges stay
    // current without traffic (the poller calls it every tick).
    void RefreshLanes(int64_t now_ms) const;
    // Served tip of `lane` (nullopt: stateless) over `voters` on one axis.
    uint64_t PickTip(std::optional<LaneId> lane,
                     const std::vector<size_t>& voters, LaneAxis axis,
                     int64_t now_ms) const;

    // Resolves a (non-empty) selector: parses it, matches the upstreams and
    // forms its lane. Depends only on the text and the configuration, so
    // the first kCachedSelectors texts are resolved once per worker.
    SelectorGroup ResolveSelector(std::string_view text) const;
    // The same without a copy: the cached group (valid while this network
    // is), or, for a text not cached, the group made in *scratch. What a
    // request's plan uses: a copy of the group cost it an allocation of
    // its vector (and a free of the plan's own) every request.
    const SelectorGroup& ResolveSelectorInto(std::string_view text,
                                             SelectorGroup* scratch) const;
    static constexpr size_t kCachedSelectors = 64;
    // The margin above the indexed tip within which getBlock is forwarded.
    // 2 + debounce / 400 ms, with the longest debounce among `voters`
    // (an upstream's debounce= or the network's).
    uint64_t GuardMargin() const { return 2 + settings_.debounce_ms / 400; }
    uint64_t GuardMarginOf(const std::vector<size_t>& voters) const;
    // Upstream i's poll debounce: its debounce=, else the network's.
    uint32_t DebounceOf(size_t i) const {
        uint32_t own = upstreams_[i].routing.debounce_ms;
        return own != 0 ? own : settings_.debounce_ms;
    }

    // The slot upstreams of `group` are measured against for max_slot_lag
    // (LagReference over their processed views); 0 when none is known.
    uint64_t LagReferenceOf(const std::vector<size_t>& group) const;
    // How far upstream i's observed processed slot trails `reference`.
    uint64_t SlotLagOf(size_t i, uint64_t reference) const {
        return SlotLag(reference, slots().Observed(i));
    }

    // Upstream i's lag behind the whole network (for the status views).
    uint64_t SlotLagInNetwork(size_t i) const;
    // Whether upstream i's slot views are its current ones (or none yet):
    // this host's getSlot polls of it answer. A node that is down keeps
    // its last slot, and a lag that only grows is no lag.
    bool SlotsCurrent(size_t i) const;
    // Lagging by SlotLagInNetwork, while its slots are current.
    bool LaggingInNetwork(size_t i) const;

    struct PickRequest {
        const unsigned char* tried = nullptr;  // one flag per upstream
        // May receive it (nullptr: every upstream).
        const std::vector<unsigned char>* allowed = nullptr;
        // Backups outside `allowed` it may fall back to (nullptr: none).
        const std::vector<unsigned char>* fallback = nullptr;
        std::optional<uint64_t> min_context_slot;
        // Only upstreams that may hold this slot: a shred-insert watermark
        // at or above it, or none known (a missing-data retry of getBlock).
        std::optional<uint64_t> holding_slot;
        uint64_t lag_reference = 0;  // 0: nobody counts as lagging
        int64_t now_ms = 0;
        // Only whether there is one: the shared turn does not move.
        bool probe = false;
        // A subscription connection: a drained upstream is a last resort.
        bool subscription = false;
    };
    // Where upstream i stands for client traffic, whatever the request:
    // cordoned, ejected (or, for a subscription, drained), lagging behind
    // `lag_reference` by `lag` slots, a backup, or eligible. Pick's tiers.
    CandidateTier Standing(size_t i, uint64_t lag, int64_t now_ms,
                           bool subscription) const;
    // The same, with its cordon already read (Pick reads it once).
    CandidateTier StandingOf(size_t i, bool cordoned, uint64_t lag,
                             int64_t now_ms, bool subscription) const;

    // How many upstreams could be given client traffic now (Standing
    // eligible or backup), and why the others cannot: what solgate_health
    // answers. Counted as a request that sends no selector is routed: over
    // use_upstream_default's group and by its lag reference, with the
    // backups outside it it may fall back to (else over every upstream, by
    // the network-wide reference). No lock; no allocation but the default
    // selector's group.
    struct Eligibility {
        size_t eligible = 0;
        size_t cordoned = 0;
        size_t ejected = 0;
        size_t lagging = 0;
    };
    Eligibility CountEligible(int64_t now_ms) const;

    struct PickResult {
        size_t upstream = 0;
        CandidateTier tier = CandidateTier::kEligible;
        bool all_cordoned = false;  // every allowed upstream is cordoned
    };
    // The upstream for the next attempt, never one tried before: the
    // choice of upstream_choice.h over the allowed upstreams, with their
    // cordons, lag, ejections, weights and costs. No lock, no allocation.
    std::optional<PickResult> Pick(const PickRequest& request) const;

    // A client attempt on upstream i ended so (failover and passive
    // health); how long it ejected the upstream for (0: it did not). `run`:
    // RecordAttempt's.
    int64_t ReportAttempt(size_t i, const AttemptOutcome& outcome,
                          int64_t now_ms, FailureRun* run = nullptr) const {
        return RecordAttempt(host(i), upstreams_[i].routing, outcome, now_ms,
                             run);
    }
    bool has_backups() const { return has_backups_; }
    // Whether this process should log now that every upstream is cordoned:
    // at most once per kAllCordonedWarnMs.
    bool TakeAllCordonedWarning(int64_t now_ms) const;

    // Whether this process reads context.slot from a response of upstream
    // i now: at most one response per kHarvestGapMs, upstream and view fed
    // (finalized answers feed the finalized view, the others the latest).
    // A node's slot moves every ~400 ms, so more would tell nothing new,
    // and each scan costs about as much as the request's own parse; one
    // turn for both views could go, by the traffic's rhythm, always to one
    // commitment and leave the other view never fed (the traffic gate then
    // never opens).
    static constexpr int64_t kHarvestGapMs = 20;
    // This host's open subscription connections, all upstreams together.
    uint64_t WsOpen() const;
    // The operator's drain of upstream i's subscribers (admin .../drain):
    // for kWsDrainMs they move and new ones go elsewhere when they can.
    static constexpr int64_t kWsDrainMs = 30000;
    void DrainSubscribers(size_t i, int64_t now_ms,
                          int64_t for_ms = kWsDrainMs) const;
    bool Draining(size_t i, int64_t now_ms) const;
    // When upstream i's drain ends (monotonic ms), 0 when it never began.
    int64_t DrainUntil(size_t i) const;
    // How long upstream i's drain has left at now_ms (0: none).
    int64_t DrainLeft(size_t i, int64_t now_ms) const {
        int64_t until = DrainUntil(i);
        return until > now_ms ? until - now_ms : 0;
    }
    bool TakeHarvestTurn(size_t i, bool finalized, int64_t now_ms) const;

    // The operator's cordon replaces the poller's and is never lifted by
    // the poller; the reason is kept as printable ASCII. wall_ms: when the
    // operator made the change (CordonStore::OperatorChangeMs).
    void OperatorCordon(size_t i, std::string_view reason,
                        int64_t wall_ms) const;
    void OperatorUncordon(size_t i, int64_t wall_ms) const;

private:
    static uint64_t NextPlanRevision();

    std::string name_;
    std::string conf_prefix_;
    NetworkSettings settings_;
    std::vector<UpstreamConf> upstreams_;
    std::vector<size_t> all_;
    uint64_t plan_revision_ = NextPlanRevision();
    std::unique_ptr<ShmNetworkState> state_;
    NetworkStores stores_;
    bool has_method_filters_ = false;
    bool has_backups_ = false;
    bool has_own_debounce_ = false;
    bool cluster_set_ = false;
    bool commitment_set_ = false;
    bool default_selector_set_ = false;
    std::vector<std::string> policies_set_;
    BlockService* blocks_ = nullptr;
    // Per process: copied into each worker at fork.
    mutable std::optional<int64_t> all_cordoned_warned_ms_;
    // Only touched by the worker's event loop thread, never the poller.
    mutable std::unordered_map<std::string, std::vector<unsigned char>>
        serving_sets_;
    mutable std::unordered_map<std::string, SelectorGroup> selector_groups_;
    // by upstream, then finalized or not; 0: never
    mutable std::vector<int64_t> harvested_ms_;
};

}  // namespace solgate
