// The network's stores in shared memory, and the seam they sit behind:
// routing and the poller go through the store interfaces, so other stores
// (fleet mode's) can stand in front of the zone's.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "routing/network.h"
#include "routing/route_plan.h"
#include "slots/shm_network_state.h"
#include "slots/state_poller.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::TestNetwork;

std::unique_ptr<ShmNetworkState> Bound(NetworkShared* table,
                                       std::vector<std::string> ids) {
    std::string error;
    auto state = ShmNetworkState::Bind(table, true, ids, 0, &error);
    EXPECT_TRUE(state) << error;
    return state;
}

TEST(ShmSlotStore, ViewsRiseAndToleratesSmallRollbacks) {
    auto table = std::make_unique<NetworkShared>();
    auto state = Bound(table.get(), {"a", "b"});
    EXPECT_TRUE(state->Suggest(1, kSlotProcessed, 5000));
    EXPECT_FALSE(state->Suggest(1, kSlotProcessed, 5000 - 1024));
    EXPECT_TRUE(state->Suggest(1, kSlotFinalized, 4968));
    EXPECT_TRUE(state->Suggest(1, kSlotShred, 5003));
    EXPECT_FALSE(state->Suggest(1, kSlotShred, 0));
    EXPECT_EQ(state->View(1, kSlotProcessed), 5000u);
    EXPECT_EQ(state->View(1, kSlotFinalized), 4968u);
    EXPECT_EQ(state->View(1, kSlotShred), 5003u);
    EXPECT_EQ(state->View(0, kSlotProcessed), 0u);
    EXPECT_TRUE(state->Suggest(1, kSlotProcessed, 1000));   // a reset node
    EXPECT_EQ(state->record(1).host.large_rollbacks.load(), 1u);
    EXPECT_EQ(state->record(1).processed.load(), 1000u);    // the zone holds it
}

TEST(ShmSlotStore, HealthGenesisLedgerWindowAndTraffic) {
    auto table = std::make_unique<NetworkShared>();
    auto state = Bound(table.get(), {"a"});
    EXPECT_EQ(state->Health(0), HealthOutcome::kUnknown);
    EXPECT_EQ(state->ExchangeHealth(0, HealthOutcome::kFailed),
              HealthOutcome::kUnknown);
    EXPECT_EQ(state->ExchangeHealth(0, HealthOutcome::kOk),
              HealthOutcome::kFailed);
    EXPECT_EQ(state->Genesis(0), GenesisCheck::kUnchecked);
    state->SetGenesis(0, GenesisCheck::kDiffers);
    EXPECT_EQ(state->Genesis(0), GenesisCheck::kDiffers);
    EXPECT_FALSE(state->FirstAvailable(0));
    state->SetFirstAvailable(0, 0);   // genesis itself is a window start
    EXPECT_EQ(state->FirstAvailable(0), 0u);
    state->SetFirstAvailable(0, 4000);
    EXPECT_EQ(state->FirstAvailable(0), 4000u);
    EXPECT_EQ(state->TrafficSeenMs(0, kSlotFinalized), 0);
    state->MarkTrafficSeen(0, kSlotFinalized, 77);
    EXPECT_EQ(state->TrafficSeenMs(0, kSlotFinalized), 77);
    EXPECT_EQ(state->TrafficSeenMs(0, kSlotProcessed), 0);
}

TEST(ShmCordonStore, OwnersSwapLagAndNote) {
    auto table = std::make_unique<NetworkShared>();
    auto state = Bound(table.get(), {"a"});
    EXPECT_EQ(state->Cordon(0).owner, CordonOwner::kNone);
    EXPECT_TRUE(state->SwapCordon(
        0, CordonOwner::kNone,
        {CordonOwner::kPoller, CordonCause::kShredLag, 1700000000000}));
    EXPECT_FALSE(state->SwapCordon(0, CordonOwner::kNone, CordonState{}));
    EXPECT_EQ(state->Cordon(0).cause, CordonCause::kShredLag);
    EXPECT_EQ(state->Cordon(0).since_wall_ms, 1700000000000);
    state->SetCordonLag(0, 250);
    EXPECT_EQ(state->CordonLag(0), 250u);
    state->SetCordonNote(0, "disk full");
    EXPECT_EQ(state->CordonNote(0), "disk full");
}

