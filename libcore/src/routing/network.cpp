#include "routing/network.h"

#include <algorithm>
#include <atomic>
#include <array>
#include <cstring>

#include "base/printable.h"
#include "conf/conf_messages.h"
#include "routing/fan_out.h"
#include "routing/selector.h"
#include "rpc/cluster.h"
#include "slots/lane_name.h"
#include "slots/served_tip.h"

namespace solgate {

using conf::Duplicate;
using conf::Quoted;

void Network::AddUpstream(UpstreamConf upstream) {
    if (upstream.poll.user_agent.empty()) {
        upstream.poll.user_agent = std::string("solgate-poller/") + sg_version();
    }
    upstreams_.push_back(std::move(upstream));
    Reindex();
}

uint64_t Network::NextPlanRevision() {
    static std::atomic<uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

void Network::Reindex() {
    plan_revision_ = NextPlanRevision();
    has_backups_ = false;
    has_own_debounce_ = false;
    has_method_filters_ = false;
    all_.clear();
    for (const UpstreamConf& u : upstreams_) {
        has_backups_ = has_backups_ || u.routing.backup;
        has_own_debounce_ = has_own_debounce_ || u.routing.debounce_ms != 0;
        has_method_filters_ = has_method_filters_ || !u.methods.empty() ||
                              !u.ignore_methods.empty();
        all_.push_back(all_.size());
    }
}

std::optional<std::string> Network::SetCluster(std::string_view name) {
    if (cluster_set_) {
        return Duplicate("cluster");
    }
    auto cluster = ParseCluster(name);
    if (!cluster) {
        return "invalid cluster " + Quoted(name) + ", it must be " +
               ClusterChoices();
    }
    settings_.cluster = *cluster;
    cluster_set_ = true;
    return std::nullopt;
}

std::optional<std::string> Network::SetCommitment(std::string_view level) {
    if (commitment_set_) {
        return Duplicate("commitment");
    }
    auto commitment = ParseCommitment(level);
    if (!commitment) {
        return "invalid commitment " + Quoted(level) + ", it must be " +
               CommitmentChoices();
    }
    settings_.default_commitment = *commitment;
    commitment_set_ = true;
    return std::nullopt;
}

std::optional<std::string> Network::SetDefaultSelector(std::string_view text) {
    if (default_selector_set_) {
        return Duplicate("use_upstream_default");
    }
    std::string error;
    if (!text.empty() && !Selector::Parse(text, &error)) {
        return "invalid use_upstream_default " + Quoted(text) + ": " + error;
    }
    settings_.default_selector = std::string(text);
    default_selector_set_ = true;
    return std::nullopt;
}

std::optional<std::string> Network::SetStateDir(std::string_view dir) {
    if (!settings_.state_dir.empty()) {
        return Duplicate("state");
    }
    if (dir.empty() || dir.front() != '/') {
        return "invalid state directory " + Quoted(dir) +
               ": it must be an absolute path";
    }
    std::string path(dir);
    while (path.size() > 1 && path.back() == '/') {
        path.pop_back();
    }
    settings_.state_dir = std::move(path);
    return std::nullopt;
}

namespace {

std::optional<std::string> ParsePolicy(std::string_view policy,
                                       const std::vector<std::string_view>& args,
                                       NetworkSettings* settings) {
    if (policy == "broadcast") {
        return conf::ParseBroadcast(args, &settings->broadcast);
    }
    if (policy == "consensus") {
        return conf::ParseConsensus(args, &settings->consensus);
    }
    if (policy == "hedge") {
        return conf::ParseHedge(args, &settings->hedge);
    }
    return "unknown failsafe policy " + conf::Quoted(policy);
}

}  // namespace

std::optional<std::string> Network::SetPolicy(
    std::string_view policy, const std::vector<std::string_view>& args) {
    if (std::find(policies_set_.begin(), policies_set_.end(), policy) !=
        policies_set_.end()) {
        return Duplicate(policy);
    }
    if (auto error = ParsePolicy(policy, args, &settings_)) {
        return error;
    }
    policies_set_.emplace_back(policy);
    settings_.fan_out_flags = FanOutFlagTable(settings_);
    return std::nullopt;
}

std::optional<std::string> Network::CheckPolicy(
    std::string_view policy, const std::vector<std::string_view>& args) {
    NetworkSettings scratch;
    return ParsePolicy(policy, args, &scratch);
}

namespace {

// The upstream's URL with `host` in place of its authority: what the
// poller asks for when it connects elsewhere (connect_to).
std::string NamedUrl(const conf::ProxyTarget& proxy, std::string_view host) {
    return (proxy.https ? "https://" : "http://") + std::string(host) +
           proxy.path;
}

}  // namespace

std::optional<std::string> Network::AddUpstreamArgs(
    const std::vector<std::string_view>& args, size_t* index) {
    auto check_new = [this](std::string_view id) -> std::optional<std::string> {
        if (FindUpstream(id)) {
            return "duplicate upstream " + Quoted(id) + " in network " +
                   Quoted(name_);
        }
        if (upstreams_.size() >= kMaxUpstreams) {
            return "too many upstreams in network " + Quoted(name_) +
                   ", the maximum is " + std::to_string(kMaxUpstreams);
        }
        return std::nullopt;
    };
    conf::UpstreamArgs parsed;
    if (auto error = conf::ParseUpstreamArgs(args, check_new, conf_prefix_,
                                             &parsed)) {
        return error;
    }
    UpstreamConf upstream;
    upstream.id = std::move(parsed.id);
    upstream.proxy = std::move(parsed.target);
    upstream.poll.url = upstream.proxy.url;
    upstream.poll.host_header = upstream.proxy.host;
    upstream.poll.tls = std::move(parsed.tls_settings);
    upstream.tls_name = std::move(parsed.tls.name);
    if (!upstream.tls_name.empty()) {
        // curl checks the URL's host and sends it as SNI: name it there,
        // and connect where the configured URL points
        upstream.poll.url = NamedUrl(upstream.proxy, upstream.tls_name);
        upstream.poll.connect_to = "::" + upstream.proxy.authority;
    }
    upstream.tags = std::move(parsed.tags);
    upstream.methods = std::move(parsed.methods);
    upstream.ignore_methods = std::move(parsed.ignore_methods);
    upstream.routing = parsed.routing;
    upstream.pubsub = std::move(parsed.pubsub);
    *index = upstreams_.size();
    AddUpstream(std::move(upstream));
    return std::nullopt;
}

std::optional<std::string> Network::ReachThroughBlock(
    size_t i, const std::vector<BlockServer>& servers, size_t* nodes) {
    const UpstreamConf u = upstreams_[i];
    const std::string block = Quoted(u.proxy.authority);
    std::vector<UpstreamConf> split;
    for (size_t s = 0; s < servers.size(); s++) {
        const BlockServer& server = servers[s];
        if (server.down && servers.size() > 1) {
            continue;
        }
        if (server.is_unix) {
            return "upstream " + Quoted(u.id) + ": server " +
                   std::to_string(s + 1) + " of upstream block " + block +
                   " is a unix socket, which the state poller cannot reach";
        }
        UpstreamConf node = u;
        node.poll.connect_to = ConnectTo(server);
        if (!u.tls_name.empty()) {
            node.poll.url = NamedUrl(u.proxy, u.tls_name);
        } else if (u.proxy.host != u.proxy.authority) {
            node.poll.url = NamedUrl(u.proxy, u.proxy.host);
        }
        if (servers.size() > 1) {
            node.id = u.id + "." + std::to_string(s + 1);
            node.group = u.id;
            node.block_server = static_cast<uint32_t>(s + 1);
            node.routing.backup = u.routing.backup || server.backup;
        }
        split.push_back(std::move(node));
    }
    if (split.size() > 1 && !u.pubsub.url.empty()) {
        // The pubsub port is not the block's: which server's would it be?
        return "upstream " + Quoted(u.id) + ": \"ws=\" cannot be used with "
               "upstream block " + block + " of several servers; give each "
               "server its own \"upstream\" line with its \"ws=\"";
    }
    if (split.empty()) {
        return "upstream " + Quoted(u.id) + ": every server of upstream block " +
               block + " is marked down";
    }
    if (upstreams_.size() - 1 + split.size() > kMaxUpstreams) {
        return "upstream " + Quoted(u.id) + ": the servers of upstream block " +
               block + " make network " + Quoted(name_) + " more than " +
               std::to_string(kMaxUpstreams) + " nodes";
    }
    for (const UpstreamConf& node : split) {
        auto same = FindUpstream(node.id);
        if (same && *same != i) {
            return "upstream " + Quoted(u.id) + ": its node " +
                   Quoted(node.id) + " (server of upstream block " + block +
                   ") has the id of another upstream";
        }
    }
    *nodes = split.size();
    upstreams_.erase(upstreams_.begin() + static_cast<std::ptrdiff_t>(i));
    upstreams_.insert(upstreams_.begin() + static_cast<std::ptrdiff_t>(i),
                      std::make_move_iterator(split.begin()),
                      std::make_move_iterator(split.end()));
    Reindex();
    return std::nullopt;
}

std::optional<std::string> Network::CheckDefaultSelector() const {
    if (settings_.default_selector.empty()) {
        return std::nullopt;
    }
    std::string bad;
    std::optional<Selector> selector =
        Selector::Parse(settings_.default_selector, &bad);
    for (const UpstreamConf& u : upstreams_) {
        if (selector && selector->Matches(u.id, u.tags, u.group)) {
            return std::nullopt;
        }
    }
    return "use_upstream_default " + Quoted(settings_.default_selector) +
           " of network " + Quoted(name_) +
           " matches no upstream (every request would get -32602)";
}

std::optional<std::string> Network::CheckConsensusReach() const {
    const conf::Consensus& consensus = settings_.consensus;
    if (consensus.methods.empty()) {
        return std::nullopt;
    }
    std::string agree = "\"consensus\" asks " +
                        std::to_string(consensus.agreement) +
                        " upstreams to agree (agreement=), but ";
    if (consensus.agreement > upstreams_.size()) {
        return agree + "network " + Quoted(name_) + " has " +
               std::to_string(upstreams_.size()) +
               ": every call it takes would fail with -32090";
    }
    // A method named outright (a glob may match names no upstream
    // filters) goes only to the upstreams whose methods= take it.
    for (const std::string& method : consensus.methods) {
        if (method.find('*') != std::string::npos) {
            continue;
        }
        std::vector<unsigned char> set = ServingSet(method);
        auto serving =
            static_cast<size_t>(std::count(set.begin(), set.end(), 1));
        if (serving < consensus.agreement) {
            return agree + "only " + std::to_string(serving) + " of network " +
                   Quoted(name_) + "'s upstreams serve " + method +
                   " (methods=, ignore_methods=): every such call would "
                   "fail with -32090";
        }
    }
    return std::nullopt;
}

std::optional<std::string> Network::Configure(const NetworkTuning& tuning) {
    if (upstreams_.empty()) {
        return "solgate_network " + Quoted(name_) + " has no \"upstream\"";
    }
    if (tuning.debounce_ms > SG_MAX_DEBOUNCE_MS) {
        return "state_poller_debounce of network " + Quoted(name_) +
               " must be at most " + std::to_string(SG_MAX_DEBOUNCE_MS / 1000) +
               "s";
    }
    for (auto [name, lag] :
         {std::pair{"max_finalized_slot_lag", tuning.max_finalized_slot_lag},
          std::pair{"max_slot_lag", tuning.max_slot_lag},
          std::pair{"max_batch_size", tuning.max_batch_size},
          std::pair{"ws_max_connections", tuning.ws_max_connections}}) {
        if (lag < 0) {
            return std::string(name) + " of network " + Quoted(name_) +
                   " must not be negative";
        }
    }
    if (auto unmatched = CheckDefaultSelector()) {
        return unmatched;
    }
    settings_.debounce_ms = tuning.debounce_ms;
    settings_.max_finalized_slot_lag = tuning.max_finalized_slot_lag;
    settings_.enforce_block_availability = tuning.enforce_block_availability;
    settings_.max_slot_lag = static_cast<uint64_t>(tuning.max_slot_lag);
    settings_.use_upstream_from_client = tuning.use_upstream_from_client;
    settings_.retry_missing_data = tuning.retry_missing_data;
    settings_.max_batch_size = static_cast<uint64_t>(tuning.max_batch_size);
    settings_.ws_max_connections =
        static_cast<uint64_t>(tuning.ws_max_connections);
    return std::nullopt;
}

std::optional<size_t> Network::FindUpstream(std::string_view id) const {
    for (size_t i = 0; i < upstreams_.size(); i++) {
        if (upstreams_[i].id == id) {
            return i;
        }
    }
    return std::nullopt;
}

bool Network::Bind(void* memory, bool fresh, int64_t now_ms,
                   std::string* error) {
    std::vector<std::string> ids;
    for (const UpstreamConf& u : upstreams_) {
        ids.push_back(u.id);
    }
    state_ = ShmNetworkState::Bind(memory, fresh, ids, now_ms, error);
    if (!state_) {
        return false;
    }
    stores_ = NetworkStores{state_.get(), state_.get(), state_.get(),
                            state_.get()};
    return true;
}

void Network::UseStores(const NetworkStores& stores) {
    if (stores.slots != nullptr) stores_.slots = stores.slots;
    if (stores.cordons != nullptr) stores_.cordons = stores.cordons;
    if (stores.leases != nullptr) stores_.leases = stores.leases;
    if (stores.tips != nullptr) stores_.tips = stores.tips;
}

Tips Network::CurrentTips() const {
    std::vector<uint64_t> processed(upstreams_.size());
    std::vector<uint64_t> finalized(upstreams_.size());
    Tips tips;
    const SlotStore& views = slots();
    for (size_t i = 0; i < upstreams_.size(); i++) {
        processed[i] = views.View(i, kSlotProcessed);
        finalized[i] = views.View(i, kSlotFinalized);
        tips.indexed = std::max(tips.indexed, views.View(i, kSlotShred));
    }
    tips.processed = ServedTip(std::move(processed));
    tips.finalized = ServedTip(std::move(finalized));
    return tips;
}

bool Network::Serves(size_t i, std::string_view method) const {
    const UpstreamConf& u = upstreams_[i];
    auto any_match = [method](const std::vector<std::string>& patterns) {
        for (const std::string& p : patterns) {
            if (GlobMatch(p, method)) {
                return true;
            }
        }
        return false;
    };
    return (u.methods.empty() || any_match(u.methods)) &&
           !any_match(u.ignore_methods);
}

std::vector<unsigned char> Network::ServingSet(std::string_view method) const {
    if (!has_method_filters_) {
        return std::vector<unsigned char>(upstreams_.size(), 1);
    }
    auto cached = serving_sets_.find(std::string(method));
    if (cached != serving_sets_.end()) {
        return cached->second;
    }
    std::vector<unsigned char> set(upstreams_.size());
    bool named = false;
    for (size_t i = 0; i < upstreams_.size(); i++) {
        set[i] = Serves(i, method) ? 1 : 0;
        const UpstreamConf& u = upstreams_[i];
        for (const auto* list : {&u.methods, &u.ignore_methods}) {
            named = named ||
                    std::find(list->begin(), list->end(), method) != list->end();
        }
    }
    if (named) {
        serving_sets_.emplace(std::string(method), set);
    }
    return set;
}

SelectorGroup Network::ResolveSelector(std::string_view text) const {
    SelectorGroup scratch;
    const SelectorGroup& group = ResolveSelectorInto(text, &scratch);
    if (&group == &scratch) {
        return scratch;   // not cached: moved out
    }
    return group;
}

const SelectorGroup& Network::ResolveSelectorInto(
    std::string_view text, SelectorGroup* scratch) const {
    auto cached = selector_groups_.find(std::string(text));
    if (cached != selector_groups_.end()) {
        return cached->second;
    }
    SelectorGroup& group = *scratch;
    group = SelectorGroup();
    std::optional<Selector> selector = Selector::Parse(text, &group.error);
    if (selector) {
        group.error.clear();
        for (size_t i = 0; i < upstreams_.size(); i++) {
            const UpstreamConf& u = upstreams_[i];
            if (selector->Matches(u.id, u.tags, u.group)) {
                group.matched.push_back(i);
            }
        }
    }
    // Only a simple selector matching a proper subset of at least two
    // upstreams is a group worth its own tip and gauges.
    bool lane_worthy = selector && IsSimpleGroupSelector(text) &&
                       group.matched.size() >= 2 &&
                       group.matched.size() < upstreams_.size();
    if (lane_worthy) {
        std::vector<std::string> ids;
        for (size_t i : group.matched) {
            ids.push_back(upstreams_[i].id);
        }
        std::string name = LaneName(ids);
        group.lane = tips().FindOrCreateLane(LaneKey(ids), name, group.matched);
        if (group.lane) {
            group.lane_name = std::move(name);
        }
    }
    // A lane-worthy group past the cap stays uncached, so it gets a lane as
    // soon as one is free again.
    if (selector_groups_.size() < kCachedSelectors &&
        !(lane_worthy && !group.lane)) {
        return selector_groups_.emplace(std::string(text), std::move(group))
            .first->second;
    }
    return group;
}

uint64_t Network::PickTip(std::optional<LaneId> lane,
                          const std::vector<size_t>& voters, LaneAxis axis,
                          int64_t now_ms) const {
    // Picked for every request that needs a tip: the list's storage is
    // kept per thread, not allocated each time.
    static thread_local std::vector<uint64_t> heads;
    slots().Views(voters,
                  axis == kAxisProcessed ? kSlotProcessed : kSlotFinalized,
                  &heads);
    if (!lane) {
        return ServedTipIn(&heads);
    }
    return tips().PickServedTip(*lane, axis, heads, now_ms);
}

void Network::RefreshLanes(int64_t now_ms) const {
    for (const LaneInfo& lane : tips().Lanes()) {
        for (size_t axis = 0; axis < kAxisCount; axis++) {
            PickTip(lane.id, lane.members, static_cast<LaneAxis>(axis),
                    now_ms);
        }
    }
}

bool Network::TakeAllCordonedWarning(int64_t now_ms) const {
    if (all_cordoned_warned_ms_ &&
        now_ms - *all_cordoned_warned_ms_ < kAllCordonedWarnMs) {
        return false;
    }
    all_cordoned_warned_ms_ = now_ms;
    return true;
}

uint64_t Network::WsOpen() const {
    if (!bound()) {
        return 0;
    }
    int64_t open = 0;
    for (size_t i = 0; i < upstreams_.size(); i++) {
        open += host(i).ws_open.load(std::memory_order_relaxed);
    }
    return open > 0 ? static_cast<uint64_t>(open) : 0;
}

void Network::DrainSubscribers(size_t i, int64_t now_ms,
                               int64_t for_ms) const {
    host(i).ws_drain_until_ms.store(now_ms + for_ms,
                                    std::memory_order_relaxed);
}

int64_t Network::DrainUntil(size_t i) const {
    return host(i).ws_drain_until_ms.load(std::memory_order_relaxed);
}

bool Network::Draining(size_t i, int64_t now_ms) const {
    return DrainLeft(i, now_ms) > 0;   // (monotonic ms: never below 0)
}

bool Network::TakeHarvestTurn(size_t i, bool finalized, int64_t now_ms) const {
    if (harvested_ms_.size() != 2 * upstreams_.size()) {
        harvested_ms_.assign(2 * upstreams_.size(), 0);
    }
    if (i >= upstreams_.size()) {
        return false;
    }
    int64_t& last = harvested_ms_[2 * i + (finalized ? 1 : 0)];
    if (last != 0 && now_ms >= last && now_ms - last < kHarvestGapMs) {
        return false;
    }
    last = now_ms == 0 ? 1 : now_ms;
    return true;
}

void Network::OperatorCordon(size_t i, std::string_view reason,
                             int64_t wall_ms) const {
    // Operators type reasons into URLs: keep printable ASCII only, so the
    // reason is always valid in JSON and in Prometheus labels.
    std::string text = PrintableAscii(reason);
    // the time first: a fleet worker that sees the new cordon sees its time
    cordons().SetOperatorChangeMs(i, wall_ms);
    cordons().SetCordonNote(i, text.empty() ? "cordoned by the operator"
                                            : text);
    CordonState next{CordonOwner::kOperator, CordonCause::kOperator, wall_ms};
    for (auto owner :
         {CordonOwner::kNone, CordonOwner::kPoller, CordonOwner::kOperator}) {
        if (cordons().SwapCordon(i, owner, next)) {
            host(i).cordon_events.fetch_add(1);
            break;
        }
    }
}

void Network::OperatorUncordon(size_t i, int64_t wall_ms) const {
    cordons().SetOperatorChangeMs(i, wall_ms);   // first, as for a cordon
    for (auto owner : {CordonOwner::kOperator, CordonOwner::kPoller}) {
        cordons().SwapCordon(i, owner, CordonState{});
    }
}

bool Network::Cordoned(size_t i) const {
    return cordons().Cordon(i).owner != CordonOwner::kNone;
}

uint64_t Network::GuardMarginOf(const std::vector<size_t>& voters) const {
    if (!has_own_debounce_) {
        return GuardMargin();
    }
    uint32_t longest = 0;
    for (size_t i : voters) {
        longest = std::max(longest, DebounceOf(i));
    }
    return 2 + (longest != 0 ? longest : settings_.debounce_ms) / 400;
}

uint64_t Network::LagReferenceOf(const std::vector<size_t>& group) const {
    std::array<uint64_t, kMaxUpstreams> heads;
    size_t n = 0;
    for (size_t i : group) {
        if (n < heads.size()) {
            heads[n++] = slots().View(i, kSlotProcessed);
        }
    }
    return LagReference(heads.data(), n);
}

uint64_t Network::SlotLagInNetwork(size_t i) const {
    return SlotLagOf(i, LagReferenceOf(all_));
}

bool Network::SlotsCurrent(size_t i) const {
    return host(i).slot_polls_failing.load(std::memory_order_relaxed) == 0;
}

bool Network::LaggingInNetwork(size_t i) const {
    return SlotsCurrent(i) &&
           Lagging(SlotLagInNetwork(i), settings_.max_slot_lag);
}

CandidateTier Network::Standing(size_t i, uint64_t lag, int64_t now_ms,
                               bool subscription) const {
    return StandingOf(i, Cordoned(i), lag, now_ms, subscription);
}

CandidateTier Network::StandingOf(size_t i, bool cordoned, uint64_t lag,
                                  int64_t now_ms, bool subscription) const {
    if (cordoned) {
        return CandidateTier::kCordoned;
    }
    if (Ejected(host(i), now_ms) || (subscription && Draining(i, now_ms))) {
        return CandidateTier::kEjected;
    }
    if (Lagging(lag, settings_.max_slot_lag)) {
        return CandidateTier::kLagging;
    }
    return upstreams_[i].routing.backup ? CandidateTier::kBackup
                                        : CandidateTier::kEligible;
}

Network::Eligibility Network::CountEligible(int64_t now_ms) const {
    Eligibility out;
    if (!bound()) {
        return out;
    }
    // as a request without a selector is routed (PlanRoute, NextPick)
    SelectorGroup group;
    if (!settings_.default_selector.empty()) {
        group = ResolveSelector(settings_.default_selector);
    }
    const bool grouped = group.error.empty() && !group.matched.empty();
    const std::vector<size_t>& voters = grouped ? group.matched : all_;
    uint64_t reference =
        settings_.max_slot_lag > 0 ? LagReferenceOf(voters) : 0;
    std::vector<unsigned char> in_group(grouped ? upstreams_.size() : 0, 0);
    for (size_t i : voters) {
        uint64_t lag = reference == 0 ? 0 : SlotLagOf(i, reference);
        switch (Standing(i, lag, now_ms, false)) {
        case CandidateTier::kCordoned:
            out.cordoned++;
            break;
        case CandidateTier::kEjected:
            out.ejected++;
            break;
        case CandidateTier::kLagging:
            out.lagging++;
            break;
        default:
            out.eligible++;
            break;
        }
        if (grouped) {
            in_group[i] = 1;
        }
    }
    // the group's fallback: the network's backups outside it
    for (size_t i = 0; grouped && out.eligible == 0 && i < upstreams_.size();
         i++) {
        if (in_group[i] || !upstreams_[i].routing.backup) {
            continue;
        }
        CandidateTier tier = Standing(i, 0, now_ms, false);
        if (tier != CandidateTier::kCordoned && tier != CandidateTier::kEjected) {
            out.eligible++;
        }
    }
    return out;
}

std::optional<Network::PickResult> Network::Pick(
    const PickRequest& request) const {
    // Uninitialised on purpose: only the first n are written and read.
    std::array<Candidate, kMaxUpstreams> candidates;
    std::array<double, kMaxUpstreams> costs;
    size_t n = 0;
    size_t usable = 0;
    size_t cordoned = 0;
    const uint64_t max_lag = settings_.max_slot_lag;
    // The cheapest cost of each tier, as the candidates come (the weights
    // are relative to it); 0 while the tier has none.
    std::array<double, static_cast<size_t>(CandidateTier::kCordoned) + 1>
        cheapest;
    cheapest.fill(0);
    for (size_t i = 0; i < upstreams_.size() && i < kMaxUpstreams; i++) {
        bool in_group = request.allowed == nullptr || (*request.allowed)[i];
        bool fallback = !in_group && request.fallback != nullptr &&
                        (*request.fallback)[i];
        if (!in_group && !fallback) {
            continue;
        }
        bool is_cordoned = Cordoned(i);
        if (in_group) {
            usable++;
            cordoned += is_cordoned ? 1 : 0;
        }
        if (request.tried != nullptr && request.tried[i]) {
            continue;
        }
        if (request.holding_slot) {
            uint64_t indexed = slots().View(i, kSlotShred);
            if (indexed != 0 && indexed < *request.holding_slot) {
                continue;
            }
        }
        uint64_t lag = request.lag_reference == 0
                           ? 0
                           : SlotLagOf(i, request.lag_reference);
        CandidateTier tier = StandingOf(i, is_cordoned, lag, request.now_ms,
                                        request.subscription);
        if (fallback) {
            if (tier != CandidateTier::kEligible &&
                tier != CandidateTier::kBackup) {
                continue;  // a fallback is taken only when it is healthy
            }
            tier = CandidateTier::kFallbackBackup;
        }
        // written in place: a Candidate built aside was then copied
        Candidate& c = candidates[n];
        c.index = i;
        c.tier = tier;
        c.reached = !request.min_context_slot ||
                    slots().View(i, kSlotProcessed) >= *request.min_context_slot;
        c.weight = upstreams_[i].routing.weight;
        double cost = UpstreamCost(host(i), lag, max_lag);
        costs[n++] = cost;
        double& best = cheapest[static_cast<size_t>(tier)];
        best = best == 0 ? cost : std::min(best, cost);
    }
    for (size_t k = 0; k < n; k++) {
        double best = cheapest[static_cast<size_t>(candidates[k].tier)];
        candidates[k].weight =
            EffectiveWeight(candidates[k].weight, costs[k] / best);
    }
    uint64_t turn =
        request.probe
            ? counters().rr_turn.load(std::memory_order_relaxed)
            : counters().rr_turn.fetch_add(1, std::memory_order_relaxed);
    std::optional<size_t> chosen =
        ChooseCandidateAt(candidates.data(), n, turn);
    if (!chosen) {
        return std::nullopt;
    }
    PickResult result;
    result.upstream = candidates[*chosen].index;
    result.tier = candidates[*chosen].tier;
    result.all_cordoned = usable > 0 && cordoned == usable;
    return result;
}

}  // namespace solgate
