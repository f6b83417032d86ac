// Fleet mode, Cube Runner's long-term storage: two hosts of one region
// (each its own zone, key ledger, queue and transport) claim their blocks
// from one region (a fake that keeps the contract of region_retrievals.h
// in memory, answering later as the store does). The Lua scripts that
// keep it in Redis are run by t/100-fleet.t against a real redis-server.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "support/blocks_zone.h"
#include "support/fakes.h"
#include "blocks/block_answers.h"
#include "blocks/block_capture.h"
#include "blocks/long_term_retriever.h"

namespace solgate {
namespace {

using testing::Accept;
using testing::BlockReply;
using testing::FakeClock;
using testing::FakeTransport;
using testing::GetBlockRequest;
using testing::TestNetwork;

HttpResult Ok(const std::string& body) { return HttpResult{0, "", 200, body}; }
HttpResult Unavailable() { return HttpResult{0, "", 503, "{}"}; }

// What the store holds for the region.
struct FakeRegionState {
    struct Block {
        std::string holder;   // HOST/TOKEN
        bool done = false;
        bool expired = false;   // its holder's ttl passed
        std::set<std::string> counted;
    };
    std::map<std::pair<std::string, uint64_t>, Block> blocks;
    std::map<std::string, uint64_t> used;          // this month's counts
    std::map<size_t, std::string> leaders;         // plan -> host
    std::map<size_t, std::deque<RegionAsk>> intake;  // plan -> forwarded
    std::set<std::pair<std::string, uint64_t>> received;  // key, slot
};

class FakeRegion : public RegionRetrievals {
public:
    bool Up() const override { return up; }

    void Claim(const RegionAsk& ask, int64_t,
               std::function<void(RegionClaim)> done) override {
        claims++;
        RegionClaim c;
        if (!up) {
            done(c);
            return;
        }
        std::pair<std::string, uint64_t> id{ask.variant, ask.slot};
        FakeRegionState::Block& b = blocks[id];
        std::string me = host + "/" + ask.token;
        if (!b.holder.empty() && !b.done && b.expired) {
            b.holder.clear();   // its holder died: taken over
            b.expired = false;
        }
        bool fresh = b.holder.empty();
        if (!fresh && b.holder != me) {
            c.kind = b.done ? RegionClaim::kDone : RegionClaim::kElsewhere;
        } else if (fresh && wait_ms > 0) {
            c.kind = RegionClaim::kWait;
            c.wait_ms = wait_ms;
            if (b.counted.empty()) {
                blocks.erase(id);
            }
            later.push_back([done, c] { done(c); });
            return;
        } else {
            c.kind = RegionClaim::kMine;
        }
        bool any = false;
        for (const std::string& key : ask.keys) {
            bool had = b.counted.count(key) > 0;
            bool counts = !had && c.kind != RegionClaim::kDone &&
                          (ask.allowance == 0 || used[key] < ask.allowance);
            if (counts) {
                used[key]++;
                b.counted.insert(key);
            }
            any = any || had || counts;
            c.counted.push_back(counts);
            c.in_claim.push_back(had || counts);
            c.used.push_back(used[key]);
        }
        if (c.kind == RegionClaim::kMine) {
            if (any) {
                b.holder = me;
            } else {
                c.kind = RegionClaim::kSpent;
            }
        }
        if (b.holder.empty() && b.counted.empty()) {
            blocks.erase(id);
        }
        later.push_back([done, c] { done(c); });
    }

    void Finish(const RegionAsk& ask, bool ok,
                std::function<void(std::optional<Finished>)> done) override {
        if (!up) {
            done(std::nullopt);
            return;
        }
        auto it = blocks.find({ask.variant, ask.slot});
        Finished f;
        if (it != blocks.end() && it->second.holder == host + "/" + ask.token) {
            if (ok) {
                it->second.done = true;
                for (const std::string& key : ask.keys) {
                    if (it->second.counted.count(key) == 0 &&
                        (ask.allowance == 0 || used[key] < ask.allowance)) {
                        used[key]++;
                        it->second.counted.insert(key);
                        f.counted++;
                    }
                    f.used.emplace_back(key, used[key]);
                }
            } else {
                for (const std::string& key : it->second.counted) {
                    f.used.emplace_back(key, --used[key]);
                }
                blocks.erase(it);
            }
        }
        later.push_back([done, f] { done(f); });
    }

