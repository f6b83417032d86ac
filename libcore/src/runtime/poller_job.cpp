#include "runtime/poller_job.h"

#include <time.h>

#include <optional>

#include "blocks/block_service.h"
#include "blocks/block_sync.h"
#include "runtime/curl_transport.h"
#include "blocks/long_term_retriever.h"
#include "fleet/fleet_keys.h"
#include "fleet/fleet_sync.h"
#include "fleet/region_claims.h"
#include "fleet/region_rates.h"
#include "fleet/redis_store.h"
#include "routing/request_metrics.h"

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
              uint32_t pid, const FleetConf* fleet, const LogSink& log)
        : transport_(loop) {
        if (fleet != nullptr) {
            store_ = std::make_unique<RedisStore>(loop, *fleet, log);
            store_->Tick(clock_.MonotonicMs());
        }
        if (store_ != nullptr) {
            // every network of the host shows the store's round trips
            store_->SetRoundTripObserver([networks](uint64_t us) {
                for (const Network* network : networks) {
                    if (network->bound()) {
                        ObserveStoreRoundTrip(network->counters(), us);
                    }
                }
            });
        }
        for (const Network* network : networks) {
            if (network->bound()) {
                // what a fleet that is no more left in the zone (a reload)
                network->counters().fleet_link.store(
                    fleet != nullptr ? kFleetLinkDown : kFleetLinkNone);
            }
            pollers_.push_back(std::make_unique<NetworkPoller>(
                *network, transport_, clock_, log, pid));
            if (store_ != nullptr) {
                fleets_.push_back(std::make_unique<FleetSync>(
                    *network, *store_, fleet->prefix, fleet->host_id, pid,
                    log));
                FleetSync* sync = fleets_.back().get();
                pollers_.back()->SetGate([sync](size_t i, int64_t now) {
                    return sync->MayPoll(i, now);
                });
            }
        }
        // Cube Runner's region sync, for each network that serves blocks,
        // and its long-term storage retrievals where a plan has a queue.
        for (const Network* network : networks) {
            BlockService* blocks = network->blocks();
            if (blocks == nullptr) {
                continue;
            }
            services_.push_back(blocks);
            syncs_.push_back(std::make_unique<BlockSync>(
                blocks->sync_parts(), transport_, clock_, log, pid));
            if (store_ != nullptr) {
                rates_.push_back(std::make_unique<RegionRates>(
                    blocks->conf(), blocks->zone(), *store_, fleet->prefix,
                    network->name(), pid));
            }
            if (blocks->conf().QueuedPlans() > 0) {
                retrievers_.push_back(std::make_unique<LongTermRetriever>(
                    blocks->long_term(), blocks->cache(), transport_, clock_,
                    log, pid));
                if (store_ != nullptr) {
                    std::vector<std::string> plans;
                    for (const BlockPlan& plan : blocks->conf().plans()) {
                        plans.push_back(plan.name);
                    }
                    regions_.push_back(std::make_unique<FleetRegionClaims>(
                        *store_, fleet->prefix, network->name(),
                        blocks->conf().region(),
                        FleetHolder(fleet->host_id, network->Instance()),
                        std::move(plans)));
                    retrievers_.back()->SetRegion(regions_.back().get());
                    Clock* clock = &clock_;
                    retrievers_.back()->SetHeldInRegion(
                        [blocks, clock](uint64_t slot,
                                        const std::string& variant) {
                            return blocks->HeldInRegion(
                                slot, variant, clock->MonotonicMs());
                        });
                    if (blocks->conf().peers().empty()) {
                        log(kLogWarn,
                            "network \"" + network->name() +
                                "\" runs a long-term queue in fleet mode "
                                "without a peer: a host that does not lead "
                                "the region's queue cannot serve the blocks "
                                "the leader retrieves for its clients; list "
                                "every host of the region with \"peer\"");
                    }
                    // the region's 24-hour receipts, for repeat counts
                    blocks->KeepRegionReceipts();
                    receipts_.emplace_back(blocks, regions_.back().get());
                }
            }
        }
        if (!services_.empty()) {
            // Cache commits handed over by the event loop run here, now.
            commit_async_ = new uv_async_t;
            uv_async_init(loop, commit_async_, &PollerJob::OnCommits);
            commit_async_->data = this;
            for (BlockService* service : services_) {
                uv_async_t* async = commit_async_;
                service->SetCommitWaker([async] { uv_async_send(async); });
            }
        }
        if (!retrievers_.empty()) {
            // Retrievals are handed out by rate, finer than the 400 ms tick.
            retrieval_timer_ = new uv_timer_t;
            uv_timer_init(loop, retrieval_timer_);
            retrieval_timer_->data = this;
            uv_timer_start(retrieval_timer_, &PollerJob::OnRetrievalTick,
                           kRetrieverTickMs, kRetrieverTickMs);
        }
    }

    ~PollerJob() override {
        for (BlockService* service : services_) {
            service->SetCommitWaker(nullptr);
            service->RunCommits();   // what was handed over is not lost
        }
        if (commit_async_ != nullptr) {
            uv_close(reinterpret_cast<uv_handle_t*>(commit_async_),
                     [](uv_handle_t* h) {
                         delete reinterpret_cast<uv_async_t*>(h);
                     });
        }
        if (retrieval_timer_ != nullptr) {
            uv_timer_stop(retrieval_timer_);
            uv_close(reinterpret_cast<uv_handle_t*>(retrieval_timer_),
                     [](uv_handle_t* h) {
                         delete reinterpret_cast<uv_timer_t*>(h);
                     });
        }
    }

    void Tick() override {
        if (store_ != nullptr) {
            store_->Tick(clock_.MonotonicMs());
        }
        for (auto& poller : pollers_) {
            poller->Tick();
        }
        for (auto& fleet : fleets_) {
            fleet->Tick(clock_.MonotonicMs(), clock_.WallMs());
        }
        for (auto& sync : syncs_) {
            sync->Tick();
        }
        for (auto& rates : rates_) {
            rates->Tick(clock_.MonotonicMs());
        }
        int64_t now = clock_.MonotonicMs();
        if (now - last_upkeep_ms_ >= kUpkeepIntervalMs) {
            last_upkeep_ms_ = now;
            for (BlockService* service : services_) {
                service->Maintain(clock_.WallMs());
            }
            for (auto& [service, region] : receipts_) {
                std::vector<RegionReceipt> receipts =
                    service->TakeRegionReceipts();
                if (!receipts.empty()) {
                    region->NoteReceipts(receipts);
                }
            }
        }
    }

