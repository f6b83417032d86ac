// Command-line configuration of one simulated Solana RPC node.
#pragma once

#include <cstdint>
#include <string>

namespace solsim {

struct SimConfig {
    std::string host = "127.0.0.1";
    int port = 0;
    std::string cluster = "mainnet-beta";
    uint64_t slot_ms = 400;
    double skip_rate = 0.05;
    uint64_t start_slot = 0;
    // 2024-01-01T00:00:00Z. Every node derives its slot from wall time and
    // this anchor, so independently started nodes agree on the cluster slot.
    int64_t anchor_ms = 1704067200000LL;
    uint64_t finalized_lag = 32;
    uint64_t block_bytes = 4096;
    uint64_t first_available_block = 0;
    uint64_t seed = 1;
    std::string name;  // defaults to "sim-PORT"
    bool quiet = false;
};

}  // namespace solsim