TEST(ShmLeaseStore, OneHolderUntilItExpires) {
    auto table = std::make_unique<NetworkShared>();
    auto state = Bound(table.get(), {"a", "b"});
    EXPECT_TRUE(state->ClaimLease(1, 100, 1000, 2000));
    EXPECT_FALSE(state->ClaimLease(1, 200, 1500, 2000));
    EXPECT_TRUE(state->ClaimLease(0, 200, 1500, 2000));   // another upstream
    EXPECT_EQ(state->LeaseHolder(1).pid, 100u);
    EXPECT_EQ(state->LeaseHolder(1).expires_ms, 3000);
    state->ReleaseLease(1, 200);   // not the holder: nothing happens
    EXPECT_EQ(state->LeaseHolder(1).pid, 100u);
    state->ReleaseLease(1, 100);
    EXPECT_TRUE(state->ClaimLease(1, 200, 1600, 2000));
}

TEST(ShmTipStore, AnsweredRisesAndLanesAreMadeOnce) {
    auto table = std::make_unique<NetworkShared>();
    auto state = Bound(table.get(), {"a", "b", "c"});
    state->SuggestAnswered(900);
    state->SuggestAnswered(800);   // a small drop is noise
    EXPECT_EQ(state->Answered(), 900u);

    auto lane = state->FindOrCreateLane("grp:1", "pair", {0, 2});
    ASSERT_TRUE(lane);
    EXPECT_NE(*lane, kAllLane);
    EXPECT_EQ(state->FindOrCreateLane("grp:1", "ignored", {1}), lane);
    std::vector<LaneInfo> lanes = state->Lanes();
    ASSERT_EQ(lanes.size(), 2u);
    EXPECT_EQ(lanes[0].id, kAllLane);
    EXPECT_EQ(lanes[0].name, "all");
    EXPECT_EQ(lanes[0].members, (std::vector<size_t>{0, 1, 2}));
    EXPECT_EQ(lanes[1].name, "pair");
    EXPECT_EQ(lanes[1].members, (std::vector<size_t>{0, 2}));

    LaneAxisMemory& axis = state->Axis(*lane, kAxisFinalized);
    axis.AcceptPick(500);
    EXPECT_EQ(axis.LastGood(), 500u);
    EXPECT_EQ(axis.HoldingSince(10), 10);
    EXPECT_EQ(axis.HoldingSince(20), 10);   // already holding since 10
    EXPECT_EQ(axis.RaiseFloor(450), 450u);
    EXPECT_EQ(axis.RaiseFloor(400), 450u);
    axis.MoveAnchor(450, 30);
    axis.MoveAnchor(440, 40);
    axis.Publish(450);
    axis.PublishMaxHead(470);
    LaneAxisMemory::Gauges g = axis.Read();
    EXPECT_EQ(g.served, 450u);
    EXPECT_EQ(g.max_head, 470u);
    EXPECT_EQ(g.anchor_slot, 450u);
    EXPECT_EQ(g.anchor_ms, 30);
    EXPECT_EQ(state->Axis(kAllLane, kAxisFinalized).Read().served, 0u);
}

// Another worker has claimed the first free slot for the same lane and is
// still filling it: this one waits and takes that lane, rather than making
// a second one that its cached selector groups would keep for good.
TEST(ShmTipStore, TwoWorkersMakingOneLaneMeetAtOneSlot) {
    auto table = std::make_unique<NetworkShared>();
    auto state = Bound(table.get(), {"a", "b", "c"});
    LaneShared& first = table->lanes[0];
    first.state.store(LaneShared::kClaimed);
    std::thread other([&first] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        std::strcpy(first.key, "grp:1");
        std::strcpy(first.name, "pair");
        first.state.store(LaneShared::kReady, std::memory_order_release);
    });
    std::optional<LaneId> lane = state->FindOrCreateLane("grp:1", "pair", {0, 2});
    other.join();
    EXPECT_EQ(lane, std::optional<LaneId>(1));
    EXPECT_EQ(state->Lanes().size(), 2u);   // "all" and the one lane
    EXPECT_EQ(table->lanes[1].state.load(), LaneShared::kFree);
}

