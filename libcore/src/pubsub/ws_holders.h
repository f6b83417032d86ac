// Which process holds how many of a network's subscription connections,
// per zone slot, in the network's zone. The upstreams' open counts
// (UpstreamHostRecord::ws_open: solgate_ws_connections, and what
// ws_max_connections is checked against) are kept by each process as its
// connections open and close; a worker killed with SIGKILL, or one that
// crashed, never counts its own closed. So each process also counts its
// connections in a holder of its own, and ReapWsHolders takes what a dead
// process still held off the upstreams' counts and frees its holder.
//
// A process that finds no free holder (more than kWsHolders processes
// with subscriptions at once) still counts its connections in ws_open,
// where a kill leaves them, as before holders. So does a dead worker
// whose pid another program took before the holder was looked at (the pid
// exists): it is reaped once that program ends.
#pragma once

#include <cstddef>
#include <cstdint>

#include "slots/shared_state.h"

namespace solgate {

class Network;

// A process as a holder's owner: its pid, and a value drawn once per
// process (31 bits, never 0), so a new process that got a dead one's pid
// is told from it.
struct ProcessIdentity {
    uint32_t pid = 0;
    uint32_t incarnation = 0;

    uint64_t Packed() const {
        return (static_cast<uint64_t>(incarnation) << 32) | pid;
    }
};

ProcessIdentity ThisProcess();
// Whether a process with this pid exists (kill(pid, 0)).
bool ProcessExists(uint32_t pid);

using ProcessExistsFn = bool (*)(uint32_t pid);

class WsHolders {
  public:
    WsHolders(NetworkShared& table, ProcessIdentity self,
              ProcessExistsFn exists = ProcessExists)
        : table_(table), self_(self), exists_(exists) {}

    // A connection on zone slot `slot` opened, or closed, in this process:
    // counted in its holder (claimed at its first connection).
    void Opened(size_t slot);
    void Closed(size_t slot);
    // Takes what dead processes' holders still count off the upstreams'
    // ws_open and frees those holders. Returns the connections taken off.
    uint64_t Reap();

  private:
    WsHolder* Mine() const;
    WsHolder* ClaimFree();
    WsHolder* Claim();
    bool Dead(uint64_t owner) const;
    uint64_t TakeOff(WsHolder& holder);

    NetworkShared& table_;
    ProcessIdentity self_;
    ProcessExistsFn exists_;
};

// The network's holders as this process sees them: Reap for the network
// (the per-worker tick, a full ws_max_connections, the metrics).
uint64_t ReapWsHolders(const Network& network,
                       ProcessIdentity self = ThisProcess(),
                       ProcessExistsFn exists = ProcessExists);

}  // namespace solgate
