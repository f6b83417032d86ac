// Two hosts of a fleet (each its own shared memory) over one store: the
// fleet's leases, the views, the memories and the operator cordons.
#include "fleet/fleet_sync.h"

#include <gtest/gtest.h>

#include <deque>

#include "store/operator_state.h"
#include "support/fakes.h"
#include "support/temp_dir.h"

namespace solgate {
namespace {

// The store as Redis keeps it, answering later (Flush), as Redis does.
class FakeStore : public FleetStore {
public:
    bool Up() const override { return up; }

    void ClaimLeases(std::vector<std::string> keys, std::string holder,
                     int64_t ttl_ms,
                     std::function<void(std::optional<std::vector<bool>>)> done)
        override {
        if (!up) {
            done(std::nullopt);
            return;
        }
        std::vector<bool> held;
        for (const std::string& k : keys) {
            auto& lease = leases[k];
            if (lease.second <= now || lease.first == holder) {
                lease = {holder, now + ttl_ms};
            }
            held.push_back(lease.first == holder);
        }
        later.push_back([done, held] { done(held); });
    }

    void MergeSlots(std::string key,
                    std::vector<std::pair<std::string, uint64_t>> fields,
                    bool never_lower) override {
        for (auto& [field, v] : fields) {
            uint64_t cur = hashes[key].count(field)
                               ? std::stoull(hashes[key][field]) : 0;
            if (v > 0 && (cur == 0 || v > cur ||
                          (!never_lower && cur - v > kToleratedSlotRollback))) {
                hashes[key][field] = std::to_string(v);
            }
        }
    }

    void SetFields(std::string key, Fields fields) override {
        for (auto& [field, value] : fields) {
            hashes[key][field] = value;
        }
    }

    void SetLaterFields(std::string key, Fields fields) override {
        for (auto& [field, value] : fields) {
            auto ms = [](const std::string& v) {
                return std::stoll(v.substr(0, v.find('|')));
            };
            auto it = hashes[key].find(field);
            if (it == hashes[key].end() || ms(value) > ms(it->second)) {
                hashes[key][field] = value;
            }
        }
    }

    void ReadHash(std::string key,
                  std::function<void(std::optional<Hash>)> done) override {
        if (!up) {
            done(std::nullopt);
            return;
        }
        Hash copy = hashes[key];
        later.push_back([done, copy] { done(copy); });
    }

    // FleetSync runs no script.
    void Eval(const char*, Words, Words,
              std::function<void(std::optional<Words>)> done) override {
        done(std::nullopt);
    }

    void Flush() {
        while (!later.empty()) {
            auto next = std::move(later.front());
            later.pop_front();
            next();
        }
    }

    bool up = true;
    int64_t now = 1000000;
    std::map<std::string, std::pair<std::string, int64_t>> leases;
    std::map<std::string, Hash> hashes;
    std::deque<std::function<void()>> later;
};

NetworkSettings WithState(const std::string& dir) {
    NetworkSettings settings;
    settings.state_dir = dir;
    return settings;
}

struct Host {
    Host(FakeStore& store, const char* id, uint32_t pid,
         const std::string& state_dir = "")
        : net(2, WithState(state_dir)),
          sync(net.network, store, "t:", id, pid,
               [this](int, const std::string& line) { lines.push_back(line); }),
          pid(pid) {}

    // A poller tick: the worker's shm leases, then the fleet's work.
    void Tick(int64_t now) {
        for (size_t i = 0; i < 2; i++) {
            net.network.leases().ClaimLease(i, pid, now, kLeaseTtlMs);
        }
        sync.Tick(now, 1700000000000 + now + wall_offset_ms);
    }

