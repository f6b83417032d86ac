#include "blocks/block_sync.h"
#include "support/blocks_zone.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "blocks/block_capture.h"
#include "blocks/block_variant.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::Accept;
using testing::FakeClock;
using testing::FakeTransport;
using testing::TestNetwork;

const char kJson[] = "getBlock/json/full/r1/v-";
const char kBase64[] = "getBlock/base64/full/r1/v0";
constexpr uint32_t kPid = 100;
constexpr uint32_t kOtherPid = 200;

// The answer a peer's cache holds for (slot, variant): distinct per key.
std::string BlockBody(uint64_t slot, const std::string& variant,
                      size_t padding = 64) {
    return R"({"jsonrpc":"2.0","result":{"blockHeight":)" +
           std::to_string(slot) + R"(,"variant":")" + variant +
           R"(","pad":")" + std::string(padding, 'x') + R"("},"id":1})";
}

std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream content;
    content << in.rdbuf();
    return content.str();
}

// Another region's gateway, as the fake transport's peer.
struct PeerSim {
    enum Mode { kUp, kDown, kHttp500, kBadJson, kRpcError, kBadRanges };
    std::string url;
    Mode mode = kUp;
    std::map<std::string, SlotRanges> holds;  // listed and served
    std::set<uint64_t> refuse;                // listed, answered with 503
    size_t padding = 64;
    int summaries = 0;
};

struct CopyRequest {
    std::string peer_url;
    uint64_t slot;
    std::string variant;
};

// Two peers; max_size as given (0: none).
BlockConfBuilder TwoPeers(uint64_t max_size = 0) {
    BlockConfBuilder conf;
    Accept(conf.Region("us"));
    Accept(conf.Peer("eu", "http://eu.example/", true));
    Accept(conf.Peer("ap", "http://ap.example/", true));
    Accept(conf.PeerToken("solgate-peer-token"));
    Accept(conf.MaxSize(max_size));
    return conf;
}

class BlockSyncTest : public ::testing::Test {
protected:
    void SetUp() override {
        rig_ = std::make_unique<testing::BlockServiceRig>(
            net_.network, "block_sync_test", TwoPeers());
        ASSERT_EQ(rig_->error(), "");
        service_ = rig_->service();
        peers_["http://eu.example/"].url = "http://eu.example/";
        peers_["http://ap.example/"].url = "http://ap.example/";
        MakeSync();
    }

    // nginx reloaded with another max_size: a new service, and a new sync
    // for it, over the same cache and zone.
    void Reload(uint64_t max_size) {
        sync_.reset();
        rig_->Reload(TwoPeers(max_size));
        ASSERT_EQ(rig_->error(), "");
        service_ = rig_->service();
        MakeSync();
    }

    void TearDown() override {
        sync_.reset();
        rig_.reset();
    }

    void MakeSync() {
        sync_ = std::make_unique<BlockSync>(
            service_->sync_parts(), transport_, clock_,
            [this](int level, const std::string& line) {
                logs_.push_back({level, line});
            },
            kPid);
    }

    PeerSim& eu() { return peers_["http://eu.example/"]; }
    PeerSim& ap() { return peers_["http://ap.example/"]; }
    BlockCache& cache() { return service_->cache(); }