    void Lead(size_t plan, int64_t,
              std::function<void(std::optional<LeadState>)> done) override {
        leads++;
        if (!up) {
            done(std::nullopt);
            return;
        }
        std::string& leader = region.leaders[plan];
        if (leader.empty()) {
            leader = host;
        }
        LeadState now{leader == host, leader};
        later.push_back([done, now] { done(now); });
    }

    void Forward(const RegionAsk& ask) override {
        if (up) {
            forwards++;
            region.intake[ask.plan].push_back(ask);
        }
    }

    void TakeForwarded(
        size_t plan, size_t max,
        std::function<void(std::optional<std::vector<RegionAsk>>)> done)
        override {
        if (!up) {
            done(std::nullopt);
            return;
        }
        std::deque<RegionAsk>& q = region.intake[plan];
        std::vector<RegionAsk> out;
        while (!q.empty() && out.size() < max) {
            out.push_back(std::move(q.front()));
            q.pop_front();
        }
        later.push_back([done, out] { done(out); });
    }

    void Peek(const std::vector<RegionAsk>& asks,
              std::function<void(std::optional<std::vector<std::string>>)>
                  done) override {
        peeks++;
        if (!up) {
            done(std::nullopt);
            return;
        }
        std::vector<std::string> states;
        for (const RegionAsk& ask : asks) {
            auto it = blocks.find({ask.variant, ask.slot});
            states.push_back(it == blocks.end() || it->second.holder.empty()
                                 ? ""
                             : it->second.done ? "done"
                                               : "retrieving");
        }
        later.push_back([done, states] { done(states); });
    }

    void NoteReceipts(const std::vector<RegionReceipt>& receipts) override {
        if (up) {
            for (const RegionReceipt& r : receipts) {
                region.received.insert({r.key, r.slot});
            }
        }
    }

    void FindReceived(const RegionAsk& ask,
                      std::function<void(std::optional<std::vector<bool>>)>
                          done) override {
        if (!up) {
            done(std::nullopt);
            return;
        }
        std::vector<bool> got;
        for (const std::string& key : ask.keys) {
            got.push_back(region.received.count({key, ask.slot}) > 0);
        }
        later.push_back([done, got] { done(got); });
    }

    void ReadCounts(int64_t,
                    std::function<void(std::optional<std::vector<
                                           std::pair<std::string, uint64_t>>>)>
                        done) override {
        reads++;
        if (!up) {
            done(std::nullopt);
            return;
        }
        std::vector<std::pair<std::string, uint64_t>> all(used.begin(),
                                                          used.end());
        later.push_back([done, all] { done(all); });
    }

    // The store's answers arrive.
    void Flush() {
        while (!later.empty()) {
            auto fn = std::move(later.front());
            later.pop_front();
            fn();
        }
    }

    // The region, shared by the hosts; `host` is the one asking (each host
    // has its own FakeRegion view over the same state).
    std::string host;
    bool up = true;
    int64_t wait_ms = 0;
    int claims = 0;
    int reads = 0;
    int leads = 0;
    int forwards = 0;
    int peeks = 0;
    FakeRegionState& region;
    std::map<std::pair<std::string, uint64_t>, FakeRegionState::Block>&
        blocks;
    std::map<std::string, uint64_t>& used;
    std::deque<std::function<void()>> later;

    FakeRegion(std::string h, FakeRegionState& state)
        : host(std::move(h)),
          region(state),
          blocks(state.blocks),
          used(state.used) {}
};

BlockConfBuilder AnArchivePlanOfTwo() {
    BlockConfBuilder conf;
    Accept(conf.Region("us"));
    Accept(conf.LongTermStorage("http://lts/"));
    Accept(conf.PlanDefine("arch", {"tier=archive", "getblock_rate=0",
                                    "retrieval_rate=10r/s", "queue_limit=20",
                                    "monthly_allowance=2"}));
    return conf;
}

// One host: its network, zone, ledger, queue, retriever and transport.
struct Host {
    Host(const std::string& name, FakeClock& clock, FakeRegionState& state)
        : net(1),
          rig(net.network, "solgate-region-" + name, AnArchivePlanOfTwo()),
          service(rig.service()),
          region(name, state),
          clock_(clock) {
        EXPECT_EQ(rig.error(), "");
        net.network.record(0).first_available_plus1.store(4001);
        net.network.record(0).SuggestFinalized(5000);
        retriever = std::make_unique<LongTermRetriever>(
            service->long_term(), service->cache(), transport, clock,
            [](int, const std::string&) {}, 7);
        retriever->SetRegion(&region);
    }

