// Fleet mode for one network, on this worker's poller thread: several
// nginx hosts share their slot views, health, poller cordons, the tips'
// memories and operator cordons through a FleetStore, and poll each
// upstream from one host only.
//
// Each host keeps routing on its own shared memory; this job keeps it in
// step with the fleet once per poller tick. For every upstream whose (shm)
// lease this worker holds, it claims the fleet's lease too: the holder
// polls and publishes what it learns, the other hosts take it from the
// store. The tips' memories and operator cordons are kept in step by the
// worker that holds upstream 0's lease. When the store is down every host
// polls on its own, as without fleet mode, and catches up once it is back.
//
// With `state PATH` the host's operator state file follows the fleet: an
// operator cordon or uncordon taken from the fleet is saved there too, so
// a host that restarts while the store is down comes back with the
// fleet's last word. When it starts with the store up, the first read
// decides per upstream: the later of the host's cordon (its time, from
// the file) and the fleet's change wins; an upstream the fleet has no
// word on keeps the host's cordon, which then goes to the fleet (the
// file seeds a fleet that has lost its state, or a new host).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fleet/fleet_store.h"
#include "routing/network.h"
#include "slots/state_poller.h"

namespace solgate {

// A fleet lease outlives a few ticks, so a holder that died is replaced
// within this long.
constexpr int64_t kFleetLeaseTtlMs = 3000;
// Another host's views of an upstream not rewritten for this long (the
// host writes them every 400 ms tick) are not taken, and this host polls
// the upstream itself: their writer stopped (it quit, or lost the store)
// or they are what a store that hung kept from before.
constexpr int64_t kFleetViewsFreshMs = 1500;

class FleetSync {
public:
    FleetSync(const Network& network, FleetStore& store, std::string prefix,
              std::string host_id, uint32_t pid, LogSink log);

    // Once per poller tick, after the network's poller claimed its leases.
    void Tick(int64_t now_ms, int64_t wall_ms);

    // Whether this worker polls upstream i itself (its shm lease held):
    // not while another host holds the fleet's lease.
    bool MayPoll(size_t i, int64_t now_ms) const;

    // The keys, for tests and the README: every key of a network carries
    // the hash tag {network}, so Redis Cluster keeps them on one node.
    std::string Key(std::string_view what) const;

private:
    bool HoldsLocalLease(size_t i, int64_t now_ms) const;
    void PublishViews(const std::vector<size_t>& local, int64_t now_ms,
                      int64_t wall_ms);
    void TakeViews(const FleetStore::Hash& views, int64_t now_ms,
                   int64_t wall_ms);
    bool ViewsStale(size_t i, const std::string& by, int64_t now_ms,
                    int64_t wall_ms);
    // `by`: the views' "by" of it (HOST@WALL_MS: the host that polls it).
    void TakePollerCordon(const FleetStore::Hash& views, size_t i,
                          const std::string& by);
    void SyncMemories();
    void SyncCordons(int64_t now_ms, int64_t wall_ms);
    void TakeCordons(const FleetStore::Hash& cordons, int64_t now_ms,
                     int64_t wall_ms);

    const Network& network_;
    FleetStore& store_;
    std::string prefix_;
    std::string host_id_;
    std::string holder_;   // FleetHolder: the host id and its nginx
    uint32_t pid_;
    LogSink log_;
    // Per upstream: the fleet's lease is this host's until, another's until
    // (monotonic ms, as the claim answered).
    std::vector<int64_t> held_until_;
    std::vector<int64_t> other_until_;
    // Per upstream: the last views read of it were stale
    // (kFleetViewsFreshMs): polled here.
    std::vector<unsigned char> views_stale_;
    // Per upstream: the views' stamp last read, and since when (monotonic
    // ms).
    std::vector<std::string> last_by_;
    std::vector<int64_t> by_since_ms_;
    // Per upstream: new stamps in a row that were old by the writer's
    // clock; kSkewReads of them are clocks apart (logged once).
    std::vector<uint32_t> old_stamps_;
    static constexpr uint32_t kSkewReads = 3;
    bool skew_logged_ = false;
    // Operator cordons as last agreed with the fleet: known after the first
    // read; cordoned or not, and the wall time of that state.
    bool cordons_known_ = false;
    std::vector<int> synced_cordon_;      // -1 unknown, 0 no, 1 cordoned
    std::vector<int64_t> synced_cordon_ms_;
    std::vector<std::string> synced_note_;
    bool was_up_ = true;
    // Alive while the job is: callbacks that come after it is gone do
    // nothing.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace solgate