    // What the peers answer.
    HttpResult Reply(const FakeTransport::Pending& p) {
        HttpResult r;
        PeerSim& peer = peers_.at(p.url);
        if (p.body.find(std::string(kSummaryMethod)) != std::string::npos) {
            peer.summaries++;
            std::string variants;
            for (const auto& [v, ranges] : peer.holds) {
                if (!variants.empty()) variants += ",";
                variants += "\"" + v + "\":\"" + ranges.ToText() + "\"";
            }
            r.http_status = 200;
            switch (peer.mode) {
            case PeerSim::kDown:
                r.http_status = 0;
                r.transport_error = 7;
                r.error_text = "connection refused";
                return r;
            case PeerSim::kHttp500:
                r.http_status = 500;
                r.body = "oops";
                return r;
            case PeerSim::kBadJson:
                r.body = "{\"jsonrpc\":\"2.0\",\"result\":{";
                return r;
            case PeerSim::kRpcError:
                r.body = testing::Error(-32601);
                return r;
            case PeerSim::kBadRanges:
                variants = std::string("\"") + kJson + "\":\"1-5\",\"" +
                           kBase64 + "\":\"9-3\"";
                break;
            case PeerSim::kUp:
                break;
            }
            r.body = testing::Result(
                R"({"region":"x","network":"mainnet","generated_ms":1,)"
                R"("variants":{)" + variants + "}}");
            return r;
        }
        // A copy: the body is exactly BlockRequestBody(slot, v, "1").
        size_t at = p.body.find("\"params\":[");
        EXPECT_NE(at, std::string::npos) << p.body;
        uint64_t slot = std::stoull(p.body.substr(at + 10));
        std::string variant;
        for (const char* v : {kJson, kBase64}) {
            if (p.body == BlockRequestBody(slot, v, "1")) variant = v;
        }
        EXPECT_FALSE(variant.empty()) << p.body;
        copies_.push_back({p.url, slot, variant});
        auto held = peer.holds.find(variant);
        if (peer.mode == PeerSim::kDown || held == peer.holds.end() ||
            !held->second.Contains(slot) || peer.refuse.count(slot) != 0) {
            r.http_status = 503;
            r.body = testing::Error(-32001);
            return r;
        }
        r.http_status = 200;
        r.body = BlockBody(slot, variant, peer.padding);
        return r;
    }

    // One tick `ms` after the last, every request answered at once.
    void Step(int64_t ms = 400) {
        clock_.Advance(ms);
        sync_->Tick();
        transport_.AnswerEach(
            [this](const FakeTransport::Pending& p) { return Reply(p); });
    }

    // Stores (slot, variant) here as a client's fetch would.
    void StoreLocally(uint64_t slot, const std::string& variant,
                      size_t padding = 64) {
        BlockCall call;
        call.slot = slot;
        call.variant = variant;
        auto capture = BlockCapture::Start(service_->cache(), call);
        ASSERT_NE(capture, nullptr);
        std::string body = BlockBody(slot, variant, padding);
        ASSERT_TRUE(capture->Write(body.data(), body.size()));
        std::string error;
        ASSERT_TRUE(capture->Finish(clock_.WallMs(), &error)) << error;
    }

    int CountLogs(int level, const std::string& needle) const {
        int n = 0;
        for (const auto& [l, line] : logs_) {
            if (l == level && line.find(needle) != std::string::npos) n++;
        }
        return n;
    }

    size_t PendingCopies() const {
        size_t n = 0;
        for (const auto& p : transport_.pending) {
            if (p.body.find("getBlock") != std::string::npos) n++;
        }
        return n;
    }

    TestNetwork net_{1};
    std::unique_ptr<testing::BlockServiceRig> rig_;
    BlockService* service_ = nullptr;
    FakeTransport transport_;
    FakeClock clock_;
    std::vector<std::pair<int, std::string>> logs_;
    std::map<std::string, PeerSim> peers_;
    std::vector<CopyRequest> copies_;
    std::unique_ptr<BlockSync> sync_;
};

SlotRanges Ranges(const std::string& text) {
    return SlotRanges::Parse(text).value();
}

TEST_F(BlockSyncTest, SummariesAreAskedWithThePeerTokenAndStored) {
    eu().holds[kJson] = Ranges("100-200,205");
    ap().holds[kBase64] = Ranges("7");

    clock_.Advance(400);
    sync_->Tick();
    ASSERT_EQ(transport_.pending.size(), 2u);
    for (const auto& p : transport_.pending) {
        EXPECT_EQ(p.body,
                  R"({"jsonrpc":"2.0","id":1,"method":"solgateBlockSummary"})");
        EXPECT_EQ(p.timeout_ms, kPeerSummaryTimeoutMs);
        EXPECT_EQ(p.target.headers,
                  std::vector<std::string>{"X-Solgate-Peer: solgate-peer-token"});
        EXPECT_EQ(p.target.max_response_bytes, 0u);
    }
    EXPECT_EQ(transport_.pending[0].url, "http://eu.example/");
    EXPECT_EQ(transport_.pending[1].url, "http://ap.example/");
    // At most one request per peer in flight.
    clock_.Advance(kPeerSummaryIntervalMs);
    sync_->Tick();
    EXPECT_EQ(transport_.pending.size(), 2u);
    transport_.AnswerEach(
        [this](const FakeTransport::Pending& p) { return Reply(p); });

    int64_t now = clock_.MonotonicMs();
    PeerSummaries& s = service_->peer_summaries();
    EXPECT_TRUE(s.Holds(0, kJson, 100, now));
    EXPECT_TRUE(s.Holds(0, kJson, 205, now));
    EXPECT_FALSE(s.Holds(0, kJson, 201, now));
    EXPECT_FALSE(s.Holds(0, kBase64, 7, now));
    EXPECT_TRUE(s.Holds(1, kBase64, 7, now));
    EXPECT_FALSE(s.Holds(1, kJson, 150, now));
    EXPECT_TRUE(logs_.empty());

    // Asked again every kPeerSummaryIntervalMs, not on every tick.
    int before = eu().summaries;
    for (int64_t t = 0; t < 20000; t += 400) Step();
    EXPECT_GE(eu().summaries - before, 3);
    EXPECT_LE(eu().summaries - before, 5);
    EXPECT_TRUE(s.Holds(0, kJson, 100, clock_.MonotonicMs()));
}

