#include "poller_job.h"

#include <time.h>

#include "block_service.h"
#include "block_sync.h"
#include "curl_transport.h"

namespace solgate {
namespace {

int64_t ClockMs(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

class PollerJob : public LoopJob {
public:
    PollerJob(uv_loop_t* loop, const std::vector<const Network*>& networks,
              uint32_t pid, const LogSink& log)
        : transport_(loop) {
        for (const Network* network : networks) {
            pollers_.push_back(std::make_unique<NetworkPoller>(
                *network, transport_, clock_, log, pid));
        }
        // Cube Runner's region sync, for each network that serves blocks.
        for (const Network* network : networks) {
            if (network->blocks() != nullptr) {
                syncs_.push_back(std::make_unique<BlockSync>(
                    *network->blocks(), transport_, clock_, log, pid));
            }
        }
    }

    void Tick() override {
        for (auto& poller : pollers_) {
            poller->Tick();
        }
        for (auto& sync : syncs_) {
            sync->Tick();
        }
    }

private:
    // Destroyed in reverse: the syncs and the pollers release their leases
    // before the transport cancels what is still in flight (whose replies
    // then never arrive).
    SystemClock clock_;
    CurlTransport transport_;
    std::vector<std::unique_ptr<NetworkPoller>> pollers_;
    std::vector<std::unique_ptr<BlockSync>> syncs_;
};

}  // namespace

int64_t SystemClock::MonotonicMs() { return ClockMs(CLOCK_MONOTONIC); }
int64_t SystemClock::WallMs() { return ClockMs(CLOCK_REALTIME); }

std::unique_ptr<PollerThread> StartPoller(std::vector<const Network*> networks,
                                          uint32_t pid, LogSink log,
                                          std::string* error) {
    LoopJobFactory factory = [networks, pid, log](uv_loop_t* loop) {
        return std::unique_ptr<LoopJob>(
            new PollerJob(loop, networks, pid, log));
    };
    return PollerThread::Start(std::move(factory), kPollIntervalMs, error);
}

}  // namespace solgate
