#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "support/fakes.h"
#include "slots/shared_state.h"

namespace solgate {
namespace {

TEST(SuggestSlot, RaisesAndIgnoresSmallDrops) {
    std::atomic<uint64_t> view{0}, rollbacks{0};
    EXPECT_TRUE(SuggestSlot(view, 5000, rollbacks));
    EXPECT_TRUE(SuggestSlot(view, 5001, rollbacks));
    EXPECT_FALSE(SuggestSlot(view, 5001, rollbacks));
    EXPECT_FALSE(SuggestSlot(view, 5001 - 1024, rollbacks));  // at tolerance
    EXPECT_EQ(view.load(), 5001u);
    EXPECT_FALSE(SuggestSlot(view, 0, rollbacks));
    EXPECT_EQ(rollbacks.load(), 0u);
}

TEST(SuggestSlot, AcceptsAndCountsLargeRollback) {
    std::atomic<uint64_t> view{10000}, rollbacks{0};
    EXPECT_TRUE(SuggestSlot(view, 10000 - 1025, rollbacks));
    EXPECT_EQ(view.load(), 10000u - 1025);
    EXPECT_EQ(rollbacks.load(), 1u);
}

TEST(Lease, ClaimRenewExpireRelease) {
    std::atomic<uint64_t> lease{0};
    EXPECT_TRUE(ClaimLease(lease, 100, 1000, 2000));
    EXPECT_FALSE(ClaimLease(lease, 200, 1500, 2000));   // held by 100
    EXPECT_TRUE(ClaimLease(lease, 100, 2500, 2000));    // renewed to 4500
    EXPECT_FALSE(ClaimLease(lease, 200, 4499, 2000));
    EXPECT_TRUE(ClaimLease(lease, 200, 4500, 2000));    // 100 crashed
    EXPECT_EQ(Lease::Unpack(lease.load()).pid, 200u);
    ReleaseLease(lease, 100);                           // not the holder
    EXPECT_EQ(Lease::Unpack(lease.load()).pid, 200u);
    ReleaseLease(lease, 200);
    EXPECT_TRUE(ClaimLease(lease, 300, 4600, 2000));
}

TEST(Lease, PacksLargeValues) {
    Lease l{4194303, (1LL << 39) + 5};
    Lease back = Lease::Unpack(l.Pack());
    EXPECT_EQ(back.pid, l.pid);
    EXPECT_EQ(back.expires_ms, l.expires_ms);
}

TEST(Cordon, SwapOnlyFromExpectedOwner) {
    testing::TestNetwork t(1);
    UpstreamRecord& s = t.network.record(0);
    EXPECT_EQ(s.Cordon().owner, CordonOwner::kNone);
    EXPECT_TRUE(s.SwapCordon(CordonOwner::kNone,
                             {CordonOwner::kOperator, CordonCause::kOperator,
                              1700000000123}));
    EXPECT_FALSE(s.SwapCordon(CordonOwner::kPoller, CordonState{}));
    CordonState c = s.Cordon();
    EXPECT_EQ(c.owner, CordonOwner::kOperator);
    EXPECT_EQ(c.cause, CordonCause::kOperator);
    EXPECT_EQ(c.since_wall_ms, 1700000000123);
}

TEST(SharedText, WritesAndReadsTruncated) {
    SharedText text{};
    text.Write("maintenance window");
    EXPECT_EQ(text.Read(), "maintenance window");
    text.Write(std::string(500, 'x'));
    EXPECT_EQ(text.Read().size(), kReasonCapacity - 1);
    // a two-byte character straddling the limit is left out whole
    text.Write(std::string(kReasonCapacity - 2, 'x') + "\xc3\xa9");
    EXPECT_EQ(text.Read().size(), kReasonCapacity - 2);
}

TEST(SharedText, ASecondWriterWaitsForTheFirst) {
    // the admin endpoint and a poller thread may write the same note
    SharedText text{};
    text.Write("old");
    uint32_t v = text.version.load();
    text.version.store(v + 1);   // writer A is in the middle of its write
    std::atomic<bool> b_done{false};
    std::thread b([&] {
        text.Write("b");
        b_done = true;
    });
    // B must not write while A holds the text (20 ms, far below the
    // takeover's 100 ms)
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    while (!b_done.load() && std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
    }
    EXPECT_FALSE(b_done.load()) << "B wrote into A's write";
    std::memcpy(text.text, "a", 2);   // A ends its write
    text.version.store(v + 2);
    b.join();
    EXPECT_EQ(text.Read(), "b") << "B wrote after A";
    EXPECT_EQ(text.version.load() % 2, 0u);
}

TEST(SharedText, AWriterThatDiedMidWriteIsTakenOver) {
    SharedText text{};
    text.version.store(7);   // odd: its writer is gone
    text.Write("after");
    EXPECT_EQ(text.Read(), "after");
    EXPECT_EQ(text.version.load() % 2, 0u);
}

}  // namespace
}  // namespace solgate
