// Fleet mode: each API key's getBlock rate limit holds for the whole
// region, not per host. The request path keeps checking the host's own
// bucket (shm, GCRA: never a wait on Redis); once per poller tick the
// process holding the rate-sync lease tells the region how many calls each
// key was allowed here since the last tick, and raises each key's bucket
// here to the region's, which counts every host's calls:
//   PREFIX{NET:REGION}:rate   key -> theoretical arrival time (Redis TIME,
//                             microseconds); a field past is deleted
// Tolerance: between two ticks each host decides alone, so a key may get
// up to one burst plus one tick's worth of its rate more per other host
// before every host refuses it (a tick is kPollIntervalMs). When the store
// is down each host limits on its own bucket, as without fleet mode.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "blocks/block_conf.h"
#include "blocks/blocks_shared.h"
#include "fleet/fleet_store.h"

namespace solgate {

// A key seen here within this long is asked about even when it made no
// call since the last tick: other hosts may be filling its bucket.
constexpr int64_t kRateActiveMs = 10000;

class RegionRates {
public:
    RegionRates(const BlockServiceConf& conf, SharedBlocks& zone,
                FleetStore& store, std::string prefix, std::string network,
                uint32_t pid);
    ~RegionRates();   // releases the lease

    RegionRates(const RegionRates&) = delete;
    RegionRates& operator=(const RegionRates&) = delete;

    // Once per poller tick (monotonic ms, the request path's clock).
    void Tick(int64_t now_ms);

    std::string Key() const { return key_; }

private:
    struct Reported {
        uint64_t allowed = 0;   // calls allowed here, as last told
    };
    void OnAnswer(const std::vector<KeyId>& ids,
                  const std::optional<FleetStore::Words>& ahead,
                  int64_t asked_ms);

    const BlockServiceConf& conf_;
    SharedBlocks& zone_;
    FleetStore& store_;
    std::string key_;
    uint32_t pid_;
    bool in_flight_ = false;
    bool holding_ = false;   // held the lease at the last tick
    std::unordered_map<KeyId, Reported> reported_;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace solgate
