// Prints the sizes of the structures in a Solgate network's shared zone,
// from libcore's own definitions (libcore/src/slots/shared_state.h).  Built and
// run by tools/bench/run.sh; it links nothing, only sizeof is used.
#include <cstdio>

#include "slots/shared_state.h"

int main() {
    using namespace solgate;
    std::printf("network_shared_bytes %zu\n", sizeof(NetworkShared));
    std::printf("upstream_slot_bytes %zu\n", sizeof(UpstreamRecord));
    std::printf("lane_bytes %zu\n", sizeof(LaneShared));
    std::printf("max_upstreams %zu\n", kMaxUpstreams);
    std::printf("max_lanes %zu\n", kMaxLanes);
    return 0;
}
