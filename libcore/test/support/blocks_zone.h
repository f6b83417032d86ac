// The shared zone a solgate_blocks gets from nginx, for tests: zeroed,
// 64-byte aligned, sized for the configuration's queues; a queue mapped
// on its own; and the words of a getBlock exchange.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

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

// An archive plan "arch" small enough to fill in a test: no rate limit,
// 10 retrievals a second, 2 blocks queued, 3 a month per key.
inline void DefineSmallArchivePlan(BlockConfBuilder& conf) {
    Accept(conf.PlanDefine("arch", {"tier=archive", "getblock_rate=0",
                                    "retrieval_rate=10r/s", "queue_limit=2",
                                    "monthly_allowance=3"}));
}

// The index of the plan `name` (which the configuration must define).
inline size_t PlanIndex(const BlockServiceConf& conf, std::string_view name) {
    const BlockPlan* plan = FindPlan(conf.plans(), name);
    EXPECT_NE(plan, nullptr) << name;
    return static_cast<size_t>(plan - conf.plans().data());
}

// A client's getBlock of `slot` (id 9), and a block a source answers it
// with.
inline std::string GetBlockRequest(uint64_t slot) {
    return R"({"jsonrpc":"2.0","id":9,"method":"getBlock","params":[)" +
           std::to_string(slot) + R"(,{"maxSupportedTransactionVersion":0}]})";
}
inline std::string BlockReply(uint64_t slot) {
    return R"({"jsonrpc":"2.0","result":{"blockHeight":)" +
           std::to_string(slot - 7) + R"(,"transactions":[]},"id":1})";
}

// A long-term queue in shared anonymous memory, as nginx would map it.
class MappedQueue {
public:
    MappedQueue() {
        void* p = mmap(nullptr, sizeof(RetrievalQueueShared),
                       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                       -1, 0);
        if (p == MAP_FAILED) std::abort();
        q_ = static_cast<RetrievalQueueShared*>(p);
        if (!InitRetrievalQueue(q_)) std::abort();
    }
    ~MappedQueue() { munmap(q_, sizeof(RetrievalQueueShared)); }
    MappedQueue(const MappedQueue&) = delete;
    MappedQueue& operator=(const MappedQueue&) = delete;

    RetrievalQueueShared* get() { return q_; }

private:
    RetrievalQueueShared* q_;
};

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
