// The poller thread's job in a worker: one HTTP transport, the real clock,
// and a NetworkPoller per network.
#pragma once

#include <memory>
#include <vector>

#include "fleet/fleet_conf.h"
#include "routing/network.h"
#include "runtime/poller_thread.h"
#include "slots/state_poller.h"

namespace solgate {

class SystemClock : public Clock {
public:
    int64_t MonotonicMs() override;
    int64_t WallMs() override;
};

// Starts the thread; nullptr with *error set when it could not start.
// fleet: solgate_shared_state, or nullptr for a host on its own.
std::unique_ptr<PollerThread> StartPoller(std::vector<const Network*> networks,
                                          uint32_t pid, const FleetConf* fleet,
                                          LogSink log, std::string* error);

}  // namespace solgate
