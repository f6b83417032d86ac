#include "blocks/blocks_shared.h"

#include <cstring>

namespace solgate {
namespace {

constexpr size_t kQueueAlign = 64;

size_t RoundUp(size_t n) {
    return (n + kQueueAlign - 1) / kQueueAlign * kQueueAlign;
}

}  // namespace

RetrievalQueueShared* QueueAt(void* zone, size_t i) {
    auto* base =
        static_cast<unsigned char*>(zone) + RoundUp(sizeof(BlocksShared));
    return reinterpret_cast<RetrievalQueueShared*>(
        base + i * RoundUp(sizeof(RetrievalQueueShared)));
}

size_t BlocksSharedSize(const BlockServiceConf& conf) {
    return RoundUp(sizeof(BlocksShared)) +
           conf.QueuedPlans() * RoundUp(sizeof(RetrievalQueueShared));
}

bool SharedBlocks::Bind(void* memory, bool fresh, std::string* error) {
    auto* shared = static_cast<BlocksShared*>(memory);
    uint32_t queues = static_cast<uint32_t>(conf_.QueuedPlans());
    if (fresh || shared->magic != BlocksShared::kMagic ||
        shared->layout != BlocksShared::kLayout || shared->queues != queues) {
        std::memset(memory, 0, BlocksSharedSize(conf_));
        shared->magic = BlocksShared::kMagic;
        shared->layout = BlocksShared::kLayout;
        shared->queues = queues;
        InitKeyTable(&shared->keys);
        for (uint32_t i = 0; i < queues; i++) {
            if (!InitRetrievalQueue(QueueAt(memory, i))) {
                *error = "cannot set up a long-term storage queue's mutex";
                return false;
            }
        }
    }
    queues_.assign(conf_.plans().size(), nullptr);
    uint32_t next = 0;
    for (size_t p = 0; p < conf_.plans().size(); p++) {
        if (conf_.HasQueue(p)) {
            queues_[p] = QueueAt(memory, next++);
        }
    }
    shared_ = shared;
    return true;
}

std::string SharedBlocks::KeyText(uint32_t key_index) const {
    if (shared_ == nullptr || key_index >= KeyTable::kCapacity) {
        return "";
    }
    const KeyEntry& e = shared_->keys.entries[key_index];
    if (e.ready.load(std::memory_order_acquire) == 0) {
        return "";
    }
    return std::string(e.text, strnlen(e.text, sizeof(e.text)));
}

}  // namespace solgate
