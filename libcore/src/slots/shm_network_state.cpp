#include "slots/shm_network_state.h"

#include "slots/lanes.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

namespace solgate {
namespace {

bool RecordHasId(const UpstreamRecord& record, std::string_view id) {
    return std::strncmp(record.id, std::string(id).c_str(), kIdCapacity) == 0;
}

// Whether the table starts empty: fresh memory, or reused memory laid
// out by another version.
bool SetUp(NetworkShared* table, bool fresh) {
    if (fresh || table->magic != NetworkShared::kMagic ||
        table->layout != NetworkShared::kLayout) {
        std::memset(static_cast<void*>(table), 0, sizeof(NetworkShared));
        table->magic = NetworkShared::kMagic;
        table->layout = NetworkShared::kLayout;
        std::random_device random;
        table->instance =
            (uint64_t{random()} << 32 | random()) ^
            static_cast<uint64_t>(
                std::chrono::steady_clock::now().time_since_epoch().count());
        return true;
    }
    return false;
}

// Upstream index -> record, keeping the records of ids bound before; new
// ids get free records, or retired ones whose poller's lease ran out.
bool AssignRecords(NetworkShared* table, const std::vector<std::string>& ids,
                   int64_t now_ms, std::vector<size_t>* record_of,
                   std::vector<bool>* claimed, std::string* error) {
    record_of->assign(ids.size(), kMaxUpstreams);
    claimed->assign(kMaxUpstreams, false);

    for (size_t i = 0; i < ids.size(); i++) {
        for (size_t s = 0; s < kMaxUpstreams; s++) {
            UpstreamRecord& r = table->records[s];
            if (!(*claimed)[s] && r.use.load() != UpstreamRecord::kFree &&
                RecordHasId(r, ids[i])) {
                r.use.store(UpstreamRecord::kBound);
                // its URL may have changed: check the cluster again
                r.genesis.store(static_cast<uint32_t>(GenesisCheck::kUnchecked));
                (*record_of)[i] = s;
                (*claimed)[s] = true;
                break;
            }
        }
    }

    // An old worker may still poll a retired record until it exits, so it
    // is reused only once its lease ran out.
    for (size_t s = 0; s < kMaxUpstreams; s++) {
        UpstreamRecord& r = table->records[s];
        if (!(*claimed)[s] && r.use.load() == UpstreamRecord::kBound) {
            r.use.store(UpstreamRecord::kRetired);
        }
    }

    for (size_t i = 0; i < ids.size(); i++) {
        if ((*record_of)[i] != kMaxUpstreams) {
            continue;
        }
        for (size_t s = 0; s < kMaxUpstreams; s++) {
            UpstreamRecord& r = table->records[s];
            uint32_t use = r.use.load();
            bool reusable =
                use == UpstreamRecord::kFree ||
                (use == UpstreamRecord::kRetired &&
                 Lease::Unpack(r.lease.load()).expires_ms <= now_ms);
            if (!(*claimed)[s] && reusable) {
                r.Reset(ids[i]);
                (*record_of)[i] = s;
                (*claimed)[s] = true;
                break;
            }
        }
        if ((*record_of)[i] == kMaxUpstreams) {
            *error = "no free upstream slot in the shared zone: too many "
                     "upstreams were replaced since the last restart";
            return false;
        }
    }
    return true;
}

// Waits, briefly, while another process fills the lane slot it claimed
// (a few copies; longer only if it is descheduled meanwhile): false if it
// is still claimed after kLaneClaimWaitMs, as when its process died in
// between, and the slot is then passed over.
constexpr int64_t kLaneClaimWaitMs = 100;

bool WaitWhileClaimed(const LaneShared& lane) {
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(kLaneClaimWaitMs);
    while (lane.state.load(std::memory_order_acquire) == LaneShared::kClaimed) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::yield();
    }
    return true;
}

// A lane whose members are no longer all configured is stale.
void FreeStaleLanes(NetworkShared* table, const std::vector<bool>& claimed) {
    auto stale = [&](const LaneShared& lane) {
        for (size_t s = 0; s < kMaxUpstreams; s++) {
            if (lane.HasMember(s) && !claimed[s]) {
                return true;
            }
        }
        return false;
    };
    for (LaneShared& lane : table->lanes) {
        if (lane.state.load() == LaneShared::kReady && stale(lane)) {
            // plain memory shared across processes, reset while unused
            std::memset(static_cast<void*>(lane.axes), 0, sizeof(lane.axes));
            lane.state.store(LaneShared::kFree);
        }
    }
    std::strcpy(table->all.name, "all");
}

std::atomic<uint64_t>& ViewWord(UpstreamRecord& r, SlotAxis axis) {
    switch (axis) {
    case kSlotFinalized: return r.finalized;
    case kSlotShred:     return r.shred;
    default:             return r.processed;
    }
}

std::atomic<int64_t>& SeenWord(UpstreamRecord& r, SlotAxis axis) {
    return axis == kSlotFinalized ? r.finalized_seen_ms : r.processed_seen_ms;
}

}  // namespace

