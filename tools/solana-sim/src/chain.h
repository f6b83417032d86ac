// The simulated slot clock, skipped-slot pattern and injected faults.
//
// The cluster slot is a pure function of wall time and the flags, so several
// independently started nodes agree on it. Each node then derives its own
// tips (processed/confirmed/finalized) and shred watermark from the cluster
// slot, minus whatever faults are active on that node.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "config.h"

namespace solsim {

enum class Commitment { Processed, Confirmed, Finalized };

// Parses Solana commitment names, including the deprecated aliases.
bool parse_commitment(const char* s, Commitment& out);

struct Tips {
    uint64_t cluster = 0;    // slot of the cluster clock (no faults)
    uint64_t processed = 0;
    uint64_t confirmed = 0;
    uint64_t finalized = 0;
    uint64_t shred = 0;      // getMaxShredInsertSlot watermark

    uint64_t at(Commitment c) const {
        switch (c) {
            case Commitment::Processed: return processed;
            case Commitment::Confirmed: return confirmed;
            case Commitment::Finalized: return finalized;
        }
        return finalized;
    }
};

struct Faults {
    bool stall = false;
    uint64_t stall_base = 0;  // cluster slot captured when the stall began
    bool unhealthy = false;
    uint64_t lag = 0;
    uint64_t rollback = 0;
    uint64_t inflate_finalized = 0;
    uint64_t latency_ms = 0;
    int http_status = 0;
    bool close = false;
    // Client (not poller) calls answered -32005 "Node is behind", as a node
    // that fell behind answers reads.
    bool behind_answers = false;
    // Client (not poller) answers cut short: the whole body's
    // Content-Length, half of the body, then the connection closed.
    bool cut_answers = false;
    // getBlock only: extra delay, and the fraction of calls that fail with
    // -32019 "Failed to query long-term storage" (HTTP 503 when alone).
    uint64_t getblock_latency_ms = 0;
    double getblock_failure_rate = 0.0;
    // Responses holding a call of latency_method delayed method_latency_ms
    // more; calls of wrong_value_method (getBalance, getAccountInfo)
    // answered one lamport too many, as a node with a bad ledger would.
    std::string latency_method;
    uint64_t method_latency_ms = 0;
    std::string wrong_value_method;

    void clear() { *this = Faults(); }
    std::string to_json() const;
};

int64_t wall_clock_ms();

class Chain {
  public:
    // Skipped slots repeat with this period so that counting them up to any
    // slot is O(1) through a prefix table.
    static constexpr uint64_t kSkipPeriod = 1000;

    explicit Chain(const SimConfig& cfg);

    uint64_t cluster_slot(int64_t now_ms) const;
    Tips tips(int64_t now_ms) const;
    Tips tips_now() const { return tips(wall_clock_ms()); }

    bool is_skipped(uint64_t slot) const { return skipped_[slot % kSkipPeriod]; }
    // Number of skipped slots in [0, slot].
    uint64_t skipped_upto(uint64_t slot) const;
    uint64_t block_height(uint64_t slot) const { return slot - skipped_upto(slot); }
    // Largest non-skipped slot <= slot (slot 0 is never skipped).
    uint64_t latest_produced(uint64_t slot) const;
    // Parent of a produced slot: the previous non-skipped slot (0 for slot 0).
    uint64_t parent_slot(uint64_t slot) const { return slot == 0 ? 0 : latest_produced(slot - 1); }
    // Unix seconds at which the slot was produced on the simulated clock.
    int64_t block_time(uint64_t slot) const;

    Faults& faults() { return faults_; }
    const Faults& faults() const { return faults_; }
    void set_stall(bool on);
    // Clears every fault; the getBlock latency and failure rate go back to
    // their command-line values.
    void clear_faults();

  private:
    const SimConfig& cfg_;
    std::array<bool, kSkipPeriod> skipped_{};
    std::array<uint32_t, kSkipPeriod + 1> skipped_prefix_{};  // count in [0, i)
    Faults faults_;
};

}  // namespace solsim
