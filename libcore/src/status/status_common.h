// What both operator views (state_json.h, metrics_text.h) read the same
// way: which networks they show, how a shared counter is read, the
// "healthy" verdict on an upstream, and a network's Cube Runner.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "routing/network.h"

namespace solgate {

class BlocksView;

// The networks bound to their zone, in the order given; null entries and
// networks not bound yet are left out.
std::vector<const Network*> BoundNetworks(
    const std::vector<const Network*>& networks);

// A shared counter as of now (relaxed: the views need no ordering).
uint64_t ReadCounter(const std::atomic<uint64_t>& counter);

// True unless getHealth failed, the ingestion lag exceeds
// kMaxShredInsertSlotLag or the genesis hash differs: a cold upstream
// (nothing polled yet) counts as healthy.
bool UpstreamHealthy(const Network& network, size_t i);

// The network's Cube Runner, or nullptr when it has none or its zone is
// not bound yet.
const BlocksView* BoundBlocks(const Network& network);

}  // namespace solgate