// --- ShmLaneAxis -----------------------------------------------------------

uint64_t ShmLaneAxis::LastGood() const {
    return state_.last_good.load(std::memory_order_relaxed);
}

void ShmLaneAxis::AcceptPick(uint64_t pick) {
    state_.last_good.store(pick, std::memory_order_relaxed);
    state_.guard_since_ms.store(0, std::memory_order_relaxed);
}

int64_t ShmLaneAxis::HoldingSince(int64_t now_ms) {
    int64_t since = state_.guard_since_ms.load(std::memory_order_relaxed);
    if (since == 0) {
        int64_t expected = 0;
        state_.guard_since_ms.compare_exchange_strong(expected, now_ms);
        since = expected == 0 ? now_ms : expected;
    }
    return since;
}

uint64_t ShmLaneAxis::RaiseFloor(uint64_t served) {
    uint64_t current = state_.floor.load(std::memory_order_relaxed);
    while (served > current &&
           !state_.floor.compare_exchange_weak(current, served,
                                               std::memory_order_relaxed)) {
    }
    return std::max(served, current);
}

void ShmLaneAxis::MoveAnchor(uint64_t served, int64_t now_ms) {
    uint64_t anchor = state_.anchor_slot.load(std::memory_order_relaxed);
    if (served > anchor &&
        state_.anchor_slot.compare_exchange_strong(anchor, served)) {
        state_.anchor_ms.store(now_ms, std::memory_order_relaxed);
    }
}

void ShmLaneAxis::Publish(uint64_t served) {
    state_.served.store(served, std::memory_order_relaxed);
}

void ShmLaneAxis::PublishMaxHead(uint64_t head) {
    state_.max_head.store(head, std::memory_order_relaxed);
}

LaneAxisMemory::Gauges ShmLaneAxis::Read() const {
    Gauges g;
    g.served = state_.served.load(std::memory_order_relaxed);
    g.max_head = state_.max_head.load(std::memory_order_relaxed);
    g.anchor_slot = state_.anchor_slot.load(std::memory_order_relaxed);
    g.anchor_ms = state_.anchor_ms.load(std::memory_order_relaxed);
    return g;
}

// --- ShmNetworkState -------------------------------------------------------

std::unique_ptr<ShmNetworkState> ShmNetworkState::Bind(
    void* memory, bool fresh, const std::vector<std::string>& ids,
    int64_t now_ms, std::string* error) {
    auto* table = static_cast<NetworkShared*>(memory);
    bool empty = SetUp(table, fresh);
    std::vector<size_t> record_of;
    std::vector<bool> claimed;
    if (!AssignRecords(table, ids, now_ms, &record_of, &claimed, error)) {
        return nullptr;
    }
    FreeStaleLanes(table, claimed);
    auto state = std::unique_ptr<ShmNetworkState>(
        new ShmNetworkState(table, std::move(record_of)));
    state->started_empty_ = empty;
    return state;
}

bool ShmNetworkState::Supersede(void* memory, int64_t until_ms) {
    auto* table = static_cast<NetworkShared*>(memory);
    if (table == nullptr || table->magic != NetworkShared::kMagic ||
        table->layout != NetworkShared::kLayout) {
        return false;
    }
    table->superseded_until_ms.store(until_ms);
    return true;
}

int64_t ShmNetworkState::SupersededUntil() const {
    return table_->superseded_until_ms.load();
}

ShmNetworkState::ShmNetworkState(NetworkShared* table,
                                 std::vector<size_t> record_of)
    : table_(table), record_of_(std::move(record_of)), axes_(1 + kMaxLanes) {
    for (LaneId id = 0; id < axes_.size(); id++) {
        for (size_t axis = 0; axis < kAxisCount; axis++) {
            axes_[id][axis] = std::make_unique<ShmLaneAxis>(lane(id).axes[axis]);
        }
    }
}

bool ShmNetworkState::Owns(size_t upstream, std::string_view id) const {
    const UpstreamRecord& r = record(upstream);
    return r.use.load() == UpstreamRecord::kBound &&
           std::string_view(r.id) == id;
}

