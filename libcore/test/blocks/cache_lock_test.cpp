// The cache lock: while one request fetches a block it will store, others
// for the same block wait and are answered from the cache once it is
// stored; a wait is bounded, and a fetch that stores nothing lets the
// next one fetch.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "blocks/block_capture.h"
#include "blocks/block_service.h"
#include "support/blocks_zone.h"
#include "support/fakes.h"

namespace solgate {
namespace {

using testing::Accept;
using testing::TestNetwork;

constexpr int64_t kNow = 1'000'000;
constexpr int64_t kWall = 1'800'000'000'000;
constexpr uint64_t kFinal = 4000;      // finalized: the ledger's is stored
constexpr uint64_t kFresh = 4990;      // not yet: never stored

BlockConfBuilder Region(const char* lock_timeout = nullptr) {
    BlockConfBuilder b;
    Accept(b.Region("us"));
    if (lock_timeout != nullptr) {
        Accept(b.CacheLockTimeout(lock_timeout));
    }
    return b;
}

class CacheLockTest : public ::testing::Test {
protected:
    explicit CacheLockTest(const char* lock_timeout = nullptr)
        : net(1),
          rig(net.network, "cache_lock_test", Region(lock_timeout)),
          service(rig.service()),
          counters(rig.shared()->counters) {
        EXPECT_EQ(rig.error(), "");
        net.network.record(0).SuggestProcessed(5000);
        net.network.record(0).SuggestFinalized(4968);
    }

    // A client's getBlock as the access phase asks it.
    BlockDecision Ask(uint64_t slot, BlockCall* call, bool may_wait = true,
                      int64_t now_ms = kNow) {
        std::string body = testing::GetBlockRequest(slot);
        RpcRequest request = ParseRpcRequest(body.data(), body.size());
        call->may_wait = may_wait;
        return service->Decide(request, "k", "operator", "", now_ms, kWall,
                               call);
    }

    // The ledger's answer to `call` streamed into a capture, handed to the
    // poller thread (which RunCommits stands for).
    void Answer(BlockCall* call, const std::string& body) {
        std::unique_ptr<BlockCapture> capture =
            service->StartCapture(*call, false, kNow);
        ASSERT_NE(capture, nullptr);
        ASSERT_TRUE(capture->Write(body.data(), body.size()));
        service->CommitLater(std::move(capture), kWall);
    }