TEST_F(BlockSyncTest, FailingPeerIsMarkedFailedAndLoggedOnce) {
    eu().holds[kJson] = Ranges("100-200");
    ap().holds[kJson] = Ranges("100-200");
    StoreLocally(1, kJson);
    Reload(1);   // full: no copies here
    Step();
    ASSERT_TRUE(service_->peer_summaries().Holds(0, kJson, 150,
                                                 clock_.MonotonicMs()));

    // Every kind of failure keeps the peer failed; one WARN in all.
    for (PeerSim::Mode mode : {PeerSim::kDown, PeerSim::kHttp500,
                               PeerSim::kBadJson, PeerSim::kRpcError,
                               PeerSim::kBadRanges}) {
        eu().mode = mode;
        Step(kPeerSummaryIntervalMs);
        EXPECT_FALSE(service_->peer_summaries().Holds(
            0, kJson, 150, clock_.MonotonicMs()))
            << mode;
        EXPECT_TRUE(service_->peer_summaries().Holds(
            1, kJson, 150, clock_.MonotonicMs()));
    }
    EXPECT_EQ(CountLogs(kLogWarn, "blocks: peer \"eu\" summary "
                                  "failed: transport error 7: connection "
                                  "refused"),
              1);
    EXPECT_EQ(CountLogs(kLogWarn, "summary failed"), 1);
    EXPECT_EQ(CountLogs(kLogWarn, "\"ap\""), 0);

    eu().mode = PeerSim::kUp;
    Step(kPeerSummaryIntervalMs);
    EXPECT_TRUE(service_->peer_summaries().Holds(0, kJson, 150,
                                                 clock_.MonotonicMs()));
    EXPECT_EQ(CountLogs(kLogInfo, "peer \"eu\" summary recovered"), 1);
    EXPECT_EQ(logs_.size(), 2u);

    // A new failure is a new transition.
    eu().mode = PeerSim::kRpcError;
    Step(kPeerSummaryIntervalMs);
    EXPECT_EQ(CountLogs(kLogWarn, "peer \"eu\" summary failed: JSON-RPC "
                                  "error"),
              1);
}

TEST_F(BlockSyncTest, MalformedRangesRejectTheWholeReply) {
    eu().mode = PeerSim::kBadRanges;   // "1-5" fine, "9-3" malformed
    Step();
    EXPECT_FALSE(service_->peer_summaries().Holds(0, kJson, 3,
                                                  clock_.MonotonicMs()));
    EXPECT_EQ(CountLogs(kLogWarn, "malformed ranges"), 1);
}

