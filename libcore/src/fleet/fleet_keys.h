// How the fleet's keys are named in Redis: the prefix, then a Redis
// Cluster hash tag, so that one network's keys, and one region's Cube
// Runner state, each stay on one node (the scripts that touch several
// keys need that) while networks and regions spread over the cluster.
#pragma once

#include <string>
#include <string_view>

namespace solgate {

// PREFIX{NETWORK}: the slot views, leases, memories and cordons.
inline std::string NetworkKeyTag(std::string_view prefix,
                                 std::string_view network) {
    return std::string(prefix) + "{" + std::string(network) + "}:";
}

// PREFIX{NETWORK:REGION}: Cube Runner's claims, allowances and buckets.
inline std::string RegionKeyTag(std::string_view prefix,
                                std::string_view network,
                                std::string_view region) {
    return std::string(prefix) + "{" + std::string(network) + ":" +
           std::string(region) + "}:";
}

}  // namespace solgate