    TestNetwork net;
    testing::BlockServiceRig rig;
    BlockService* service;
    BlocksHostCounters& counters;
};

TEST_F(CacheLockTest, AMissWaitsForTheFetchAndIsAnsweredOnceItIsStored) {
    int wakes = 0;
    service->SetCommitWaker([&wakes] { wakes++; });   // a poller thread
    BlockCall first;
    ASSERT_EQ(Ask(kFinal, &first).kind, BlockDecision::kLedger);
    EXPECT_TRUE(first.flight.held());

    BlockCall second;
    BlockDecision d = Ask(kFinal, &second);
    ASSERT_EQ(d.kind, BlockDecision::kWait);
    EXPECT_EQ(d.wait_ms, 2);
    EXPECT_EQ(counters.lock_waits.load(), 1u);
    EXPECT_FALSE(second.flight.held());

    // the answer streamed whole, not yet stored: still waiting, each look
    // twice as late as the one before
    Answer(&first, testing::BlockReply(kFinal));
    EXPECT_FALSE(first.flight.held()) << "the capture carries it";
    d = service->AfterWait(&second, kNow + 2);
    ASSERT_EQ(d.kind, BlockDecision::kWait);
    EXPECT_EQ(d.wait_ms, 4);

    service->RunCommits();   // stored, then released
    d = service->AfterWait(&second, kNow + 6);
    ASSERT_EQ(d.kind, BlockDecision::kCache);
    EXPECT_EQ(second.source, kSourceCache);

    // and a request right after finds it too, without waiting
    BlockCall third;
    EXPECT_EQ(Ask(kFinal, &third).kind, BlockDecision::kCache);
    EXPECT_EQ(counters.lock_waits.load(), 1u);
    EXPECT_EQ(counters.lock_timeouts.load(), 0u);
    service->SetCommitWaker(nullptr);
}

TEST_F(CacheLockTest, AFetchThatStoresNothingLetsTheNextWaiterFetch) {
    BlockCall first;
    ASSERT_EQ(Ask(kFinal, &first).kind, BlockDecision::kLedger);
    BlockCall second;
    ASSERT_EQ(Ask(kFinal, &second).kind, BlockDecision::kWait);
    BlockCall third;
    ASSERT_EQ(Ask(kFinal, &third).kind, BlockDecision::kWait);

    // the first request's ledger answered an error: nothing is stored
    Answer(&first, R"({"jsonrpc":"2.0","error":{"code":-32004,)"
                   R"("message":"Block not available"},"id":9})");
    BlockDecision d = service->AfterWait(&second, kNow + 2);
    ASSERT_EQ(d.kind, BlockDecision::kLedger) << "the next one fetches";
    EXPECT_TRUE(second.flight.held());
    EXPECT_EQ(service->AfterWait(&third, kNow + 2).kind, BlockDecision::kWait)
        << "and the others wait for it";
    EXPECT_EQ(counters.lock_timeouts.load(), 0u);
}

TEST_F(CacheLockTest, ARequestThatEndsWithoutAnAnswerReleasesItsFlight) {
    BlockCall waiting;
    {
        BlockCall first;
        ASSERT_EQ(Ask(kFinal, &first).kind, BlockDecision::kLedger);
        ASSERT_EQ(Ask(kFinal, &waiting).kind, BlockDecision::kWait);
    }   // the client of the first left before any answer
    EXPECT_EQ(service->AfterWait(&waiting, kNow + 2).kind,
              BlockDecision::kLedger);
}

TEST_F(CacheLockTest, AWaitIsBoundedByTheTimeout) {
    BlockCall first;
    ASSERT_EQ(Ask(kFinal, &first).kind, BlockDecision::kLedger);
    BlockCall second;
    ASSERT_EQ(Ask(kFinal, &second).kind, BlockDecision::kWait);
    // looks are at most 32 ms apart and never past the timeout
    int64_t now = kNow;
    BlockDecision d;
    for (int i = 0; i < 1000; i++) {
        d = service->AfterWait(&second, now);
        if (d.kind != BlockDecision::kWait) {
            break;
        }
        EXPECT_LE(d.wait_ms, 32);
        EXPECT_LE(now + d.wait_ms, kNow + kDefaultCacheLockTimeoutMs);
        now += d.wait_ms;
    }
    EXPECT_EQ(d.kind, BlockDecision::kLedger);
    EXPECT_EQ(now, kNow + kDefaultCacheLockTimeoutMs);
    EXPECT_EQ(counters.lock_timeouts.load(), 1u);
    EXPECT_FALSE(second.flight.held()) << "the first still holds it";

    // a holder that never releases (its worker crashed) holds up new
    // requests for twice the timeout, no longer
    BlockCall late;
    EXPECT_EQ(Ask(kFinal, &late, true, now).kind, BlockDecision::kWait);
    BlockCall later;
    ASSERT_EQ(Ask(kFinal, &later, true, kNow + 2 * kDefaultCacheLockTimeoutMs)
                  .kind,
              BlockDecision::kLedger);
    EXPECT_TRUE(later.flight.held());
}

TEST_F(CacheLockTest, OnlyWhatWillBeStoredIsWaitedFor) {
    // not finalized: the ledger's answer is not stored, so no flight
    BlockCall fresh;
    ASSERT_EQ(Ask(kFresh, &fresh).kind, BlockDecision::kLedger);
    EXPECT_FALSE(fresh.flight.held());
    BlockCall again;
    EXPECT_EQ(Ask(kFresh, &again).kind, BlockDecision::kLedger);

    // a caller that cannot be woken (a batch's piece) never waits
    BlockCall first;
    ASSERT_EQ(Ask(kFinal, &first).kind, BlockDecision::kLedger);
    BlockCall piece;
    EXPECT_EQ(Ask(kFinal, &piece, false).kind, BlockDecision::kLedger);
    EXPECT_FALSE(piece.flight.held());
    EXPECT_EQ(counters.lock_waits.load(), 0u);
}

class NoCacheLockTest : public CacheLockTest {
protected:
    NoCacheLockTest() : CacheLockTest("0") {}
};

TEST_F(NoCacheLockTest, ATimeoutOfZeroTurnsTheLockOff) {
    EXPECT_EQ(service->conf().cache_lock_timeout_ms(), 0);
    BlockCall first;
    ASSERT_EQ(Ask(kFinal, &first).kind, BlockDecision::kLedger);
    EXPECT_FALSE(first.flight.held());
    BlockCall second;
    EXPECT_EQ(Ask(kFinal, &second).kind, BlockDecision::kLedger);
}

TEST(CacheLockTimeoutTest, IsATimeUpToAMinuteGivenOnce) {
    BlockConfBuilder b;
    EXPECT_EQ(b.CacheLockTimeout("70s").value_or(""),
              "invalid cache_lock_timeout \"70s\": must be a time up to 60s "
              "(0 turns the lock off)");
    EXPECT_EQ(b.CacheLockTimeout("soon").value_or("").substr(0, 33),
              "invalid cache_lock_timeout \"soon\"");
    EXPECT_FALSE(b.CacheLockTimeout("500ms"));
    EXPECT_EQ(b.CacheLockTimeout("1s").value_or(""),
              "\"cache_lock_timeout\" directive is duplicate");
}

}  // namespace
}  // namespace solgate