private:
    // Request scores, evictions and the summary of each cache.
    static constexpr int64_t kUpkeepIntervalMs = 1000;

    static void OnCommits(uv_async_t* async) {
        auto* job = static_cast<PollerJob*>(async->data);
        for (BlockService* service : job->services_) {
            service->RunCommits();
        }
    }

    static void OnRetrievalTick(uv_timer_t* timer) {
        auto* job = static_cast<PollerJob*>(timer->data);
        for (auto& retriever : job->retrievers_) {
            retriever->Tick();
        }
    }

    // Destroyed in reverse: the syncs and the pollers release their leases
    // before the transport cancels what is still in flight (whose replies
    // then never arrive).
    SystemClock clock_;
    CurlTransport transport_;
    // fleet mode: the store outlives the syncs that use it
    std::unique_ptr<RedisStore> store_;
    std::vector<std::unique_ptr<FleetSync>> fleets_;
    std::vector<std::unique_ptr<FleetRegionClaims>> regions_;
    std::vector<std::unique_ptr<RegionRates>> rates_;
    std::vector<std::unique_ptr<NetworkPoller>> pollers_;
    std::vector<std::unique_ptr<BlockSync>> syncs_;
    std::vector<std::unique_ptr<LongTermRetriever>> retrievers_;
    std::vector<BlockService*> services_;
    // fleet mode: whose receipts go to which region
    std::vector<std::pair<BlockService*, FleetRegionClaims*>> receipts_;
    int64_t last_upkeep_ms_ = 0;
    uv_timer_t* retrieval_timer_ = nullptr;   // freed by its close callback
    uv_async_t* commit_async_ = nullptr;      // likewise
};

}  // namespace

int64_t SystemClock::MonotonicMs() { return ClockMs(CLOCK_MONOTONIC); }
int64_t SystemClock::WallMs() { return ClockMs(CLOCK_REALTIME); }

std::unique_ptr<PollerThread> StartPoller(std::vector<const Network*> networks,
                                          uint32_t pid, const FleetConf* fleet,
                                          LogSink log, std::string* error) {
    std::optional<FleetConf> conf;
    if (fleet != nullptr) {
        conf = *fleet;
    }
    LoopJobFactory factory = [networks, pid, conf, log](uv_loop_t* loop) {
        return std::unique_ptr<LoopJob>(new PollerJob(
            loop, networks, pid, conf ? &*conf : nullptr, log));
    };
    return PollerThread::Start(std::move(factory), kPollIntervalMs, error);
}

}  // namespace solgate