    // what the job logged (declared first: the job's sink writes here)
    std::vector<std::string> lines;
    testing::TestNetwork net;
    FleetSync sync;
    uint32_t pid;
    int64_t wall_offset_ms = 0;   // its wall clock against the others'
};

// The next poller tick of two hosts, one after the other, 400 ms on.
void TickBoth(FakeStore& store, Host& a, Host& b) {
    store.now += 400;
    a.Tick(store.now);
    store.Flush();
    b.Tick(store.now);
    store.Flush();
}

TEST(FleetSync, OneHostPollsEachUpstreamAndTheOthersTakeItsViews) {
    FakeStore store;
    Host a(store, "host-a", 10), b(store, "host-b", 20);
    int64_t now = store.now;
    EXPECT_TRUE(a.sync.MayPoll(0, now)) << "before any claim";
    a.Tick(now);
    store.Flush();
    b.Tick(now);
    store.Flush();
    EXPECT_TRUE(a.sync.MayPoll(0, now) && a.sync.MayPoll(1, now));
    EXPECT_FALSE(b.sync.MayPoll(0, now) || b.sync.MayPoll(1, now));

    a.net.network.slots().Suggest(0, kSlotProcessed, 5000);
    a.net.network.slots().Suggest(0, kSlotFinalized, 4968);
    a.net.network.slots().Suggest(1, kSlotShred, 5003);
    a.net.network.slots().ExchangeHealth(1, HealthOutcome::kFailed);
    a.net.network.slots().SetFirstAvailable(0, 1200);
    a.net.network.host(0).latency_ewma_us = 300000;   // a slow node
    now += 400;
    store.now = now;
    a.Tick(now);
    store.Flush();
    b.Tick(now);
    store.Flush();
    EXPECT_EQ(b.net.network.slots().View(0, kSlotProcessed), 5000u);
    EXPECT_EQ(b.net.network.slots().Observed(0), 5000u);
    EXPECT_EQ(b.net.network.slots().View(0, kSlotFinalized), 4968u);
    EXPECT_EQ(b.net.network.slots().View(1, kSlotShred), 5003u);
    EXPECT_EQ(b.net.network.slots().Health(1), HealthOutcome::kFailed);
    EXPECT_EQ(b.net.network.slots().FirstAvailable(0), 1200u)
        << "the ledger's window, for Cube Runner";
    EXPECT_FALSE(b.net.network.slots().FirstAvailable(1).has_value());
    EXPECT_EQ(b.net.network.host(0).latency_ewma_us.load(), 300000u)
        << "routing weighs the polling host's round trips";
    EXPECT_EQ(b.net.network.host(0).polled_by.Read(), "host-a");
    EXPECT_EQ(a.net.network.host(0).polled_by.Read(), "") << "itself";
    EXPECT_EQ(store.hashes.count("t:{mainnet}:views"), 1u);

    // host A stops: once its leases ran out, host B polls
    for (int k = 0; k < 10; k++) {
        now += 400;
        store.now = now;
        b.Tick(now);
        store.Flush();
    }
    EXPECT_TRUE(b.sync.MayPoll(0, now) && b.sync.MayPoll(1, now));
}

// The polling host stops writing (it quit, or the store hung and kept its
// last views): within kFleetViewsFreshMs the others stop taking those
// views, whose old slot would make a lag, and poll the upstream
// themselves, before its lease has run out.
TEST(FleetSync, StaleViewsAreNotTakenAndTheHostPollsItself) {
    FakeStore store;
    Host a(store, "host-a", 10), b(store, "host-b", 20);
    TickBoth(store, a, b);
    TickBoth(store, a, b);
    ASSERT_TRUE(a.sync.MayPoll(0, store.now));
    ASSERT_FALSE(b.sync.MayPoll(0, store.now));
    a.net.network.slots().Suggest(0, kSlotProcessed, 5000);
    a.net.network.slots().Observe(0, 5000);
    TickBoth(store, a, b);
    EXPECT_EQ(b.net.network.slots().Observed(0), 5000u);
    EXPECT_EQ(b.net.network.host(0).polled_by.Read(), "host-a");

    int64_t last_write = store.now;
    while (store.now - last_write <= kFleetViewsFreshMs) {
        EXPECT_FALSE(b.sync.MayPoll(0, store.now)) << store.now - last_write;
        store.now += 400;
        b.Tick(store.now);
        store.Flush();
    }
    ASSERT_LT(store.now - last_write, kFleetLeaseTtlMs) << "A's lease holds";
    EXPECT_TRUE(b.sync.MayPoll(0, store.now));
    EXPECT_EQ(b.net.network.host(0).polled_by.Read(), "");
    // a host that starts now has never seen the stamp change: the
    // writer's time in it says they are old
    Host c(store, "host-c", 30);
    c.Tick(store.now);
    store.Flush();
    EXPECT_TRUE(c.sync.MayPoll(0, store.now));
    EXPECT_EQ(c.net.network.slots().Observed(0), 0u);
    // b's own polls from here on are not overwritten by A's old slot
    b.net.network.slots().Observe(0, 5100);
    store.now += 400;
    b.Tick(store.now);
    store.Flush();
    EXPECT_EQ(b.net.network.slots().Observed(0), 5100u);

    // A writes again: its views are taken, and b leaves it the polls
    TickBoth(store, a, b);
    EXPECT_FALSE(b.sync.MayPoll(0, store.now));
    EXPECT_EQ(b.net.network.host(0).polled_by.Read(), "host-a");
}

// A polling host whose clock is 5 s behind: its views look old to the
// others though it writes them every tick. The others poll for
// themselves, and say once why.
TEST(FleetSync, ClocksApartAreSaidOnce) {
    FakeStore store;
    Host a(store, "host-a", 10), b(store, "host-b", 20);
    a.wall_offset_ms = -5000;
    for (int k = 0; k < 8; k++) {
        TickBoth(store, a, b);
    }
    size_t by_a = a.sync.MayPoll(0, store.now) ? 0 : 1;
    ASSERT_TRUE(a.sync.MayPoll(by_a, store.now));
    EXPECT_TRUE(b.sync.MayPoll(by_a, store.now));
    size_t said = 0;
    for (const std::string& line : b.lines) {
        said += line.find("the two clocks differ") != std::string::npos ? 1 : 0;
    }
    EXPECT_EQ(said, 1u);
}

// Two hosts given one solgate_host_id (cloned machines, one host name)
// are still two holders: each upstream is polled by one of them.
TEST(FleetSync, TwoHostsWithOneHostIdStillPollEachUpstreamOnce) {
    FakeStore store;
    Host a(store, "gw", 10), b(store, "gw", 20);
    ASSERT_NE(a.net.network.Instance(), b.net.network.Instance());
    TickBoth(store, a, b);
    TickBoth(store, a, b);
    for (size_t i = 0; i < 2; i++) {
        EXPECT_NE(a.sync.MayPoll(i, store.now), b.sync.MayPoll(i, store.now))
            << "upstream " << i;
    }
    EXPECT_EQ(store.leases["t:{mainnet}:lease:up-0"].first.rfind("gw#", 0), 0u);
}

// A node whose getSlot polls fail on the host that polls it: the other
// hosts hear so, and make no lag of its last slots; back, current again.
TEST(FleetSync, WhetherANodesSlotPollsFailReachesTheOtherHosts) {
    FakeStore store;
    Host a(store, "host-a", 10), b(store, "host-b", 20);
    TickBoth(store, a, b);
    ASSERT_TRUE(a.sync.MayPoll(1, store.now));
    ASSERT_FALSE(b.sync.MayPoll(1, store.now));
    EXPECT_TRUE(b.net.network.SlotsCurrent(1));
    a.net.network.host(1).slot_polls_failing = 1;
    TickBoth(store, a, b);
    const std::string& pf = store.hashes["t:{mainnet}:views"]["up-1/pf"];
    EXPECT_EQ(pf, store.hashes["t:{mainnet}:views"]["up-1/by"] + "|1");
    EXPECT_FALSE(b.net.network.SlotsCurrent(1));
    EXPECT_TRUE(b.net.network.SlotsCurrent(0));
    a.net.network.host(1).slot_polls_failing = 0;
    TickBoth(store, a, b);
    EXPECT_TRUE(b.net.network.SlotsCurrent(1));
    // a host that publishes no word (an older one): its polls are fine,
    // and a word an earlier writer left is not its
    b.net.network.host(1).slot_polls_failing = 1;
    store.hashes["t:{mainnet}:views"].erase("up-1/pf");
    b.Tick(store.now);
    store.Flush();
    EXPECT_TRUE(b.net.network.SlotsCurrent(1));
    store.hashes["t:{mainnet}:views"]["up-1/pf"] = "host-a@1|1";
    b.Tick(store.now);
    store.Flush();
    EXPECT_TRUE(b.net.network.SlotsCurrent(1)) << "an old word";
}

// A cordon the polling host's poller made reaches the others as it made
// it: since when, why (its note, or the lag it was cordoned at), counted
// and logged there; its lifting too.
TEST(FleetSync, APollerCordonReachesTheOtherHostsWithItsTimeAndReason) {
    FakeStore store;
    Host a(store, "host-a", 10), b(store, "host-b", 20);
    TickBoth(store, a, b);
    ASSERT_FALSE(b.sync.MayPoll(0, store.now) || b.sync.MayPoll(1, store.now));
    CordonStore& on_a = a.net.network.cordons();
    on_a.SetCordonNote(0, "svm state poller: getHealth failed: HTTP 503");
    on_a.SwapCordon(0, CordonOwner::kNone,
                    {CordonOwner::kPoller, CordonCause::kUnhealthy, 1700000000123});
    on_a.SetCordonLag(1, 102);
    on_a.SwapCordon(1, CordonOwner::kNone,
                    {CordonOwner::kPoller, CordonCause::kShredLag, 1700000000456});
    TickBoth(store, a, b);
    const CordonStore& on_b = b.net.network.cordons();
    EXPECT_EQ(on_b.Cordon(0).owner, CordonOwner::kPoller);
    EXPECT_EQ(on_b.Cordon(0).since_wall_ms, 1700000000123);
    EXPECT_EQ(CordonReason(b.net.network, 0),
              "svm state poller: getHealth failed: HTTP 503");
    EXPECT_EQ(on_b.Cordon(1).cause, CordonCause::kShredLag);
    EXPECT_EQ(on_b.Cordon(1).since_wall_ms, 1700000000456);
    EXPECT_NE(CordonReason(b.net.network, 1).find("shred-insert lag 102 slots"),
              std::string::npos);
    EXPECT_EQ(b.net.network.host(0).cordon_events.load(), 1u);
    ASSERT_EQ(b.lines.size(), 2u);
    EXPECT_NE(b.lines[0].find("cordoned out of rotation by the state poller "
                              "of host \"host-a\" (fleet): network=mainnet "
                              "upstream=up-0 reason=\"svm state poller: "
                              "getHealth failed: HTTP 503\""),
              std::string::npos)
        << b.lines[0];

    // an operator's cordon over the poller's on the polling host: the
    // other hosts keep the poller's (they never see it "recover")
    a.net.network.OperatorCordon(1, "swap the disk", 1700000000999);
    TickBoth(store, a, b);
    EXPECT_EQ(store.hashes["t:{mainnet}:views"]["up-1/c"], "-");
    EXPECT_NE(on_b.Cordon(1).owner, CordonOwner::kNone);
    size_t lines_before = b.lines.size();

    on_a.SwapCordon(0, CordonOwner::kPoller, CordonState{});
    TickBoth(store, a, b);
    EXPECT_EQ(on_b.Cordon(0).owner, CordonOwner::kNone);
    ASSERT_GT(b.lines.size(), lines_before);
    EXPECT_NE(b.lines.back().find("recovered; uncordoned by the state poller "
                                  "of host \"host-a\" (fleet): "
                                  "network=mainnet upstream=up-0"),
              std::string::npos)
        << b.lines.back();
    for (const std::string& line : b.lines) {
        EXPECT_EQ(line.find("recovered; uncordoned by the state poller of "
                            "host \"host-a\" (fleet): network=mainnet "
                            "upstream=up-1"),
                  std::string::npos)
            << line;
    }
}

// A host whose own poller cordoned an upstream before another host took
// its polls over shows the polling host's cordon: one cause, one time, one
// reason on every host (not counted or logged again: it was cordoned).
TEST(FleetSync, AnOwnPollerCordonGivesWayToThePollingHosts) {
    FakeStore store;
    Host a(store, "host-a", 10), b(store, "host-b", 20);
    CordonStore& on_b = b.net.network.cordons();
    on_b.SetCordonNote(0, "svm state poller: getHealth failed: HTTP 502");
    on_b.SwapCordon(0, CordonOwner::kNone,
                    {CordonOwner::kPoller, CordonCause::kUnhealthy, 1700000000100});
    TickBoth(store, a, b);
    ASSERT_FALSE(b.sync.MayPoll(0, store.now));
    CordonStore& on_a = a.net.network.cordons();
    on_a.SetCordonNote(0, "svm state poller: getHealth failed: HTTP 503");
    on_a.SwapCordon(0, CordonOwner::kNone,
                    {CordonOwner::kPoller, CordonCause::kUnhealthy, 1700000000123});
    size_t lines = b.lines.size();
    TickBoth(store, a, b);
    EXPECT_EQ(on_b.Cordon(0).owner, CordonOwner::kPoller);
    EXPECT_EQ(on_b.Cordon(0).since_wall_ms, 1700000000123);
    EXPECT_EQ(CordonReason(b.net.network, 0),
              "svm state poller: getHealth failed: HTTP 503");
    EXPECT_EQ(b.lines.size(), lines);
    EXPECT_EQ(b.net.network.host(0).cordon_events.load(), 0u);
}

TEST(FleetSync, TheTipsMemoriesNeverGoBackAcrossHosts) {
    FakeStore store;
    Host a(store, "host-a", 10), b(store, "host-b", 20);
    a.net.network.tips().SuggestAnswered(7000);
    a.Tick(store.now);
    store.Flush();
    a.Tick(store.now);   // reads what it wrote
    b.Tick(store.now);
    store.Flush();
    EXPECT_EQ(b.net.network.tips().Answered(), 7000u);
}

TEST(FleetSync, OperatorCordonsReachEveryHostAndOutliveAHostRestart) {
    FakeStore store;
    Host a(store, "host-a", 10), b(store, "host-b", 20);
    TickBoth(store, a, b);   // both know the fleet has no cordon
    a.net.network.OperatorCordon(1, "disk swap", 1700000000000 + store.now);
    TickBoth(store, a, b);
    TickBoth(store, a, b);
    int64_t now = store.now;
    CordonState on_b = b.net.network.cordons().Cordon(1);
    EXPECT_EQ(on_b.owner, CordonOwner::kOperator);
    EXPECT_EQ(b.net.network.cordons().CordonNote(1), "disk swap");

    // host A restarts with empty shared memory: it takes the cordon back
    Host a2(store, "host-a", 11);
    now += 400;
    store.now = now;
    a2.Tick(now);
    store.Flush();
    a2.Tick(now);
    store.Flush();
    EXPECT_EQ(a2.net.network.cordons().Cordon(1).owner, CordonOwner::kOperator);

    // an uncordon on host B reaches it
    b.net.network.OperatorUncordon(1, 1700000000000 + now);
    for (int k = 0; k < 2; k++) {
        now += 400;
        store.now = now;
        b.Tick(now);
        store.Flush();
        a2.Tick(now);
        store.Flush();
    }
    EXPECT_EQ(a2.net.network.cordons().Cordon(1).owner, CordonOwner::kNone);
}

// Host B's clock is behind: its uncordon (at 1300) comes after host A's
// new cordon (at 2100) and is refused; both hosts end with A's.
TEST(FleetSync, TheLatestCordonChangeWinsWhateverTheOrderOfWrites) {
    FakeStore store;
    Host a(store, "host-a", 10), b(store, "host-b", 20);
    auto tick = [&](Host& h, int64_t wall) {
        h.sync.Tick(store.now, wall);
        store.Flush();
    };
    for (size_t i = 0; i < 2; i++) {
        a.net.network.leases().ClaimLease(i, 10, store.now, kLeaseTtlMs);
        b.net.network.leases().ClaimLease(i, 20, store.now, kLeaseTtlMs);
    }
    tick(a, 900);
    tick(b, 900);
    a.net.network.OperatorCordon(0, "first", 1000);
    tick(a, 1000);
    tick(b, 1000);
    ASSERT_EQ(b.net.network.cordons().CordonNote(0), "first");
    a.net.network.OperatorCordon(0, "second", 2100);
    tick(a, 2100);
    b.net.network.OperatorUncordon(0, 1300);
    tick(b, 1300);
    tick(b, 1400);
    tick(a, 2200);
    EXPECT_EQ(b.net.network.cordons().Cordon(0).owner, CordonOwner::kOperator);
    EXPECT_EQ(b.net.network.cordons().CordonNote(0), "second");
    EXPECT_EQ(a.net.network.cordons().Cordon(0).owner, CordonOwner::kOperator);
}

// Changes made while the store was unreachable are ordered by when the
// operators made them, not by when each host could write them: host B's
// uncordon (earlier) loses to host A's cordon (later), whichever host
// writes first once the store is back, and even if it came back empty;
// then a cordon nobody changed meanwhile goes back to it too.
TEST(FleetSync, ChangesMadeWhileTheStoreWasDownKeepTheirOwnTimes) {
    for (bool a_writes_first : {true, false}) {
        FakeStore store;
        Host a(store, "host-a", 10), b(store, "host-b", 20);
        const int64_t wall = 1700000000000;
        TickBoth(store, a, b);
        a.net.network.OperatorCordon(0, "before", wall + store.now);
        a.net.network.OperatorCordon(1, "unchanged", wall + store.now);
        TickBoth(store, a, b);
        TickBoth(store, a, b);
        ASSERT_EQ(b.net.network.cordons().CordonNote(0), "before");
        EXPECT_EQ(b.net.network.cordons().Cordon(0).since_wall_ms,
                  a.net.network.cordons().Cordon(0).since_wall_ms)
            << "one cordon, one time on every host";

        store.up = false;
        TickBoth(store, a, b);
        b.net.network.OperatorUncordon(0, wall + store.now + 100);
        a.net.network.OperatorCordon(0, "later word", wall + store.now + 200);
        store.now += 5000;   // the outage lasts; the hosts tick on
        TickBoth(store, a, b);
        store.hashes.clear();   // and the store comes back empty
        store.up = true;
        Host& first = a_writes_first ? a : b;
        Host& second = a_writes_first ? b : a;
        for (int k = 0; k < 3; k++) {
            TickBoth(store, first, second);
        }
        for (Host* h : {&a, &b}) {
            EXPECT_EQ(h->net.network.cordons().Cordon(0).owner,
                      CordonOwner::kOperator)
                << h->sync.Key("") << " a_writes_first=" << a_writes_first;
            EXPECT_EQ(h->net.network.cordons().CordonNote(0), "later word");
        }
        const std::string& kept = store.hashes["t:{mainnet}:cordons"]["up-1"];
        EXPECT_NE(kept.find("|1|unchanged"), std::string::npos) << kept;
    }
}

// The operator state file (`state PATH`) and the fleet: the later change
// wins. A host that restarts takes its cordon (with its time) back from
// its file; a later uncordon made on another host meanwhile beats it, and
// the host's file follows the fleet.
TEST(FleetSync, ALaterFleetChangeBeatsTheHostsFile) {
    TempDir dir("fleet-state");
    FakeStore store;
    Host b(store, "host-b", 20);
    const int64_t wall = 1700000000000;
    auto tick = [&](Host& h) {
        store.now += 400;
        h.Tick(store.now);
        store.Flush();
    };
    {
        Host a(store, "host-a", 10, dir.path());
        tick(a);
        a.net.network.OperatorCordon(1, "disk swap", wall + store.now);
        std::string error;
        ASSERT_EQ(SaveOperatorState(a.net.network, store.now,
                                    wall + store.now, &error),
                  OperatorStateSave::kSaved);
        tick(a);
        tick(b);
        tick(b);
        ASSERT_EQ(b.net.network.cordons().Cordon(1).owner,
                  CordonOwner::kOperator);
    }
    // host A is down; the cordon is lifted on host B
    b.net.network.OperatorUncordon(1, wall + store.now);
    tick(b);
    // host A comes back: its file says cordoned (earlier), the fleet says
    // uncordoned (later)
    Host a2(store, "host-a", 11, dir.path());
    ASSERT_TRUE(RestoreOperatorState(a2.net.network, 0, wall + store.now));
    ASSERT_EQ(a2.net.network.cordons().Cordon(1).owner, CordonOwner::kOperator);
    tick(a2);
    tick(a2);
    EXPECT_EQ(a2.net.network.cordons().Cordon(1).owner, CordonOwner::kNone);
    EXPECT_EQ(b.net.network.cordons().Cordon(1).owner, CordonOwner::kNone);
    // and its file now says what the fleet said
    Host a3(store, "host-a", 12, dir.path());
    RestoreOperatorState(a3.net.network, 0, wall + store.now);
    EXPECT_EQ(a3.net.network.cordons().Cordon(1).owner, CordonOwner::kNone);
}

// A fleet that has no word on an upstream (a new Redis, or one that lost
// its data) takes the host's cordon from its file: the file seeds it.
TEST(FleetSync, TheHostsFileSeedsAFleetWithNoWord) {
    TempDir dir("fleet-state");
    const int64_t wall = 1700000000000;
    {
        testing::TestNetwork before(2, WithState(dir.path()));
        before.network.OperatorCordon(0, "bad disk", wall - 3600000);
        std::string error;
        ASSERT_EQ(SaveOperatorState(before.network, 0, wall, &error),
                  OperatorStateSave::kSaved);
    }
    FakeStore store;
    Host a(store, "host-a", 10, dir.path());
    Host b(store, "host-b", 20);
    ASSERT_TRUE(RestoreOperatorState(a.net.network, 0, wall));
    for (int k = 0; k < 2; k++) {
        store.now += 400;
        a.Tick(store.now);
        store.Flush();
        b.Tick(store.now);
        store.Flush();
    }
    EXPECT_EQ(a.net.network.cordons().Cordon(0).owner, CordonOwner::kOperator);
    EXPECT_EQ(b.net.network.cordons().Cordon(0).owner, CordonOwner::kOperator);
    EXPECT_EQ(b.net.network.cordons().CordonNote(0), "bad disk");
}

// A cordon made on another host is saved into this host's file, so a
// restart while the store is down still has it.
TEST(FleetSync, ACordonFromTheFleetIsSavedToTheHostsFile) {
    TempDir dir("fleet-state");
    FakeStore store;
    Host a(store, "host-a", 10, dir.path());
    Host b(store, "host-b", 20);
    TickBoth(store, a, b);
    b.net.network.OperatorCordon(0, "from b", 1700000000000 + store.now);
    TickBoth(store, a, b);
    TickBoth(store, a, b);
    ASSERT_EQ(a.net.network.cordons().Cordon(0).owner, CordonOwner::kOperator);
    store.up = false;
    Host a2(store, "host-a", 11, dir.path());
    ASSERT_TRUE(RestoreOperatorState(a2.net.network, 0, 1700000000000));
    EXPECT_EQ(a2.net.network.cordons().Cordon(0).owner, CordonOwner::kOperator);
    EXPECT_EQ(a2.net.network.cordons().CordonNote(0), "from b");
}

TEST(FleetSync, WithTheStoreDownEveryHostPollsOnItsOwn) {
    FakeStore store;
    Host a(store, "host-a", 10), b(store, "host-b", 20);
    a.Tick(store.now);
    store.Flush();
    b.Tick(store.now);
    store.Flush();
    ASSERT_FALSE(b.sync.MayPoll(0, store.now));
    EXPECT_EQ(b.net.network.counters().fleet_link.load(), 2u) << "up";
    store.up = false;
    b.Tick(store.now);
    EXPECT_TRUE(b.sync.MayPoll(0, store.now));
    EXPECT_TRUE(b.sync.MayPoll(1, store.now));
    EXPECT_EQ(b.net.network.counters().fleet_link.load(), 1u) << "down";
}

}  // namespace
}  // namespace solgate
