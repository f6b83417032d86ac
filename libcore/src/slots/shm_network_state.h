// A network's shared state in its nginx shared memory zone: the stores of
// slot views, cordons, poll leases and served-tip memories over the
// NetworkShared table (shared_state.h), which every worker maps. It is the
// only code that knows the table's layout; routing and the poller reach
// the state through the store interfaces.
//
// The table keeps one record per configured upstream id across reloads:
// Bind matches records to the upstreams by id, retires the records of ids
// no longer configured (reused once no process polls them), and frees the
// lanes whose members are gone.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "slots/cordon_store.h"
#include "slots/lease_store.h"
#include "slots/shared_state.h"
#include "slots/slot_store.h"
#include "slots/tip_store.h"

namespace solgate {

// One axis of a lane, in shared memory.
class ShmLaneAxis final : public LaneAxisMemory {
public:
    explicit ShmLaneAxis(LaneAxisState& state) : state_(state) {}

    uint64_t LastGood() const override;
    void AcceptPick(uint64_t pick) override;
    int64_t HoldingSince(int64_t now_ms) override;
    uint64_t RaiseFloor(uint64_t served) override;
    void MoveAnchor(uint64_t served, int64_t now_ms) override;
    void Publish(uint64_t served) override;
    void PublishMaxHead(uint64_t head) override;
    Gauges Read() const override;

private:
    LaneAxisState& state_;
};

class ShmNetworkState final : public SlotStore,
                        public CordonStore,
                        public LeaseStore,
                        public TipStore {
public:
    // Binds to `memory` (sizeof(NetworkShared)) for the upstreams `ids`, in
    // configuration order: `fresh` memory is set up; reused memory keeps
    // the records of ids still configured. nullptr with *error set when
    // the table has no record left for a new id.
    static std::unique_ptr<ShmNetworkState> Bind(
        void* memory, bool fresh, const std::vector<std::string>& ids,
        int64_t now_ms, std::string* error);

    // SlotStore
    uint64_t View(size_t upstream, SlotAxis axis) const override;
    void Views(const std::vector<size_t>& upstreams, SlotAxis axis,
               std::vector<uint64_t>* out) const override;
    bool Suggest(size_t upstream, SlotAxis axis, uint64_t value) override;
    uint64_t Observed(size_t upstream) const override;
    void Observe(size_t upstream, uint64_t slot) override;
    int64_t TrafficSeenMs(size_t upstream, SlotAxis axis) const override;
    void MarkTrafficSeen(size_t upstream, SlotAxis axis,
                         int64_t now_ms) override;
    HealthOutcome Health(size_t upstream) const override;
    HealthOutcome ExchangeHealth(size_t upstream,
                                 HealthOutcome outcome) override;
    GenesisCheck Genesis(size_t upstream) const override;
    void SetGenesis(size_t upstream, GenesisCheck check) override;
    std::optional<uint64_t> FirstAvailable(size_t upstream) const override;
    void SetFirstAvailable(size_t upstream, uint64_t slot) override;

    // CordonStore
    CordonState Cordon(size_t upstream) const override;
    bool SwapCordon(size_t upstream, CordonOwner expected,
                    const CordonState& next) override;
    uint64_t CordonLag(size_t upstream) const override;
    void SetCordonLag(size_t upstream, uint64_t lag) override;
    std::string CordonNote(size_t upstream) const override;
    void SetCordonNote(size_t upstream, std::string_view note) override;
    int64_t OperatorChangeMs(size_t upstream) const override;
    void SetOperatorChangeMs(size_t upstream, int64_t wall_ms) override;

    // LeaseStore: one poll lease per upstream.
    bool ClaimLease(size_t upstream, uint32_t pid, int64_t now_ms,
                    int64_t ttl_ms) override;
    void ReleaseLease(size_t upstream, uint32_t pid) override;
    Lease LeaseHolder(size_t upstream) const override;

    // TipStore
    uint64_t Answered() const override;
    void SuggestAnswered(uint64_t slot) override;
    LaneAxisMemory& Axis(LaneId lane, LaneAxis axis) override;
    uint64_t PickServedTip(LaneId lane, LaneAxis axis,
                           const std::vector<uint64_t>& heads,
                           int64_t now_ms) override;
    std::optional<LaneId> FindOrCreateLane(
        std::string_view key, std::string_view name,
        const std::vector<size_t>& members) override;
    std::vector<LaneInfo> Lanes() const override;

    // The zone's record of an upstream, shared part and all: this store's,
    // and tests' way to set the zone up.
    // The zone slot of upstream i: the same for its id across reloads.
    size_t RecordIndex(size_t upstream) const { return record_of_[upstream]; }
    // NetworkShared::instance: which nginx holds the zone.
    uint64_t Instance() const { return table_->instance; }
    UpstreamRecord& record(size_t upstream) const {
        return table_->records[record_of_[upstream]];
    }
    // What stays per host whatever the store: the poller's schedule and
    // the counters the metrics read.
    UpstreamHostRecord& host(size_t upstream) const {
        return record(upstream).host;
    }
    NetworkHostCounters& counters() const { return table_->counters; }
    // The whole table, for what is kept per zone slot or per process
    // rather than per upstream (pubsub/ws_holders.h).
    NetworkShared& table() const { return *table_; }
    // Whether upstream i's record is still its own (an old worker draining
    // after a reload must not poll into a record given to another id).
    bool Owns(size_t upstream, std::string_view id) const;

    // Whether Bind found the table empty (fresh memory, or another
    // layout's), so nothing of before is in it.
    bool started_empty() const { return started_empty_; }
    // The table at `memory` (a zone a reload replaced) is superseded until
    // `until_ms`; false when it is no table of this layout.
    static bool Supersede(void* memory, int64_t until_ms);
    int64_t SupersededUntil() const;

private:
    ShmNetworkState(NetworkShared* table, std::vector<size_t> record_of);

    LaneShared& lane(LaneId id) const;

    NetworkShared* table_;
    bool started_empty_ = false;
    std::vector<size_t> record_of_;   // upstream index -> record index
    // kAllLane, then table_->lanes[0..kMaxLanes).
    std::vector<std::array<std::unique_ptr<ShmLaneAxis>, kAxisCount>> axes_;
    // Lane slots this process waited for in vain (claimed by a process
    // that died before it filled them): not waited for again.
    std::array<bool, kMaxLanes> stuck_claims_{};
    // Waits while another process fills lane slot k it claimed, unless
    // this process already waited for it in vain (stuck_claims_).
    void AwaitFill(size_t k);
};

}  // namespace solgate
