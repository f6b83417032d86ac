// A process's subscription connections leave the open counts when the
// process dies without closing them (SIGKILL, a crash).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include "pubsub/ws_counts.h"
#include "pubsub/ws_holders.h"
#include "routing/router.h"
#include "support/fakes.h"

namespace solgate {
namespace {

constexpr ProcessIdentity kA{100, 1};
constexpr ProcessIdentity kB{200, 2};
// a new process that was given A's pid after A died
constexpr ProcessIdentity kAsPidReused{100, 9};

bool OnlyBExists(uint32_t pid) { return pid == kB.pid; }
bool EveryoneExists(uint32_t) { return true; }

const WsHolder* HolderOf(const Network& n, ProcessIdentity p) {
    for (const WsHolder& h : n.table().ws_holders) {
        if (h.owner.load() == p.Packed()) return &h;
    }
    return nullptr;
}

uint64_t Open(const Network& n, size_t i) {
    int64_t v = n.host(i).ws_open.load();
    return v > 0 ? static_cast<uint64_t>(v) : 0;
}

TEST(WsHolders, ADeadProcessesConnectionsAreTakenOffItsUpstreams) {
    testing::PubsubTestNetwork t(2, {0, 1});
    Network& n = t.network;
    for (int k = 0; k < 3; k++) CountWsOpened(n, 0, kA);
    CountWsOpened(n, 1, kA);
    CountWsOpened(n, 0, kB);
    CountWsOpened(n, 0, kB);
    EXPECT_EQ(n.WsOpen(), 6u);

    EXPECT_EQ(ReapWsHolders(n, kB, EveryoneExists), 0u);
    EXPECT_EQ(n.WsOpen(), 6u);
    EXPECT_EQ(ReapWsHolders(n, kB, OnlyBExists), 4u);
    EXPECT_EQ(Open(n, 0), 2u);
    EXPECT_EQ(Open(n, 1), 0u);
    EXPECT_EQ(ReapWsHolders(n, kB, OnlyBExists), 0u) << "reaped once";

    CountWsClosed(n, 0, 0, 0, 0, kB);
    CountWsClosed(n, 0, 0, 0, 0, kB);
    EXPECT_EQ(n.WsOpen(), 0u);
    EXPECT_EQ(n.host(0).ws_opened.load(), 5u) << "the totals stay";
}

TEST(WsHolders, ANewProcessWithADeadOnesPidTakesItsCountsOff) {
    testing::PubsubTestNetwork t(1, {0});
    Network& n = t.network;
    CountWsOpened(n, 0, kA);
    CountWsOpened(n, 0, kA);
    // pid 100 exists (it is the new process), but not as A
    EXPECT_EQ(ReapWsHolders(n, kAsPidReused, EveryoneExists), 2u);
    EXPECT_EQ(n.WsOpen(), 0u);
    CountWsOpened(n, 0, kAsPidReused);
    EXPECT_EQ(ReapWsHolders(n, kAsPidReused, EveryoneExists), 0u)
        << "its own holder is never reaped";
    EXPECT_EQ(n.WsOpen(), 1u);
}

TEST(WsHolders, CountsAreKeptByZoneSlot) {
    testing::PubsubTestNetwork t(3, {0, 1, 2});
    Network& n = t.network;
    CountWsOpened(n, 2, kA);
    const WsHolder* held = HolderOf(n, kA);
    ASSERT_NE(held, nullptr);
    EXPECT_EQ(held->open[n.RecordIndex(2)].load(), 1);
}

TEST(WsHolders, AConnectionOpenedWithoutAHolderNeverDrivesOneBelowZero) {
    testing::PubsubTestNetwork t(1, {0});
    Network& n = t.network;
    CountWsOpened(n, 0, kA);
    CountWsClosed(n, 0, 0, 0, 0, kA);
    CountWsClosed(n, 0, 0, 0, 0, kA);   // one it never counted
    n.host(0).ws_open = 0;
    CountWsOpened(n, 0, kA);
    EXPECT_EQ(ReapWsHolders(n, kB, OnlyBExists), 1u);
    EXPECT_EQ(n.WsOpen(), 0u);
}

TEST(WsHolders, AFullTableFreesTheDeadsHoldersForANewProcess) {
    testing::PubsubTestNetwork t(1, {0});
    Network& n = t.network;
    for (uint32_t p = 1; p <= kWsHolders; p++) {
        CountWsOpened(n, 0, ProcessIdentity{1000 + p, p});
    }
    EXPECT_EQ(n.WsOpen(), kWsHolders);
    // every holder taken by a process that has since died: B claims one
    // after taking their counts off
    WsHolders(n.table(), kB, OnlyBExists).Opened(n.RecordIndex(0));
    n.host(0).ws_open.fetch_add(1);
    EXPECT_EQ(n.WsOpen(), 1u);
    ASSERT_NE(HolderOf(n, kB), nullptr);
    EXPECT_EQ(HolderOf(n, kB)->open[n.RecordIndex(0)].load(), 1);
}

TEST(WsHolders, WithEveryHolderLiveAProcessStillCountsItsConnections) {
    testing::PubsubTestNetwork t(1, {0});
    Network& n = t.network;
    for (uint32_t p = 1; p <= kWsHolders; p++) {
        WsHolders(n.table(), ProcessIdentity{1000 + p, p}, EveryoneExists)
            .Opened(n.RecordIndex(0));
    }
    WsHolders late(n.table(), kB, EveryoneExists);
    late.Opened(n.RecordIndex(0));
    EXPECT_EQ(HolderOf(n, kB), nullptr) << "no holder: ws_open alone";
    late.Closed(n.RecordIndex(0));
    EXPECT_EQ(late.Reap(), 0u);
}

TEST(WsHolders, ThisProcessIsStableAndAForkedChildIsAnother) {
    ProcessIdentity self = ThisProcess();
    EXPECT_EQ(self.pid, static_cast<uint32_t>(getpid()));
    EXPECT_NE(self.incarnation, 0u);
    EXPECT_EQ(ThisProcess().Packed(), self.Packed());
    EXPECT_TRUE(ProcessExists(self.pid));

    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t child = fork();
    if (child == 0) {
        ProcessIdentity mine = ThisProcess();
        uint64_t packed = mine.Packed();
        ssize_t n = write(fds[1], &packed, sizeof packed);
        _exit(n == sizeof packed ? 0 : 1);
    }
    uint64_t packed = 0;
    ASSERT_EQ(read(fds[0], &packed, sizeof packed),
              static_cast<ssize_t>(sizeof packed));
    int status = 0;
    waitpid(child, &status, 0);
    close(fds[0]);
    close(fds[1]);
    EXPECT_EQ(static_cast<uint32_t>(packed), static_cast<uint32_t>(child));
    EXPECT_NE(packed, self.Packed());
    EXPECT_FALSE(ProcessExists(static_cast<uint32_t>(child)))
        << "reaped by waitpid";
}

TEST(WsHolders, AFullNetworkIsNotFullOnceADeadWorkersConnectionsAreOff) {
    RpcRequest subscription;
    subscription.shape = RpcRequest::Shape::kSubscription;
    NetworkSettings settings;
    settings.ws_max_connections = 2;
    testing::PubsubTestNetwork t(1, {0}, settings);
    Network& n = t.network;
    auto route = [&] {
        return RouteRequest(subscription, n, PlanRoute(n, subscription, ""), 0);
    };
    // a worker that was killed (no process has this pid) held both
    ProcessIdentity killed{0x7ffffff0u, 3};
    ASSERT_FALSE(ProcessExists(killed.pid));
    CountWsOpened(n, 0, killed);
    CountWsOpened(n, 0, killed);
    EXPECT_TRUE(route().forward);
    EXPECT_EQ(n.WsOpen(), 0u);

    // live holders keep the network full
    CountWsOpened(n, 0);
    CountWsOpened(n, 0);
    EXPECT_EQ(route().http_status, 503u);
}

}  // namespace
}  // namespace solgate

namespace solgate {
namespace {

TEST(WsHolders, AReaperThatDiesMidWayIsReapedInTurn) {
    testing::PubsubTestNetwork t(1, {0});
    Network& n = t.network;
    CountWsOpened(n, 0, kA);
    CountWsOpened(n, 0, kA);
    // a process (pid 300) took A's holder to reap it and was killed
    WsHolder* held = const_cast<WsHolder*>(HolderOf(n, kA));
    ASSERT_NE(held, nullptr);
    held->owner = kWsHolderReaping | ProcessIdentity{300, 4}.Packed();
    EXPECT_EQ(ReapWsHolders(n, kB, EveryoneExists), 0u) << "its reaper lives";
    EXPECT_EQ(ReapWsHolders(n, kB, OnlyBExists), 2u);
    EXPECT_EQ(n.WsOpen(), 0u);
    EXPECT_EQ(held->owner.load(), 0u);
}

TEST(WsHolders, IncarnationsNeverCarryTheReapingBit) {
    EXPECT_EQ(ThisProcess().Packed() & kWsHolderReaping, 0u);
}

}  // namespace
}  // namespace solgate