uint64_t ShmNetworkState::View(size_t upstream, SlotAxis axis) const {
    return ViewWord(record(upstream), axis).load(std::memory_order_relaxed);
}

void ShmNetworkState::Views(const std::vector<size_t>& upstreams,
                            SlotAxis axis, std::vector<uint64_t>* out) const {
    out->clear();
    out->reserve(upstreams.size());
    for (size_t i : upstreams) {
        out->push_back(
            ViewWord(record(i), axis).load(std::memory_order_relaxed));
    }
}

bool ShmNetworkState::Suggest(size_t upstream, SlotAxis axis, uint64_t value) {
    UpstreamRecord& r = record(upstream);
    return SuggestSlot(ViewWord(r, axis), value, r.host.large_rollbacks);
}

uint64_t ShmNetworkState::Observed(size_t upstream) const {
    return record(upstream).observed_processed.load(std::memory_order_relaxed);
}

void ShmNetworkState::Observe(size_t upstream, uint64_t slot) {
    if (slot > 0) {
        record(upstream).observed_processed.store(slot,
                                                  std::memory_order_relaxed);
    }
}

int64_t ShmNetworkState::TrafficSeenMs(size_t upstream, SlotAxis axis) const {
    return SeenWord(record(upstream), axis).load(std::memory_order_relaxed);
}

void ShmNetworkState::MarkTrafficSeen(size_t upstream, SlotAxis axis,
                                      int64_t now_ms) {
    SeenWord(record(upstream), axis).store(now_ms, std::memory_order_relaxed);
}

HealthOutcome ShmNetworkState::Health(size_t upstream) const {
    return static_cast<HealthOutcome>(record(upstream).health.load());
}

HealthOutcome ShmNetworkState::ExchangeHealth(size_t upstream,
                                              HealthOutcome outcome) {
    return static_cast<HealthOutcome>(record(upstream).health.exchange(
        static_cast<uint32_t>(outcome)));
}

GenesisCheck ShmNetworkState::Genesis(size_t upstream) const {
    return static_cast<GenesisCheck>(record(upstream).genesis.load());
}

void ShmNetworkState::SetGenesis(size_t upstream, GenesisCheck check) {
    record(upstream).genesis.store(static_cast<uint32_t>(check));
}

std::optional<uint64_t> ShmNetworkState::FirstAvailable(size_t upstream) const {
    uint64_t plus1 = record(upstream).first_available_plus1.load(
        std::memory_order_relaxed);
    if (plus1 == 0) {
        return std::nullopt;
    }
    return plus1 - 1;
}

void ShmNetworkState::SetFirstAvailable(size_t upstream, uint64_t slot) {
    record(upstream).first_available_plus1.store(slot + 1);
}

CordonState ShmNetworkState::Cordon(size_t upstream) const {
    return record(upstream).Cordon();
}

bool ShmNetworkState::SwapCordon(size_t upstream, CordonOwner expected,
                                 const CordonState& next) {
    return record(upstream).SwapCordon(expected, next);
}

uint64_t ShmNetworkState::CordonLag(size_t upstream) const {
    return record(upstream).cordon_lag.load();
}

void ShmNetworkState::SetCordonLag(size_t upstream, uint64_t lag) {
    record(upstream).cordon_lag.store(lag);
}

std::string ShmNetworkState::CordonNote(size_t upstream) const {
    return record(upstream).cordon_note.Read();
}

void ShmNetworkState::SetCordonNote(size_t upstream, std::string_view note) {
    record(upstream).cordon_note.Write(note);
}

int64_t ShmNetworkState::OperatorChangeMs(size_t upstream) const {
    return record(upstream).operator_change_ms.load();
}

void ShmNetworkState::SetOperatorChangeMs(size_t upstream, int64_t wall_ms) {
    record(upstream).operator_change_ms.store(wall_ms);
}

bool ShmNetworkState::ClaimLease(size_t upstream, uint32_t pid, int64_t now_ms,
                                 int64_t ttl_ms) {
    return solgate::ClaimLease(record(upstream).lease, pid, now_ms, ttl_ms);
}

void ShmNetworkState::ReleaseLease(size_t upstream, uint32_t pid) {
    solgate::ReleaseLease(record(upstream).lease, pid);
}

Lease ShmNetworkState::LeaseHolder(size_t upstream) const {
    return Lease::Unpack(
        record(upstream).lease.load(std::memory_order_relaxed));
}