    BlockDecision Ask(uint64_t slot, const std::string& key) {
        std::string body = GetBlockRequest(slot);
        RpcRequest request = ParseRpcRequest(body.data(), body.size());
        BlockCall call;
        return service->Decide(request, key, "arch", "", clock_.MonotonicMs(),
                               clock_.WallMs(), &call);
    }
    QueueStats Stats() {
        return *service->long_term().Stats(
            testing::PlanIndex(service->conf(), "arch"),
            clock_.MonotonicMs());
    }
    uint64_t Allowance(const std::string& key) {
        return service->allowances().AllowanceUsed(key, clock_.WallMs());
    }
    // A retriever tick, then the region's answers.
    void Tick() {
        retriever->Tick();
        region.Flush();
    }
    void AnswerStorage(HttpResult (*reply)(uint64_t)) {
        transport.AnswerEach([reply](const FakeTransport::Pending& p) {
            size_t at = p.body.find("[") + 1;
            return reply(std::stoull(p.body.substr(at)));
        });
        region.Flush();
    }

    TestNetwork net;
    testing::BlockServiceRig rig;
    BlockService* service;
    FakeTransport transport;
    FakeRegion region;
    FakeClock& clock_;
    std::unique_ptr<LongTermRetriever> retriever;
};

HttpResult TheBlock(uint64_t slot) { return Ok(BlockReply(slot)); }
HttpResult NoBlock(uint64_t) { return Unavailable(); }

class RegionLongTermTest : public ::testing::Test {
protected:
    // A leads the plan's region queue (it asked first), B forwards to it.
    RegionLongTermTest()
        : a("a", clock, state), b("b", clock, state) {
        a.Tick();
        b.Tick();
    }

    // Both hosts tick, 200 ms apart (the plan's rate allows one each).
    void TickBoth() {
        clock.Advance(200);
        a.Tick();
        b.Tick();
    }

