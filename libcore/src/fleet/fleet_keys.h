// How the fleet's keys are named in Redis: the prefix, then a Redis
// Cluster hash tag, so that one network's keys, and one region's Cube
// Runner state, each stay on one node (the scripts that touch several
// keys need that) while networks and regions spread over the cluster.
#pragma once

#include <cstdint>
#include <cstdio>
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

// Who holds a fleet's lease or leads a region's queue: the host's id and
// its nginx's instance (Network::Instance), so that two hosts given the
// same solgate_host_id (cloned machines, one host name) still hold theirs
// apart.
inline std::string FleetHolder(std::string_view host_id, uint64_t instance) {
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx",
                  static_cast<unsigned long long>(instance));
    return std::string(host_id) + "#" + hex;
}

}  // namespace solgate
