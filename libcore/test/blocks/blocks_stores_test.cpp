// The seam Cube Runner's shared state sits behind: with other stores put
// in front of the zone's and the ledger's (as fleet mode will), the
// decider, the long-term queues, the retriever, region sync, the cache's
// receipts and the view all go through them, and the zone's own keys,
// leases and queues are never touched. Only the host's counters stay in
// the zone.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "blocks/block_sync.h"
#include "blocks/long_term_retriever.h"
#include "support/blocks_zone.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::Accept;
using testing::FakeClock;
using testing::FakeTransport;
using testing::TestNetwork;

constexpr uint32_t kPid = 7;

// Keys kept in a map, as another store would keep them: ids in order of
// arrival, a refusal for the ids the test names.
class MapKeyStore : public KeyStore {
public:
    std::optional<KeyId> FindOrAdd(std::string_view key, uint32_t plan_index,
                                   int64_t) override {
        auto [it, added] =
            ids.try_emplace(std::string(key), static_cast<KeyId>(keys.size()));
        if (added) {
            KeySnapshot s;
            s.id = static_cast<KeyId>(keys.size());
            s.key.assign(key);
            s.key_length = static_cast<uint32_t>(key.size());
            keys.push_back(s);
        }
        keys[it->second].plan_index = plan_index;
        return it->second;
    }
    LimitVerdict CheckRate(KeyId key, double rate_per_sec, int64_t) override {
        keys[key].requests++;
        last_rate = rate_per_sec;
        if (refused.count(key) > 0) {
            keys[key].limited++;
            return {false, 1500};
        }
        return {true, 0};
    }
    void RaiseBucket(KeyId key, int64_t tat_us) override {
        raised[key] = std::max(raised[key], tat_us);
    }
    void CountServed(KeyId key, int source) override {
        keys[key].served[source]++;
    }
    std::string Text(KeyId key) const override {
        return key < keys.size() ? keys[key].key : "";
    }
    std::vector<KeySnapshot> Snapshot() const override { return keys; }
    uint64_t TableFull() const override { return 0; }

    std::map<std::string, KeyId> ids;
    std::vector<KeySnapshot> keys;   // by id
    std::set<KeyId> refused;
    std::map<KeyId, int64_t> raised;
    double last_rate = -1;
};

class MapLeaseStore : public LeaseStore {
public:
    bool ClaimLease(size_t lease, uint32_t pid, int64_t now_ms,
                    int64_t ttl_ms) override {
        Lease& held = leases[lease];
        if (held.pid != 0 && held.pid != pid && held.expires_ms > now_ms) {
            return false;
        }
        held = {pid, now_ms + ttl_ms};
        return true;
    }
    void ReleaseLease(size_t lease, uint32_t pid) override {
        auto it = leases.find(lease);
        if (it != leases.end() && it->second.pid == pid) {
            leases.erase(it);
        }
    }
    Lease LeaseHolder(size_t lease) const override {
        auto it = leases.find(lease);
        return it == leases.end() ? Lease{} : it->second;
    }

    std::map<size_t, Lease> leases;
};

// A queue in a map: first come, first served, no pacing; it answers what
// the test says.
class MapQueueStore : public QueueStore {
public:
    using Block = std::pair<uint64_t, std::string>;

