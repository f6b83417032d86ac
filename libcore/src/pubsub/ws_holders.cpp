#include "pubsub/ws_holders.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "routing/network.h"

namespace solgate {

namespace {

// (pid << 32 | incarnation) of the process that drew it: a forked child
// draws its own
std::atomic<uint64_t> g_this_process{0};

uint32_t DrawIncarnation(uint32_t pid) {
    struct timespec ts {};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = static_cast<uint64_t>(ts.tv_nsec) ^
                 (static_cast<uint64_t>(ts.tv_sec) << 20) ^
                 (static_cast<uint64_t>(pid) << 40) ^
                 reinterpret_cast<uintptr_t>(&ts);
    // splitmix64's finaliser; never 0, so an owner is never 0
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    // 31 bits: an owner never has kWsHolderReaping set
    uint32_t v = static_cast<uint32_t>(x) & 0x7fffffffu;
    return v != 0 ? v : 1;
}

}  // namespace

ProcessIdentity ThisProcess() {
    uint32_t pid = static_cast<uint32_t>(getpid());
    uint64_t drawn = g_this_process.load(std::memory_order_relaxed);
    if (drawn == 0 || static_cast<uint32_t>(drawn >> 32) != pid) {
        drawn = (static_cast<uint64_t>(pid) << 32) | DrawIncarnation(pid);
        g_this_process.store(drawn, std::memory_order_relaxed);
    }
    return ProcessIdentity{pid, static_cast<uint32_t>(drawn)};
}

bool ProcessExists(uint32_t pid) {
    return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

WsHolder* WsHolders::Mine() const {
    for (WsHolder& h : table_.ws_holders) {
        if (h.owner.load(std::memory_order_acquire) == self_.Packed()) {
            return &h;
        }
    }
    return nullptr;
}

WsHolder* WsHolders::ClaimFree() {
    for (WsHolder& h : table_.ws_holders) {
        uint64_t expected = 0;
        if (h.owner.compare_exchange_strong(expected, self_.Packed(),
                                            std::memory_order_acq_rel)) {
            return &h;
        }
    }
    return nullptr;
}

WsHolder* WsHolders::Claim() {
    if (WsHolder* h = ClaimFree()) {
        return h;
    }
    // full: the dead's holders are the ones to free
    Reap();
    return ClaimFree();
}

void WsHolders::Opened(size_t slot) {
    if (slot >= kMaxUpstreams) {
        return;
    }
    WsHolder* h = Mine();
    if (h == nullptr) {
        h = Claim();
    }
    if (h != nullptr) {
        h->open[slot].fetch_add(1, std::memory_order_relaxed);
    }
}

void WsHolders::Closed(size_t slot) {
    WsHolder* h = slot < kMaxUpstreams ? Mine() : nullptr;
    if (h == nullptr) {
        return;
    }
    // one opened before this process had a holder is not in it
    int32_t n = h->open[slot].load(std::memory_order_relaxed);
    while (n > 0 && !h->open[slot].compare_exchange_weak(
                        n, n - 1, std::memory_order_relaxed)) {
    }
}

// A holder's owner (or, while it is reaped, its reaper) that is gone.
bool WsHolders::Dead(uint64_t owner) const {
    uint64_t process = owner & ~kWsHolderReaping;
    if (owner == 0 || process == self_.Packed()) {
        return false;
    }
    uint32_t pid = static_cast<uint32_t>(process);
    // our pid with another incarnation: a process before us that died
    return pid == self_.pid || !exists_(pid);
}

uint64_t WsHolders::TakeOff(WsHolder& holder) {
    uint64_t taken = 0;
    for (size_t slot = 0; slot < kMaxUpstreams; slot++) {
        int32_t n = holder.open[slot].exchange(0, std::memory_order_relaxed);
        if (n > 0) {
            table_.records[slot].host.ws_open.fetch_sub(
                n, std::memory_order_relaxed);
            taken += static_cast<uint64_t>(n);
        }
    }
    return taken;
}

uint64_t WsHolders::Reap() {
    uint64_t taken = 0;
    for (WsHolder& h : table_.ws_holders) {
        uint64_t owner = h.owner.load(std::memory_order_acquire);
        if (!Dead(owner) ||
            !h.owner.compare_exchange_strong(
                owner, kWsHolderReaping | self_.Packed(),
                std::memory_order_acq_rel)) {
            continue;
        }
        taken += TakeOff(h);
        h.owner.store(0, std::memory_order_release);
    }
    return taken;
}

uint64_t ReapWsHolders(const Network& network, ProcessIdentity self,
                       ProcessExistsFn exists) {
    if (!network.bound()) {
        return 0;
    }
    return WsHolders(network.table(), self, exists).Reap();
}

}  // namespace solgate