TEST_F(BlockSyncTest, CopiesNewestFirstAcrossPeersAndVariants) {
    eu().holds[kJson] = Ranges("100-104");
    ap().holds[kBase64] = Ranges("102,110");
    StoreLocally(101, kJson);
    service_->Maintain(clock_.WallMs());   // 101 is in the local summary
    StoreLocally(103, kJson);              // 103 only in the index

    for (int i = 0; i < 50; i++) Step();   // 20 s

    std::vector<std::pair<uint64_t, std::string>> order;
    for (const auto& c : copies_) order.push_back({c.slot, c.variant});
    std::vector<std::pair<uint64_t, std::string>> expected = {
        {110, kBase64}, {104, kJson}, {102, kJson}, {102, kBase64},
        {100, kJson}};
    EXPECT_EQ(order, expected);   // each once, though Maintain never ran
    EXPECT_EQ(copies_[0].peer_url, "http://ap.example/");
    EXPECT_EQ(copies_[1].peer_url, "http://eu.example/");
    EXPECT_EQ(sync_->copies_stored(), 5u);
    EXPECT_EQ(service_->zone().counters().peer_copies[0].load(), 3u);
    EXPECT_EQ(service_->zone().counters().peer_copies[1].load(), 2u);
    for (const auto& [slot, variant] : expected) {
        BlockRecord rec;
        EXPECT_TRUE(cache().Lookup(slot, variant, &rec)) << slot;
    }

    // Once the summary lists them, nothing more is copied either.
    service_->Maintain(clock_.WallMs());
    for (int i = 0; i < 20; i++) Step();
    EXPECT_EQ(copies_.size(), 5u);
}

TEST_F(BlockSyncTest, CopyRequestAndStoredBlockMatchThePeer) {
    eu().holds[kBase64] = Ranges("4242");
    eu().padding = 300000;   // a block of some size
    Step();                  // summaries
    clock_.Advance(400);
    sync_->Tick();
    ASSERT_EQ(PendingCopies(), 1u);
    const FakeTransport::Pending& p = transport_.pending.back();
    EXPECT_EQ(p.body, BlockRequestBody(4242, kBase64, "1"));
    EXPECT_EQ(p.url, "http://eu.example/");
    EXPECT_EQ(p.timeout_ms, kCopyTimeoutMs);
    EXPECT_EQ(p.target.max_response_bytes, 64u * 1024 * 1024);
    EXPECT_EQ(p.target.headers,
              std::vector<std::string>{"X-Solgate-Peer: solgate-peer-token"});
    transport_.AnswerEach(
        [this](const FakeTransport::Pending& q) { return Reply(q); });

    BlockRecord rec;
    ASSERT_TRUE(cache().Lookup(4242, kBase64, &rec));
    std::string expected = BlockBody(4242, kBase64, 300000);
    EXPECT_EQ(rec.bytes, expected.size());
    EXPECT_EQ(ReadFile(cache().PathFor(4242, kBase64)), expected);
    EXPECT_EQ(service_->zone().counters().peer_copies[0].load(), 1u);
    EXPECT_EQ(service_->zone().counters().stored.load(), 1u);

    // The region answers it from its cache now.
    service_->Maintain(clock_.WallMs());
    auto local = service_->local_summary().Ranges();
    ASSERT_EQ(local.size(), 1u);
    EXPECT_TRUE(local[0].second.Contains(4242));
}

TEST_F(BlockSyncTest, AtMostOneCopyInFlight) {
    eu().holds[kJson] = Ranges("1-100");
    Step();
    for (int i = 0; i < 10; i++) {
        clock_.Advance(400);
        sync_->Tick();
    }
    EXPECT_EQ(PendingCopies(), 1u);
    EXPECT_TRUE(sync_->copy_in_flight());
}

TEST_F(BlockSyncTest, CopyRateIsBounded) {
    eu().holds[kJson] = Ranges("1000-1999");
    Step();
    size_t start = copies_.size();
    // Ticks far more often than the real 400 ms: the bucket alone bounds.
    for (int i = 0; i < 100; i++) Step(100);   // 10 s
    size_t n = copies_.size() - start;
    EXPECT_LE(n, 22u);   // 2 per second plus the burst of 2
    EXPECT_GE(n, 19u);
    // Newest first, no gaps, no repeats.
    for (size_t i = 0; i < copies_.size(); i++) {
        EXPECT_EQ(copies_[i].slot, 1999 - i);
    }
}

TEST_F(BlockSyncTest, NoCopyWithoutTheLease) {
    eu().holds[kJson] = Ranges("1-10");
    for (int i = 0; i < 20; i++) {
        ASSERT_TRUE(service_->zone().leases().ClaimLease(
            kCopyLease, kOtherPid, clock_.MonotonicMs() + 400, kLeaseTtlMs));
        Step();
    }
    EXPECT_TRUE(copies_.empty());
    EXPECT_GT(eu().summaries, 0);   // summaries do not need the lease

    // The other process stops renewing: the lease passes here.
    for (int i = 0; i < 10; i++) Step();
    EXPECT_FALSE(copies_.empty());
    EXPECT_EQ(service_->zone().leases().LeaseHolder(kCopyLease).pid, kPid);
    sync_.reset();   // gives it up
    EXPECT_EQ(service_->zone().leases().LeaseHolder(kCopyLease).pid, 0u);
    EXPECT_EQ(service_->zone().leases().LeaseHolder(kCopyLease).expires_ms, 0);
}

