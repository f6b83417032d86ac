// The shared zone a solgate_blocks gets from nginx, for tests: zeroed,
// 64-byte aligned, sized for the configuration's queues.
#pragma once

#include <cstdlib>
#include <cstring>

#include "blocks/block_service.h"
#include "support/temp_dir.h"

namespace solgate::testing {

class BlocksZone {
public:
    explicit BlocksZone(const BlockServiceConf& conf)
        : size_((BlocksSharedSize(conf) + 63) / 64 * 64),
          memory_(std::aligned_alloc(64, size_)) {
        std::memset(memory_, 0, size_);
    }
    ~BlocksZone() { std::free(memory_); }
    BlocksZone(const BlocksZone&) = delete;
    BlocksZone& operator=(const BlocksZone&) = delete;

    void* memory() const { return memory_; }
    BlocksShared* shared() const { return static_cast<BlocksShared*>(memory_); }

private:
    size_t size_;
    void* memory_;
};

// What nginx and a worker do for a solgate_blocks, for tests: `conf` (its
// directories set to a scratch directory) attached to `network`, bound to
// a fresh zone, its cache and ledger opened. error() is "" when all went.
class BlockServiceRig {
public:
    BlockServiceRig(Network& network, const std::string& name,
                    BlockServiceConf conf)
        : dir_(name) {
        conf.cache_dir = dir_.path() + "/cache";
        conf.state_dir = dir_.path() + "/state";
        zone_ = std::make_unique<BlocksZone>(conf);
        service_ = std::make_unique<BlockService>(std::move(conf));
        service_->Attach(network);
        if (service_->Bind(zone_->memory(), true, &error_)) {
            service_->OpenStore(true, &error_);
        }
    }
    ~BlockServiceRig() { service_->CloseStore(); }
    BlockServiceRig(const BlockServiceRig&) = delete;
    BlockServiceRig& operator=(const BlockServiceRig&) = delete;

    BlockService* service() const { return service_.get(); }
    BlocksShared* shared() const { return zone_->shared(); }
    const std::string& error() const { return error_; }

private:
    TempDir dir_;   // destroyed last
    std::unique_ptr<BlocksZone> zone_;
    std::unique_ptr<BlockService> service_;
    std::string error_;
};

}  // namespace solgate::testing
