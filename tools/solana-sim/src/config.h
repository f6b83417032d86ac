// Command-line configuration of one simulated Solana RPC node.
#pragma once

#include <cstdint>
#include <string>

namespace solsim {

struct SimConfig {
    std::string host = "127.0.0.1";
    int port = 0;
    int ws_port = 0;  // pubsub (WebSocket) port; 0: none
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
    // --archive: getBlock stands in for long-term storage (an archive node,
    // BigTable, Old Faithful): every slot from 0 up to finalized, skipped
    // slots answer -32009 instead of -32007.
    bool archive = false;
    // Initial values of the getBlock latency / storage failure faults; the
    // control API can change them and /_sim/fault/clear restores these.
    uint64_t getblock_latency_ms = 0;
    double getblock_failure_rate = 0.0;
    std::string name;  // defaults to "sim-PORT"
    bool quiet = false;
};

}  // namespace solsim