    QueueAnswer Request(KeyId key, uint64_t slot, std::string_view variant,
                        int64_t, uint32_t queue_limit, double,
                        const RepeatFn&, const KeyLimitFn& limit) override {
        uint32_t key_limit = limit(key);
        Block block{slot, std::string(variant)};
        uint32_t waits = 0;
        for (const auto& [b, keys] : waiters) {
            waits += keys.count(key) != 0 && b != block &&
                     counted[b].count(key) == 0;
        }
        bool waiting = waiters.count(block) && waiters[block].count(key);
        if (!waiting && waits >= key_limit) {
            return QueueAnswer{QueueOutcome::kAllowanceSpent, 0, 1};
        }
        waiters[block].insert(key);
        last_limit = queue_limit;
        return answer;
    }
    std::optional<Retrieval> Next(int64_t, double, uint32_t, int64_t,
                                  const RepeatFn&) override {
        for (const auto& [block, keys] : waiters) {
            if (out.insert(block).second) {
                Retrieval r;
                r.slot = block.first;
                r.variant = block.second;
                r.waiters.assign(keys.begin(), keys.end());
                r.waiter_count = static_cast<uint32_t>(keys.size());
                return r;
            }
        }
        return std::nullopt;
    }
    std::vector<KeyId> Waiters(const Retrieval& r) override {
        auto it = waiters.find({r.slot, r.variant});
        return it == waiters.end()
                   ? std::vector<KeyId>()
                   : std::vector<KeyId>(it->second.begin(), it->second.end());
    }
    void MarkCounted(const Retrieval& r,
                     const std::vector<KeyId>& keys) override {
        counted[{r.slot, r.variant}].insert(keys.begin(), keys.end());
    }
    std::vector<KeyId> Complete(const Retrieval& r, bool ok,
                                int64_t) override {
        auto it = waiters.find({r.slot, r.variant});
        if (it == waiters.end()) {
            return {};
        }
        std::vector<KeyId> keys(it->second.begin(), it->second.end());
        waiters.erase(it);
        counted.erase({r.slot, r.variant});
        out.erase({r.slot, r.variant});
        completed.push_back(ok);
        return keys;
    }
    void LetGo(const Retrieval& r, int64_t) override {
        waiters.erase({r.slot, r.variant});
        counted.erase({r.slot, r.variant});
        out.erase({r.slot, r.variant});
        let_go++;
    }
    QueueStats Stats(int64_t) override {
        QueueStats s;
        s.depth = static_cast<uint32_t>(waiters.size() - out.size());
        s.in_flight = static_cast<uint32_t>(out.size());
        return s;
    }

    QueueAnswer answer{QueueOutcome::kQueued, 7, 3};
    std::map<Block, std::set<KeyId>> waiters;
    std::map<Block, std::set<KeyId>> counted;
    std::set<Block> out;
    std::vector<bool> completed;
    int let_go = 0;
    uint32_t last_limit = 0;
};

class MapAllowances : public AllowanceStore {
public:
    bool open() const override { return true; }
    void NoteReceipt(std::string_view key, uint64_t slot, int64_t) override {
        receipts.insert({std::string(key), slot});
    }
    bool Received(std::string_view key, uint64_t slot,
                  int64_t) const override {
        return receipts.count({std::string(key), slot}) > 0;
    }
    uint64_t AllowanceUsed(std::string_view key, int64_t) const override {
        auto it = used.find(std::string(key));
        return it == used.end() ? 0 : it->second;
    }
    uint64_t RepeatCount(std::string_view, int64_t) const override {
        return 0;
    }
    size_t CountRetrieval(const std::vector<std::string>& keys, uint64_t slot,
                          int64_t) override {
        size_t repeats = 0;
        for (const std::string& key : keys) {
            used[key]++;
            repeats += receipts.count({key, slot});
        }
        return repeats;
    }
    size_t CountRepeats(const std::vector<std::string>& keys, uint64_t slot,
                        int64_t) override {
        size_t repeats = 0;
        for (const std::string& key : keys) {
            repeats += receipts.count({key, slot});
        }
        return repeats;
    }
    void AddRepeats(const std::vector<std::string>& keys, int64_t) override {
        for (const std::string& key : keys) {
            added_repeats[key]++;
        }
    }
    void SetAllowanceUsed(
        const std::vector<std::pair<std::string, uint64_t>>& region,
        int64_t) override {
        for (const auto& [key, n] : region) {
            used[key] = n;
        }
    }
    void Flush() override { flushes++; }
    void PruneIfDue(int64_t) override { prunes++; }

    std::map<std::string, uint64_t> used;
    std::map<std::string, uint64_t> added_repeats;
    std::set<std::pair<std::string, uint64_t>> receipts;
    int flushes = 0;
    int prunes = 0;
};