TEST_F(BlockSyncTest, NoCopyWhileTheCacheIsNinetyPercentFull) {
    eu().holds[kJson] = Ranges("1-10");
    StoreLocally(100, kJson, 1000);
    uint64_t bytes = cache().Totals()->bytes;
    Reload(bytes * 10 / 9);   // bytes >= 90%
    for (int i = 0; i < 20; i++) Step();
    EXPECT_TRUE(copies_.empty());

    // Room again (a reload with a larger cache): copies until the mark.
    Reload(bytes * 2);
    for (int i = 0; i < 40; i++) Step();
    EXPECT_FALSE(copies_.empty());
    EXPECT_LT(copies_.size(), 10u);
    uint64_t now_bytes = cache().Totals()->bytes;
    EXPECT_LE(now_bytes, bytes * 2);
    // The last copy crossed the mark; none started after it.
    uint64_t one = BlockBody(10, kJson).size();
    EXPECT_LT(now_bytes - one, bytes * 2 * 9 / 10);
}

TEST_F(BlockSyncTest, FailedSlotIsRetriedAtMostOnceAMinute) {
    eu().holds[kJson] = Ranges("499-500");
    eu().refuse = {500};
    for (int i = 0; i < 10; i++) Step();
    // 500 failed, 499 was copied anyway.
    ASSERT_EQ(copies_.size(), 2u);
    EXPECT_EQ(copies_[0].slot, 500u);
    EXPECT_EQ(copies_[1].slot, 499u);
    EXPECT_EQ(sync_->copies_failed(), 1u);
    BlockRecord rec;
    EXPECT_TRUE(cache().Lookup(499, kJson, &rec));
    EXPECT_FALSE(cache().Lookup(500, kJson, &rec));

    for (int i = 0; i < 140; i++) Step();   // 56 s more
    EXPECT_EQ(copies_.size(), 2u);
    for (int i = 0; i < 20; i++) Step();    // past the minute
    EXPECT_EQ(copies_.size(), 3u);
    EXPECT_EQ(copies_[2].slot, 500u);
}

TEST_F(BlockSyncTest, AnswerThatIsNotABlockIsNotStored) {
    eu().holds[kJson] = Ranges("77");
    Step();
    clock_.Advance(400);
    sync_->Tick();
    ASSERT_EQ(PendingCopies(), 1u);
    transport_.AnswerEach([](const FakeTransport::Pending& p) {
        HttpResult r;
        r.http_status = 200;
        r.body = p.body.find("getBlock") != std::string::npos
                     ? testing::Error(-32001)
                     : testing::Result("{\"variants\":{}}");
        return r;
    });
    BlockRecord rec;
    EXPECT_FALSE(cache().Lookup(77, kJson, &rec));
    EXPECT_EQ(sync_->copies_failed(), 1u);
    EXPECT_EQ(service_->zone().counters().peer_copies[0].load(), 0u);
}

TEST_F(BlockSyncTest, NoCopyWithoutAStore) {
    eu().holds[kJson] = Ranges("1-10");
    service_->CloseStore();
    for (int i = 0; i < 10; i++) Step();
    EXPECT_TRUE(copies_.empty());
    EXPECT_EQ(service_->zone().leases().LeaseHolder(kCopyLease).pid, 0u);
    EXPECT_EQ(service_->zone().leases().LeaseHolder(kCopyLease).expires_ms, 0);
    EXPECT_GT(eu().summaries, 0);
}

TEST_F(BlockSyncTest, RepliesAfterDestructionAreIgnored) {
    eu().holds[kJson] = Ranges("1-10");
    Step();
    clock_.Advance(400);
    sync_->Tick();
    ASSERT_GT(transport_.pending.size(), 0u);
    sync_.reset();
    transport_.AnswerEach(
        [this](const FakeTransport::Pending& p) { return Reply(p); });
    BlockRecord rec;
    EXPECT_FALSE(cache().Lookup(10, kJson, &rec));
}

}  // namespace
}  // namespace solgate