// A slot left claimed by a worker that died before it filled it is waited
// for (boundedly) once, then passed over.
TEST(ShmTipStore, ASlotLeftClaimedIsPassedOver) {
    auto table = std::make_unique<NetworkShared>();
    auto state = Bound(table.get(), {"a", "b", "c"});
    table->lanes[0].state.store(LaneShared::kClaimed);
    EXPECT_EQ(state->FindOrCreateLane("grp:1", "x", {0, 1}),
              std::optional<LaneId>(2));
    EXPECT_EQ(state->FindOrCreateLane("grp:2", "y", {1, 2}),
              std::optional<LaneId>(3));
    EXPECT_EQ(table->lanes[0].state.load(), LaneShared::kClaimed);
}

TEST(ShmTipStore, EveryLaneTakenCountsAMiss) {
    auto table = std::make_unique<NetworkShared>();
    auto state = Bound(table.get(), {"a", "b"});
    for (size_t i = 0; i < kMaxLanes; i++) {
        ASSERT_TRUE(state->FindOrCreateLane("grp:" + std::to_string(i), "x",
                                            {0, 1}));
    }
    EXPECT_FALSE(state->FindOrCreateLane("grp:more", "x", {0, 1}));
    EXPECT_EQ(table->counters.lane_cap_misses.load(), 1u);
}

// Slot views kept in a map, as another store would keep them.
class MapSlotStore : public SlotStore {
public:
    uint64_t View(size_t i, SlotAxis axis) const override {
        auto it = views.find({i, axis});
        return it == views.end() ? 0 : it->second;
    }
    void Views(const std::vector<size_t>& upstreams, SlotAxis axis,
               std::vector<uint64_t>* out) const override {
        out->clear();
        for (size_t i : upstreams) out->push_back(View(i, axis));
    }
    bool Suggest(size_t i, SlotAxis axis, uint64_t value) override {
        uint64_t& v = views[{i, axis}];
        if (value <= v) return false;
        v = value;
        return true;
    }
    uint64_t Observed(size_t i) const override {
        auto it = observed.find(i);
        return it == observed.end() ? 0 : it->second;
    }
    void Observe(size_t i, uint64_t slot) override { observed[i] = slot; }
    int64_t TrafficSeenMs(size_t, SlotAxis) const override { return 0; }
    void MarkTrafficSeen(size_t, SlotAxis, int64_t) override { marks++; }
    HealthOutcome Health(size_t) const override { return HealthOutcome::kOk; }
    HealthOutcome ExchangeHealth(size_t, HealthOutcome) override {
        return HealthOutcome::kOk;
    }
    GenesisCheck Genesis(size_t) const override {
        return GenesisCheck::kMatches;
    }
    void SetGenesis(size_t, GenesisCheck) override {}
    std::optional<uint64_t> FirstAvailable(size_t) const override {
        return std::nullopt;
    }
    void SetFirstAvailable(size_t, uint64_t) override {}

    std::map<std::pair<size_t, SlotAxis>, uint64_t> views;
    std::map<size_t, uint64_t> observed;
    int marks = 0;
};

TEST(NetworkStores, RoutingReadsWhateverStoreStandsInFront) {
    TestNetwork t(3);
    MapSlotStore other;
    t.network.UseStores({&other, nullptr, nullptr, nullptr});
    other.views[{0, kSlotProcessed}] = 100;
    other.views[{1, kSlotProcessed}] = 110;
    other.views[{2, kSlotProcessed}] = 90;
    other.views[{1, kSlotShred}] = 115;
    Tips tips = t.network.CurrentTips();
    EXPECT_EQ(tips.processed, 100u);
    EXPECT_EQ(tips.indexed, 115u);
    EXPECT_EQ(IngestionLag(t.network, 1), 5u);
    // the zone's own views were never touched
    EXPECT_EQ(t.network.record(1).processed.load(), 0u);
}

}  // namespace
}  // namespace solgate