BlockConfBuilder ARegionWithAPeerAndStorage() {
    BlockConfBuilder conf;
    Accept(conf.Region("us"));
    Accept(conf.Peer("eu", "http://eu/", true));
    Accept(conf.PeerToken("region-token-0123456789"));
    Accept(conf.LongTermStorage("http://lts/"));
    Accept(conf.PlanDefine("tiny", {"tier=free", "getblock_rate=2r/s"}));
    testing::DefineSmallArchivePlan(conf);
    return conf;
}

class BlocksStoresTest : public ::testing::Test {
protected:
    BlocksStoresTest()
        : net(1),
          rig(net.network, "blocks_stores_test", ARegionWithAPeerAndStorage()),
          service(rig.service()) {
        EXPECT_EQ(rig.error(), "");
        net.network.record(0).first_available_plus1.store(4001);
        net.network.record(0).SuggestFinalized(5000);
        arch = testing::PlanIndex(service->conf(), "arch");
        tiny = testing::PlanIndex(service->conf(), "tiny");
        BlocksStores stores;
        stores.keys = &keys;
        stores.leases = &leases;
        stores.allowances = &allowances;
        stores.queues[arch] = &queue;
        stores.queues[tiny] = &queue;   // a plan without a queue ignores it
        service->UseStores(stores);
    }

    BlockDecision Ask(uint64_t slot, const std::string& key,
                      const std::string& plan, BlockCall* call) {
        std::string body = testing::GetBlockRequest(slot);
        RpcRequest request = ParseRpcRequest(body.data(), body.size());
        return service->Decide(request, key, plan, "", clock.MonotonicMs(),
                               clock.WallMs(), call);
    }

    // The zone's own stores: still empty.
    void ZoneUntouched() {
        EXPECT_TRUE(SnapshotKeys(&rig.shared()->keys).empty());
        EXPECT_EQ(rig.shared()->copy_lease.load(), 0u);
        EXPECT_EQ(rig.shared()->retrieval_lease[arch].load(), 0u);
        ASSERT_EQ(rig.shared()->queues, service->conf().QueuedPlans());
        for (size_t i = 0; i < rig.shared()->queues; i++) {
            QueueStats zone_queue =
                GetQueueStats(QueueAt(rig.shared(), i), clock.MonotonicMs());
            EXPECT_EQ(zone_queue.depth, 0u);
            EXPECT_EQ(zone_queue.retrieved, 0u);
        }
    }

    TestNetwork net;
    FakeClock clock;
    FakeTransport transport;
    // Before the rig: the service it holds still uses them while it closes.
    MapKeyStore keys;
    MapLeaseStore leases;
    MapQueueStore queue;
    MapAllowances allowances;
    testing::BlockServiceRig rig;
    BlockService* service;
    size_t arch = 0;
    size_t tiny = 0;
};

TEST_F(BlocksStoresTest, TheRequestPathLimitsAndCountsThroughTheKeyStore) {
    EXPECT_EQ(&service->allowances(), &allowances);
    BlockCall ok;
    EXPECT_EQ(Ask(4500, "ok", "tiny", &ok).kind, BlockDecision::kLedger);
    ASSERT_TRUE(ok.key);
    EXPECT_EQ(keys.Text(*ok.key), "ok");
    EXPECT_EQ(keys.last_rate, 2);

    keys.refused.insert(*keys.FindOrAdd("limited", 0, 0));
    BlockCall limited;
    BlockDecision d = Ask(4500, "limited", "tiny", &limited);
    EXPECT_EQ(d.kind, BlockDecision::kAnswer);
    EXPECT_EQ(d.http_status, 429u);
    EXPECT_EQ(d.retry_after_s, 2u);   // 1500 ms, rounded up
    EXPECT_EQ(service->zone().counters().rate_limited[tiny].load(), 1u);

    ok.source = kSourceLedger;
    service->CountServed(ok, kSourceLedger, clock.WallMs());
    EXPECT_EQ(keys.keys[*ok.key].served[kSourceLedger], 1u);
    EXPECT_EQ(service->zone().counters().served[kSourceLedger].load(), 1u);

    std::vector<KeyFigures> figures = service->view().Keys(clock.WallMs());
    ASSERT_EQ(figures.size(), 2u);
    EXPECT_EQ(figures[0].snapshot.key, "ok");
    EXPECT_EQ(figures[0].snapshot.requests, 1u);
    EXPECT_EQ(figures[1].snapshot.limited, 1u);
    EXPECT_EQ(figures[1].allowance_used, std::optional<uint64_t>(0));
    ZoneUntouched();
}