uint64_t ShmNetworkState::Answered() const {
    return table_->processed_answered.load();
}

void ShmNetworkState::SuggestAnswered(uint64_t slot) {
    SuggestSlot(table_->processed_answered, slot,
                table_->counters.answered_rollbacks);
}

LaneShared& ShmNetworkState::lane(LaneId id) const {
    return id == kAllLane ? table_->all : table_->lanes[id - 1];
}

LaneAxisMemory& ShmNetworkState::Axis(LaneId lane, LaneAxis axis) {
    return *axes_[lane][axis];
}

uint64_t ShmNetworkState::PickServedTip(LaneId lane, LaneAxis axis,
                                        const std::vector<uint64_t>& heads,
                                        int64_t now_ms) {
    return PickLaneAxis(*axes_[lane][axis], heads, axis == kAxisFinalized,
                        now_ms);
}

void ShmNetworkState::AwaitFill(size_t k) {
    const LaneShared& lane = table_->lanes[k];
    if (lane.state.load(std::memory_order_acquire) != LaneShared::kClaimed) {
        stuck_claims_[k] = false;   // filled (or given back) after all
    } else if (!stuck_claims_[k]) {
        stuck_claims_[k] = !WaitWhileClaimed(lane);
    }
}

std::optional<LaneId> ShmNetworkState::FindOrCreateLane(
    std::string_view key, std::string_view name,
    const std::vector<size_t>& members) {
    auto same_key = [&](const LaneShared& lane) {
        return lane.state.load(std::memory_order_acquire) == LaneShared::kReady &&
               std::string_view(lane.key) == key;
    };
    for (size_t k = 0; k < kMaxLanes; k++) {
        if (same_key(table_->lanes[k])) {
            return k + 1;
        }
    }
    for (size_t k = 0; k < kMaxLanes; k++) {
        LaneShared& lane = table_->lanes[k];
        uint32_t expected = LaneShared::kFree;
        if (!lane.state.compare_exchange_strong(expected, LaneShared::kClaimed)) {
            // Every creator tries the free slots in the same order, so two
            // workers making the same lane meet at one slot: the loser
            // waits for the winner to fill it and takes it if it is this
            // key's, rather than making a second lane of its own (its
            // cached groups would then keep their own tips for good). A
            // slot left claimed by a process that died is waited for once.
            AwaitFill(k);
            if (same_key(lane)) {
                return k + 1;
            }
            continue;
        }
        size_t n = std::min(key.size(), kLaneKeyCapacity - 1);
        std::memcpy(lane.key, key.data(), n);
        lane.key[n] = '\0';
        n = std::min(name.size(), kLaneNameCapacity - 1);
        std::memcpy(lane.name, name.data(), n);
        lane.name[n] = '\0';
        std::memset(lane.members, 0, sizeof(lane.members));
        // Members are records, which stay the same across reloads.
        for (size_t upstream : members) {
            size_t r = record_of_[upstream];
            lane.members[r / 64] |= 1ULL << (r % 64);
        }
        // A slot freed meanwhile before this one (a reload's stale lane)
        // may have let another worker make the same lane there: keep the
        // first one and give this one back, before it is ever ready (a
        // worker waiting on it then sees it free, and takes no lane that
        // is given back).
        for (size_t first = 0; first < k; first++) {
            AwaitFill(first);
            if (same_key(table_->lanes[first])) {
                lane.state.store(LaneShared::kFree, std::memory_order_release);
                return first + 1;
            }
        }
        lane.state.store(LaneShared::kReady, std::memory_order_release);
        return k + 1;
    }
    table_->counters.lane_cap_misses.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
}

std::vector<LaneInfo> ShmNetworkState::Lanes() const {
    std::vector<LaneInfo> lanes;
    LaneInfo all;
    all.id = kAllLane;
    all.name = table_->all.name;
    all.key = "all";
    for (size_t i = 0; i < record_of_.size(); i++) {
        all.members.push_back(i);
    }
    lanes.push_back(std::move(all));
    for (size_t k = 0; k < kMaxLanes; k++) {
        const LaneShared& lane = table_->lanes[k];
        if (lane.state.load(std::memory_order_acquire) != LaneShared::kReady) {
            continue;
        }
        LaneInfo info;
        info.id = k + 1;
        info.name = lane.name;
        info.key = lane.key;
        for (size_t i = 0; i < record_of_.size(); i++) {
            if (lane.HasMember(record_of_[i])) {
                info.members.push_back(i);
            }
        }
        lanes.push_back(std::move(info));
    }
    return lanes;
}

}  // namespace solgate
