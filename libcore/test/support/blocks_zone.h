// The shared zone a solgate_blocks gets from nginx, for tests: zeroed,
// 64-byte aligned, sized for the configuration's queues.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "blocks/block_service.h"
#include "support/temp_dir.h"

namespace solgate::testing {

// One step of a test's configuration: a refused step fails the test.
inline void Accept(const std::optional<std::string>& refused) {
    if (refused) {
        ADD_FAILURE() << "configuration refused: " << *refused;
    }
}

// The configuration a builder made, or an empty one (and a failure).
inline BlockServiceConf Built(const BlockConfBuilder& builder) {
    BlockServiceConf conf;
    Accept(builder.Build(&conf));
    return conf;
}

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
    size_t size() const { return size_; }
    BlocksShared* shared() const { return static_cast<BlocksShared*>(memory_); }

private:
    size_t size_;
    void* memory_;
};

// What nginx and a worker do for a solgate_blocks, for tests: the
// builder's configuration (its cache and state set to a scratch
// directory) served for `network`, bound to a fresh zone, its cache and
// ledger opened. error() is "" when all went.
class BlockServiceRig {
public:
    BlockServiceRig(Network& network, const std::string& name,
                    BlockConfBuilder builder)
        : network_(network), dir_(name) {
        Start(std::move(builder));
    }
    ~BlockServiceRig() {
        if (service_) {
            service_->CloseStore();
        }
    }
    BlockServiceRig(const BlockServiceRig&) = delete;
    BlockServiceRig& operator=(const BlockServiceRig&) = delete;

    // A reload: a new BlockService for the new configuration over the same
    // cache, state and (when its size still fits) zone, as nginx builds
    // one per cycle; the old one is closed and gone first.
    void Reload(BlockConfBuilder builder) {
        if (service_) {
            service_->CloseStore();
            service_.reset();
        }
        Start(std::move(builder));
    }

    BlockService* service() const { return service_.get(); }
    BlocksShared* shared() const { return zone_->shared(); }
    const std::string& error() const { return error_; }

private:
    void Start(BlockConfBuilder builder) {
        error_.clear();
        BlockServiceConf conf;
        std::optional<std::string> bad = builder.Cache(dir_.path() + "/cache");
        if (!bad) bad = builder.State(dir_.path() + "/state");
        if (!bad) bad = builder.Build(&conf);
        if (bad) {
            error_ = *bad;
            return;
        }
        bool fresh = zone_ == nullptr ||
                     zone_->size() < BlocksSharedSize(conf);
        if (fresh) {
            zone_ = std::make_unique<BlocksZone>(conf);
        }
        service_ = std::make_unique<BlockService>(std::move(conf), network_);
        if (service_->Bind(zone_->memory(), fresh, &error_)) {
            service_->OpenStore(true, &error_);
        }
    }

    Network& network_;
    TempDir dir_;   // destroyed last
    std::unique_ptr<BlocksZone> zone_;
    std::unique_ptr<BlockService> service_;
    std::string error_;
};

}  // namespace solgate::testing
