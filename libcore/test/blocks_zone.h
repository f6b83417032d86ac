// The shared zone a solgate_blocks gets from nginx, for tests: zeroed,
// 64-byte aligned, sized for the configuration's queues.
#pragma once

#include <cstdlib>
#include <cstring>

#include "block_service.h"

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

}  // namespace solgate::testing