TEST_F(BlocksStoresTest, LongTermStorageQueuesRetrievesAndCountsThroughThem) {
    BlockCall call;
    BlockDecision d = Ask(250, "k1", "arch", &call);
    EXPECT_EQ(d.http_status, 429u);
    EXPECT_EQ(d.retry_after_s, 3u);   // the queue in front said so
    EXPECT_NE(d.body.find(R"("queuePosition":7)"), std::string::npos)
        << d.body;
    ASSERT_TRUE(call.key);
    EXPECT_EQ(queue.waiters[MapQueueStore::Block(250, call.variant)],
              (std::set<KeyId>{*call.key}));
    EXPECT_EQ(queue.last_limit, 2u);
    EXPECT_EQ(service->view().Queue(arch, clock.MonotonicMs())->depth, 1u);

    LongTermRetriever retriever(service->long_term(), service->cache(),
                                transport, clock,
                                [](int, const std::string&) {}, kPid);
    clock.Advance(200);
    retriever.Tick();
    EXPECT_EQ(leases.LeaseHolder(RetrievalLease(arch)).pid, kPid);
    ASSERT_EQ(transport.pending.size(), 1u);
    EXPECT_EQ(transport.pending[0].url, "http://lts/");
    EXPECT_NE(transport.pending[0].body.find("[250,"), std::string::npos);
    transport.AnswerEach([](const auto&) {
        return HttpResult{0, "", 200, testing::BlockReply(250)};
    });
    EXPECT_EQ(queue.completed, (std::vector<bool>{true}));
    EXPECT_EQ(allowances.used["k1"], 1u);
    EXPECT_EQ(keys.keys[*call.key].served[kSourceLongTerm], 1u);
    EXPECT_EQ(service->zone().counters().served[kSourceLongTerm].load(), 1u);
    EXPECT_EQ(service->zone().counters().allowance_counted[arch].load(), 1u);

    // Served from the cache now; the receipt goes to the store in front.
    BlockCall again;
    EXPECT_EQ(Ask(250, "k1", "arch", &again).kind, BlockDecision::kCache);
    again.source = kSourceCache;
    service->CountServed(again, kSourceCache, clock.WallMs());
    EXPECT_TRUE(allowances.Received("k1", 250, clock.WallMs()));
    service->Maintain(clock.WallMs());
    EXPECT_EQ(allowances.flushes, 1);
    EXPECT_EQ(allowances.prunes, 1);

    // The allowance in front decides.
    allowances.used["k2"] = 3;
    BlockCall spent;
    d = Ask(260, "k2", "arch", &spent);
    EXPECT_NE(d.body.find(R"("reason":"allowance")"), std::string::npos)
        << d.body;
    EXPECT_EQ(service->zone().counters().allowance_refusals[arch].load(), 1u);
    EXPECT_EQ(service->view().Keys(clock.WallMs())[0].allowance_used,
              std::optional<uint64_t>(1));
    ZoneUntouched();
}

TEST_F(BlocksStoresTest, RegionSyncCopiesUnderTheLeaseInFront) {
    {
        BlockSync sync(service->sync_parts(), transport, clock,
                       [](int, const std::string&) {}, kPid);
        sync.Tick();
        EXPECT_EQ(leases.LeaseHolder(kCopyLease).pid, kPid);
        leases.leases[kCopyLease] = {kPid + 1, clock.MonotonicMs() + 60000};
        clock.Advance(400);
        sync.Tick();   // another holds it: this one waits
        EXPECT_EQ(leases.LeaseHolder(kCopyLease).pid, kPid + 1);
        leases.leases.erase(kCopyLease);
        clock.Advance(400);
        sync.Tick();
        EXPECT_EQ(leases.LeaseHolder(kCopyLease).pid, kPid);
    }
    EXPECT_EQ(leases.LeaseHolder(kCopyLease).pid, 0u);   // given back
    ZoneUntouched();
}

}  // namespace
}  // namespace solgate