    FakeClock clock;
    FakeRegionState state;
    std::map<std::pair<std::string, uint64_t>, FakeRegionState::Block>&
        blocks = state.blocks;
    std::map<std::string, uint64_t>& used = state.used;
    Host a;
    Host b;
};

TEST_F(RegionLongTermTest, ABlockAskedOnBothHostsIsRetrievedOnce) {
    EXPECT_EQ(a.Ask(250, "k1").http_status, 429u);
    EXPECT_EQ(b.Ask(250, "k2").http_status, 429u);
    TickBoth();
    // A, the leader, claimed and fetches it; B forwarded k2 to A's queue.
    EXPECT_EQ(b.transport.pending.size(), 0u);
    ASSERT_EQ(a.transport.pending.size(), 1u);
    EXPECT_EQ(b.region.forwards, 1);
    BlockDecision d = b.Ask(250, "k2");
    EXPECT_NE(d.body.find(R"("queuePosition":1)"), std::string::npos)
        << d.body;
    clock.Advance(kRegionTakeEveryMs);
    a.Tick();   // k2 joins A's retrieval
    a.AnswerStorage(TheBlock);
    EXPECT_EQ(a.Ask(250, "k1").kind, BlockDecision::kCache);
    EXPECT_EQ(used["k1"], 1u);
    EXPECT_EQ(used["k2"], 1u);
    // B sees the claim done and lets the block go.
    clock.Advance(kRegionPeekEveryMs);
    b.Tick();
    EXPECT_EQ(b.retriever->waiting(), 0u);
    EXPECT_EQ(b.retriever->started(), 0u);
    EXPECT_EQ(a.Allowance("k1"), 1u);
    clock.Advance(kRegionCountsEveryMs);
    b.Tick();
    EXPECT_EQ(b.Allowance("k2"), 1u);   // B's copy of the region's count
    // the metrics: retrieved on A, neither retrieved nor failed on B
    EXPECT_EQ(a.Stats().retrieved, 1u);
    EXPECT_EQ(b.Stats().retrieved, 0u);
    EXPECT_EQ(b.Stats().failed, 0u);
    EXPECT_EQ(b.Stats().in_flight + b.Stats().depth, 0u);
}

TEST_F(RegionLongTermTest, AnAllowanceOfTwoIsTwoRetrievalsAcrossHosts) {
    // Each host admits two (its copy says none used), four are queued.
    for (uint64_t slot : {300, 301, 302, 303, 304}) {
        a.Ask(slot, "k1");
    }
    for (uint64_t slot : {310, 311, 312, 313, 314}) {
        b.Ask(slot, "k1");
    }
    // until B has read the region's counts and looked again at what it
    // forwarded
    for (int i = 0; i < 16; i++) {
        TickBoth();
        a.AnswerStorage(TheBlock);
        b.AnswerStorage(TheBlock);
    }
    EXPECT_EQ(a.retriever->started() + b.retriever->started(), 2u);
    EXPECT_EQ(used["k1"], 2u);
    // Both hosts now know it is spent.
    EXPECT_EQ(a.Allowance("k1"), 2u);
    EXPECT_EQ(b.Allowance("k1"), 2u);
    BlockDecision d = b.Ask(320, "k1");
    EXPECT_NE(d.body.find(R"("reason":"allowance")"), std::string::npos)
        << d.body;
    EXPECT_EQ(a.retriever->waiting() + b.retriever->waiting(), 0u);
    EXPECT_EQ(b.Stats().in_flight + b.Stats().depth, 0u);
}

TEST_F(RegionLongTermTest, AFailedRetrievalGivesTheCountBack) {
    a.Ask(400, "k1");
    TickBoth();
    ASSERT_EQ(a.transport.pending.size(), 1u);
    EXPECT_EQ(used["k1"], 1u);
    a.AnswerStorage(NoBlock);   // the only endpoint: failed
    EXPECT_EQ(used["k1"], 0u);
    EXPECT_EQ(a.Allowance("k1"), 0u);
    EXPECT_TRUE(blocks.empty()) << "another host may claim it";
}

TEST_F(RegionLongTermTest, NothingIsFetchedWhileTheStoreIsDown) {
    a.region.up = false;
    a.Ask(500, "k1");
    for (int i = 0; i < 5; i++) {
        TickBoth();
    }
    EXPECT_TRUE(a.transport.pending.empty());
    EXPECT_EQ(a.retriever->waiting(), 1u);   // kept, asked again
    a.region.up = true;
    clock.Advance(kRegionAskAgainMs);
    a.Tick();
    EXPECT_EQ(a.transport.pending.size(), 1u);
    a.AnswerStorage(TheBlock);
    EXPECT_EQ(used["k1"], 1u);
}

TEST_F(RegionLongTermTest, TheRegionsPaceMakesTheHostWait) {
    a.region.wait_ms = 300;
    a.Ask(600, "k1");
    TickBoth();
    EXPECT_TRUE(a.transport.pending.empty());
    a.region.wait_ms = 0;
    clock.Advance(300);
    a.Tick();
    EXPECT_EQ(a.transport.pending.size(), 1u);
}

TEST_F(RegionLongTermTest, AHolderThatDiesLetsAnotherHostClaim) {
    a.Ask(700, "k1");
    b.Ask(700, "k2");
    TickBoth();
    ASSERT_EQ(a.transport.pending.size(), 1u);
    clock.Advance(kRegionPeekEveryMs);
    b.Tick();   // B sees A's claim and joins it
    EXPECT_EQ(used["k2"], 1u) << "counted as it joined A's claim";
    blocks.begin()->second.expired = true;   // A died: its ttl passed
    clock.Advance(kRegionAskAgainMs);
    b.Tick();        // B's next claim takes it over
    EXPECT_EQ(b.transport.pending.size(), 1u);
    b.AnswerStorage(TheBlock);
    EXPECT_EQ(used["k1"], 1u) << "not counted again by the takeover";
    EXPECT_EQ(used["k2"], 1u);
}

TEST_F(RegionLongTermTest, TheSameHostsSecondRetrievalWaitsForTheFirst) {
    a.Ask(1000, "k1");
    TickBoth();
    ASSERT_EQ(a.transport.pending.size(), 1u);
    // the first is slow: its queue hands the block out again
    clock.Advance(kRetrievalStaleMs);
    a.Ask(1000, "k1");
    a.Tick();
    EXPECT_EQ(a.transport.pending.size(), 1u) << "no second fetch";
    a.AnswerStorage(TheBlock);
    clock.Advance(kRegionAskAgainMs);
    a.Tick();
    EXPECT_EQ(a.retriever->waiting(), 0u);
    EXPECT_EQ(a.retriever->started(), 1u);
    EXPECT_EQ(used["k1"], 1u);
}

TEST_F(RegionLongTermTest, KeysJoiningAnotherHostsRetrievalAreCountedAsTheyJoin) {
    a.Ask(1100, "k1");
    b.Ask(1100, "k2");
    TickBoth();
    ASSERT_EQ(a.transport.pending.size(), 1u);
    b.Ask(1100, "k3");   // joins on B while A retrieves
    clock.Advance(kRegionPeekEveryMs);
    b.Tick();
    EXPECT_EQ(used["k2"], 1u);
    EXPECT_EQ(used["k3"], 1u);
    a.AnswerStorage(TheBlock);
    // once done, a key asking for it gets the cached copy: nothing counted
    b.Ask(1100, "k4");
    clock.Advance(kRegionAskAgainMs);
    b.Tick();
    EXPECT_EQ(used.count("k4") ? used["k4"] : 0u, 0u);
    EXPECT_EQ(b.retriever->waiting(), 0u);
}

TEST_F(RegionLongTermTest, WithTheStoreDownLongTermRequestsPause) {
    a.net.network.counters().fleet_link.store(kFleetLinkDown);
    BlockDecision d = a.Ask(800, "k1");
    EXPECT_EQ(d.http_status, 429u);
    EXPECT_EQ(d.retry_after_s, kSharedStateRetryAfterS);
    EXPECT_NE(d.body.find(R"("reason":"shared_state_unavailable")"),
              std::string::npos)
        << d.body;
    TickBoth();
    EXPECT_EQ(a.region.claims, 0) << "nothing was queued";
    a.net.network.counters().fleet_link.store(kFleetLinkUp);
    EXPECT_NE(a.Ask(800, "k1").body.find("queuePosition"), std::string::npos);
}

TEST_F(RegionLongTermTest, AHostLearnsWhatOtherHostsCountedWithinSeconds) {
    // A spends k1's allowance; B, which never claimed for k1, hears of it
    // from the region's counts and refuses k1 at once.
    for (uint64_t slot : {900, 901}) {
        a.Ask(slot, "k1");
    }
    for (int i = 0; i < 4; i++) {
        TickBoth();
        a.AnswerStorage(TheBlock);
    }
    EXPECT_EQ(used["k1"], 2u);
    EXPECT_EQ(b.Allowance("k1"), 0u) << "B claimed nothing";
    int reads = b.region.reads;
    clock.Advance(kRegionCountsEveryMs);
    b.Tick();   // B's retriever holds its lease and reads the counts
    EXPECT_EQ(b.region.reads, reads + 1);
    EXPECT_EQ(b.Allowance("k1"), 2u);
    BlockDecision d = b.Ask(903, "k1");
    EXPECT_NE(d.body.find(R"("reason":"allowance")"), std::string::npos)
        << d.body;
}

TEST_F(RegionLongTermTest, AKeyThatStartsWaitingAfterTheClaimIsCountedAtTheEnd) {
    a.Ask(1200, "k1");
    TickBoth();
    ASSERT_EQ(a.transport.pending.size(), 1u);
    a.Ask(1200, "k5");   // joins on the holder's host, after its claim
    a.AnswerStorage(TheBlock);
    EXPECT_EQ(used["k5"], 1u) << "counted, as one host alone counts it";
    EXPECT_EQ(a.Allowance("k5"), 1u);
    EXPECT_EQ(used["k1"], 1u) << "and k1 not again";
}

TEST_F(RegionLongTermTest, TheRegionsQueueTakesTurnsAcrossHosts) {
    // k1 asks A for two blocks, then k2 asks B for one: the leader's queue
    // gives k2 its turn before k1's second block (each key's newest
    // first), and fetches all three.
    a.Ask(300, "k1");
    a.Ask(301, "k1");
    b.Ask(310, "k2");
    std::vector<uint64_t> order;
    for (int i = 0; i < 6; i++) {
        clock.Advance(200);
        b.Tick();   // forwards before A takes the intake
        a.Tick();
        for (const FakeTransport::Pending& p : a.transport.pending) {
            order.push_back(std::stoull(p.body.substr(p.body.find("[") + 1)));
        }
        a.AnswerStorage(TheBlock);
    }
    EXPECT_EQ(order, (std::vector<uint64_t>{301, 310, 300}));
    EXPECT_EQ(b.retriever->started(), 0u);
    EXPECT_EQ(used["k2"], 1u);
}

TEST_F(RegionLongTermTest, KeysThatJoinAForwardedBlockAreForwardedToo) {
    std::deque<RegionAsk>& intake =
        state.intake[testing::PlanIndex(b.service->conf(), "arch")];
    b.Ask(600, "k2");
    clock.Advance(200);
    b.Tick();   // forwarded; A does not take it yet
    ASSERT_EQ(intake.size(), 1u);
    b.Ask(600, "k3");
    clock.Advance(kRegionPeekEveryMs);
    b.Tick();   // no claim yet, and a key joined: forwarded again
    ASSERT_EQ(intake.size(), 2u);
    EXPECT_EQ(intake.back().keys,
              (std::vector<std::string>{"k2", "k3"}));
    clock.Advance(kRegionPeekEveryMs);
    b.Tick();   // nothing new: not forwarded again
    EXPECT_EQ(intake.size(), 2u);
    clock.Advance(kRegionTakeEveryMs);
    a.Tick();   // A takes both (one block, two keys) ...
    clock.Advance(200);
    a.Tick();   // ... and claims it
    ASSERT_EQ(a.transport.pending.size(), 1u);
    EXPECT_EQ(used["k2"], 1u);
    EXPECT_EQ(used["k3"], 1u);
}

TEST_F(RegionLongTermTest, AFollowerLeadsWhenTheLeaderIsGone) {
    b.Ask(650, "k2");
    clock.Advance(200);
    b.Tick();   // forwarded to A, which died before taking it
    EXPECT_TRUE(b.transport.pending.empty());
    state.leaders.clear();   // A's lease expired
    state.intake.clear();
    clock.Advance(kRegionLeadEveryMs);
    b.Tick();   // B leads now
    clock.Advance(kRegionPeekEveryMs);
    b.Tick();   // puts what it had forwarded back into its queue ...
    clock.Advance(200);
    b.Tick();   // ... which hands it out
    EXPECT_EQ(b.transport.pending.size(), 1u);
    b.AnswerStorage(TheBlock);
    EXPECT_EQ(used["k2"], 1u);
    EXPECT_EQ(b.Stats().retrieved, 1u);
}

TEST_F(RegionLongTermTest, NothingIsHandedOutBeforeTheLeaderIsKnown) {
    Host c("c", clock, state);
    c.region.up = false;   // it cannot ask who leads
    c.Ask(660, "k2");
    for (int i = 0; i < 5; i++) {
        clock.Advance(200);
        c.Tick();
    }
    EXPECT_EQ(c.Stats().depth, 1u) << "still queued";
    EXPECT_EQ(c.retriever->waiting(), 0u);
    EXPECT_EQ(c.region.forwards + c.region.claims, 0);
}

TEST_F(RegionLongTermTest, ARetrievalForAKeyThatReceivedTheBlockOnAnotherHostIsARepeat) {
    // k2 received block 1300 on B (its receipt went to the region), then
    // the block left every cache; k2 asks B again and A retrieves it.
    b.service->KeepRegionReceipts();
    b.service->cache().NoteReceipt("k2", 1300, clock.WallMs());
    b.region.NoteReceipts(b.service->TakeRegionReceipts());
    b.Ask(1300, "k2");
    for (int i = 0; i < 3; i++) {
        clock.Advance(200);
        b.Tick();
        a.Tick();
    }
    ASSERT_EQ(a.transport.pending.size(), 1u);
    a.AnswerStorage(TheBlock);
    EXPECT_EQ(a.service->allowances().RepeatCount("k2", clock.WallMs()), 1u)
        << "A's ledger never saw k2's receipt: the region's did";
    EXPECT_EQ(a.service->zone().counters().repeats_counted[testing::PlanIndex(
                  a.service->conf(), "arch")].load(),
              1u);
    EXPECT_EQ(a.service->allowances().RepeatCount("k1", clock.WallMs()), 0u);
}

TEST_F(RegionLongTermTest, OnlyReceiptsOfBlocksTheLedgerMayDropWithinADayGoToTheRegion) {
    a.service->cache().NoteReceipt("k1", 1400, clock.WallMs());
    EXPECT_TRUE(a.service->TakeRegionReceipts().empty()) << "not kept yet";
    a.service->KeepRegionReceipts();
    // the ledger's first slot is 4000
    uint64_t horizon = 4000 + kReceiptHorizonSlots;
    for (uint64_t slot : {uint64_t{1400}, horizon - 1, horizon, horizon + 9}) {
        a.service->cache().NoteReceipt("k1", slot, clock.WallMs());
    }
    std::vector<RegionReceipt> kept = a.service->TakeRegionReceipts();
    ASSERT_EQ(kept.size(), 2u);
    EXPECT_EQ(kept[0].slot, 1400u);
    EXPECT_EQ(kept[1].slot, horizon - 1);
    EXPECT_EQ(kept[0].key, "k1");
    EXPECT_TRUE(a.service->TakeRegionReceipts().empty()) << "taken once";
}

TEST_F(RegionLongTermTest, ABlockDoneElsewhereStaysUntilAPeerListsIt) {
    bool listed = false;
    b.retriever->SetHeldInRegion(
        [&listed](uint64_t, const std::string&) { return listed; });
    b.Ask(1500, "k2");
    TickBoth();
    clock.Advance(kRegionTakeEveryMs);
    a.Tick();
    clock.Advance(200);
    a.Tick();
    ASSERT_EQ(a.transport.pending.size(), 1u);
    a.AnswerStorage(TheBlock);
    clock.Advance(kRegionPeekEveryMs);
    b.Tick();   // done on A, which B's summaries do not list yet
    BlockDecision d = b.Ask(1500, "k2");
    EXPECT_NE(d.body.find(R"("queuePosition":1)"), std::string::npos)
        << "told to ask again, not refused: " << d.body;
    EXPECT_EQ(b.retriever->waiting(), 1u);
    listed = true;
    clock.Advance(kRegionAskAgainMs);
    b.Tick();
    EXPECT_EQ(b.retriever->waiting(), 0u);
    EXPECT_EQ(b.Stats().in_flight + b.Stats().depth, 0u);
}

TEST_F(RegionLongTermTest, ABlockDoneElsewhereLeavesWhenNoPeerListsItInTime) {
    b.retriever->SetHeldInRegion([](uint64_t, const std::string&) {
        return false;
    });
    b.Ask(1600, "k2");
    TickBoth();
    clock.Advance(kRegionTakeEveryMs);
    a.Tick();
    clock.Advance(200);
    a.Tick();
    a.AnswerStorage(TheBlock);
    clock.Advance(kRegionPeekEveryMs);
    b.Tick();
    EXPECT_EQ(b.retriever->waiting(), 1u);
    for (int64_t t = 0; t < kRegionPeerWaitMs; t += kRegionAskAgainMs) {
        clock.Advance(kRegionAskAgainMs);
        b.Tick();
    }
    EXPECT_EQ(b.retriever->waiting(), 0u);
}

TEST_F(RegionLongTermTest, AKeyWhoseLastRetrievalIsTheBlockItWaitsForIsNotRefused) {
    // k1 (allowance 2) waits on A for 1701 and on B for 1700; A retrieves
    // both. B then reads k1's count (2, spent), yet 1700 was retrieved for
    // k1: B's client is told to ask again until A's summary lists it.
    b.retriever->SetHeldInRegion([](uint64_t, const std::string&) {
        return false;
    });
    a.Ask(1701, "k1");
    b.Ask(1700, "k1");
    clock.Advance(kRegionCountsEveryMs - kRegionPeekEveryMs + 100);
    b.Tick();   // forwarded; B looks at it again 100 ms after its next read
    for (int i = 0; i < 3; i++) {
        clock.Advance(200);
        a.Tick();
        a.AnswerStorage(TheBlock);
    }
    EXPECT_EQ(a.retriever->started(), 2u);
    EXPECT_EQ(used["k1"], 2u);
    // B reads the counts first, then looks at 1700 for the first time
    clock.Advance(kRegionPeekEveryMs - 100 - 600);
    b.Tick();
    EXPECT_EQ(b.Allowance("k1"), 2u);
    EXPECT_EQ(b.region.peeks, 0) << "not looked at yet";
    clock.Advance(100);
    b.Tick();   // B looks at 1700, knowing k1 spent
    BlockDecision d = b.Ask(1700, "k1");
    EXPECT_NE(d.body.find(R"("queuePosition":1)"), std::string::npos)
        << d.body;
}

TEST_F(RegionLongTermTest, ABlockForwardedToALeaderThatHoldsItIsNotQueuedAgain) {
    a.retriever->SetHeldInRegion([this](uint64_t slot,
                                        const std::string& variant) {
        return a.service->HeldInRegion(slot, variant, clock.MonotonicMs());
    });
    a.Ask(2000, "k1");
    clock.Advance(200);
    a.Tick();
    ASSERT_EQ(a.transport.pending.size(), 1u);
    a.AnswerStorage(TheBlock);
    ASSERT_EQ(a.Ask(2000, "k1").kind, BlockDecision::kCache);
    b.Ask(2000, "k2");   // before A's summary reaches B
    clock.Advance(200);
    b.Tick();            // forwarded
    clock.Advance(kRegionTakeEveryMs);
    a.Tick();
    EXPECT_EQ(a.Stats().depth + a.Stats().in_flight, 0u)
        << "a block A's cache holds, queued again";
    blocks.clear();      // even once its done claim is gone
    clock.Advance(200);
    a.Tick();
    EXPECT_EQ(a.transport.pending.size(), 0u) << "retrieved a second time";
    EXPECT_EQ(used.count("k2") ? used["k2"] : 0u, 0u);
}

TEST_F(RegionLongTermTest, AFollowerForwardsAgainToANewLeaderOnAnotherHost) {
    Host c("c", clock, state);
    c.Tick();
    b.Ask(2100, "k2");
    clock.Advance(200);
    b.Tick();                 // forwarded to A
    state.intake.clear();     // A took it, then died
    state.leaders.clear();
    clock.Advance(kRegionLeadEveryMs);
    c.Tick();                 // C leads
    for (int i = 0; i < 4; i++) {
        clock.Advance(kRegionPeekEveryMs);
        b.Tick();
        c.Tick();
    }
    EXPECT_EQ(c.transport.pending.size(), 1u)
        << "B heard that C leads and forwarded to it";
}

TEST_F(RegionLongTermTest, AFollowerForwardsAllItsBlocksAtOnce) {
    for (uint64_t slot : {2200, 2201, 2202, 2203}) {
        b.Ask(slot, "k" + std::to_string(slot));
    }
    int before = b.region.forwards;
    clock.Advance(200);
    b.Tick();
    EXPECT_EQ(b.region.forwards - before, 4);
}

TEST_F(RegionLongTermTest, ANewLeaderOrdersAndPacesWhatItHadForwarded) {
    for (uint64_t slot : {2300, 2301, 2302, 2303}) {
        b.Ask(slot, "k" + std::to_string(slot));
    }
    clock.Advance(200);
    b.Tick();   // all four forwarded to A, which dies
    state.leaders.clear();
    state.intake.clear();
    clock.Advance(kRegionLeadEveryMs);
    b.Tick();   // B leads
    clock.Advance(kRegionPeekEveryMs);
    b.Tick();   // its forwarded blocks back in its queue
    EXPECT_LE(b.transport.pending.size(), 1u) << "paced at 10 r/s";
    std::vector<uint64_t> order;
    for (int i = 0; i < 6; i++) {
        EXPECT_LE(b.transport.pending.size(), 1u) << "one a tick";
        for (const FakeTransport::Pending& p : b.transport.pending) {
            order.push_back(std::stoull(p.body.substr(p.body.find("[") + 1)));
        }
        b.AnswerStorage(TheBlock);
        clock.Advance(100);
        b.Tick();
    }
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, (std::vector<uint64_t>{2300, 2301, 2302, 2303}))
        << "each once, in the queue's order";
}

TEST_F(RegionLongTermTest, AClaimedRetrievalIsNotChargedTwiceToItsKeys) {
    // k1 (allowance 2): A's claim of 2400 counted it in the region and in
    // A's copy while 2400 is still being retrieved; a second block for k1
    // is one more of its two, not past it.
    a.Ask(2400, "k1");
    clock.Advance(200);
    a.Tick();
    ASSERT_EQ(a.transport.pending.size(), 1u);
    ASSERT_EQ(a.Allowance("k1"), 1u);
    BlockDecision d = a.Ask(2401, "k1");
    EXPECT_NE(d.body.find(R"("queuePosition")"), std::string::npos)
        << d.body;
    clock.Advance(200);
    a.Tick();
    EXPECT_EQ(a.transport.pending.size(), 2u);
    EXPECT_EQ(used["k1"], 2u);
    // and a third is past it
    d = a.Ask(2402, "k1");
    EXPECT_NE(d.body.find(R"("reason":"allowance")"), std::string::npos)
        << d.body;
}

TEST_F(RegionLongTermTest, AForwardedAskIsAdmittedBesideTheLeadersClaimedOne) {
    // The leader's queue takes a follower's ask for k1 while its own claim
    // for k1 is in flight: both are retrieved (t/100 TEST 6 waited 30 s
    // for the follower's next forward).
    a.Ask(2500, "k1");
    clock.Advance(200);
    a.Tick();
    ASSERT_EQ(a.transport.pending.size(), 1u);
    b.Ask(2510, "k1");
    clock.Advance(200);
    b.Tick();   // forwarded
    clock.Advance(kRegionTakeEveryMs);
    a.Tick();
    clock.Advance(200);
    a.Tick();
    EXPECT_EQ(a.transport.pending.size(), 2u) << "the forwarded ask dropped";
    EXPECT_EQ(used["k1"], 2u);
    a.AnswerStorage(TheBlock);
    clock.Advance(kRegionPeekEveryMs);
    b.Tick();
    EXPECT_EQ(b.retriever->waiting(), 0u);
}

}  // namespace
}  // namespace solgate
