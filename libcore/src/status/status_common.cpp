#include "status/status_common.h"

#include "blocks/block_service.h"
#include "slots/state_poller.h"

namespace solgate {

std::vector<const Network*> BoundNetworks(
    const std::vector<const Network*>& networks) {
    std::vector<const Network*> bound;
    for (const Network* network : networks) {
        if (network != nullptr && network->bound()) {
            bound.push_back(network);
        }
    }
    return bound;
}

uint64_t ReadCounter(const std::atomic<uint64_t>& counter) {
    return counter.load(std::memory_order_relaxed);
}

bool UpstreamHealthy(const Network& network, size_t i) {
    return network.slots().Health(i) != HealthOutcome::kFailed &&
           IngestionLag(network, i) <= kMaxShredInsertSlotLag &&
           network.slots().Genesis(i) != GenesisCheck::kDiffers;
}

const BlocksView* BoundBlocks(const Network& network) {
    const BlockService* blocks = network.blocks();
    if (blocks == nullptr || !blocks->bound()) {
        return nullptr;
    }
    return &blocks->view();
}

}  // namespace solgate
