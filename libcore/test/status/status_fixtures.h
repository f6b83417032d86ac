// What the status tests share: fixed clocks, networks under a name of the
// test's choosing, and the two ways an upstream gets cordoned.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "routing/network.h"
#include "slots/shared_state.h"

namespace solgate::testing {

constexpr int64_t kNowMono = 5000000;
constexpr int64_t kNowWall = 1700000000123;  // 2023-11-14T22:13:20.123Z

// A network like TestNetwork, under a name of the test's choosing.
struct NamedNetwork {
    NamedNetwork(std::string name, size_t n, NetworkSettings settings = {})
        : shared(std::make_unique<NetworkShared>()),
          network(std::move(name), settings) {
        for (size_t i = 0; i < n; i++) {
            network.AddUpstream({"up-" + std::to_string(i),
                                 {"http://10.0.1." + std::to_string(i) + "/",
                                  "", "", ""}});
        }
        std::string error;
        network.Bind(shared.get(), true, 0, &error);
    }

    std::unique_ptr<NetworkShared> shared;
    Network network;
};

inline NetworkSettings Mainnet() {
    NetworkSettings s;
    s.cluster = SG_CLUSTER_MAINNET_BETA;
    return s;
}

inline void CordonByPollerForLag(UpstreamRecord& slot, uint64_t lag,
                                 int64_t wall) {
    slot.cordon_lag.store(lag);
    ASSERT_TRUE(slot.SwapCordon(
        CordonOwner::kNone,
        {CordonOwner::kPoller, CordonCause::kShredLag, wall}));
}

inline void CordonByOperator(UpstreamRecord& slot, const std::string& note,
                             int64_t wall) {
    slot.cordon_note.Write(note);
    ASSERT_TRUE(slot.SwapCordon(
        CordonOwner::kNone,
        {CordonOwner::kOperator, CordonCause::kOperator, wall}));
}

}  // namespace solgate::testing
