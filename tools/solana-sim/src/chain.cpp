#include "chain.h"

#include <cstdio>
#include <cstring>
#include <ctime>

#include "det.h"
#include "json.h"

namespace solsim {

namespace {

// Watermark offset above the processed slot. Consecutive entries differ by at
// most one, so slot + offset never decreases as the clock advances.
constexpr uint64_t kShredOffsets[8] = {0, 1, 2, 2, 1, 1, 2, 1};

uint64_t sub_floor0(uint64_t a, uint64_t b) { return a > b ? a - b : 0; }

}  // namespace

bool parse_commitment(const char* s, Commitment& out) {
    if (std::strcmp(s, "processed") == 0 || std::strcmp(s, "recent") == 0) {
        out = Commitment::Processed;
    } else if (std::strcmp(s, "confirmed") == 0 || std::strcmp(s, "single") == 0 ||
               std::strcmp(s, "singleGossip") == 0) {
        out = Commitment::Confirmed;
    } else if (std::strcmp(s, "finalized") == 0 || std::strcmp(s, "root") == 0 ||
               std::strcmp(s, "max") == 0) {
        out = Commitment::Finalized;
    } else {
        return false;
    }
    return true;
}

std::string Faults::to_json() const {
    std::string o = "{\"stall\":";
    o += stall ? "true" : "false";
    o += ",\"unhealthy\":";
    o += unhealthy ? "true" : "false";
    o += ",\"lag\":";
    json_append_u64(o, lag);
    o += ",\"rollback\":";
    json_append_u64(o, rollback);
    o += ",\"inflate_finalized\":";
    json_append_u64(o, inflate_finalized);
    o += ",\"latency_ms\":";
    json_append_u64(o, latency_ms);
    o += ",\"http_status\":";
    json_append_i64(o, http_status);
    o += ",\"close\":";
    o += close ? "true" : "false";
    o += ",\"behind_answers\":";
    o += behind_answers ? "true" : "false";
    o += ",\"cut_answers\":";
    o += cut_answers ? "true" : "false";
    o += ",\"getblock_latency_ms\":";
    json_append_u64(o, getblock_latency_ms);
    o += ",\"getblock_failure_rate\":";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6g", getblock_failure_rate);
    o += buf;
    o += ",\"latency_method\":";
    json_append_string(o, latency_method);
    o += ",\"method_latency_ms\":";
    json_append_u64(o, method_latency_ms);
    o += ",\"wrong_value_method\":";
    json_append_string(o, wrong_value_method);
    o += "}";
    return o;
}

int64_t wall_clock_ms() {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

Chain::Chain(const SimConfig& cfg) : cfg_(cfg) {
    clear_faults();
    for (uint64_t i = 0; i < kSkipPeriod; ++i) {
        // Index 0 is never skipped: slot 0 is genesis and the search for the
        // previous produced slot is then bounded by one period.
        skipped_[i] = i != 0 && unit_interval(hash3(cfg.seed, kTagSkip, i)) < cfg.skip_rate;
        skipped_prefix_[i + 1] = skipped_prefix_[i] + (skipped_[i] ? 1 : 0);
    }
}

uint64_t Chain::skipped_upto(uint64_t slot) const {
    uint64_t n = slot + 1;
    return (n / kSkipPeriod) * skipped_prefix_[kSkipPeriod] + skipped_prefix_[n % kSkipPeriod];
}

uint64_t Chain::latest_produced(uint64_t slot) const {
    while (slot > 0 && is_skipped(slot)) --slot;
    return slot;
}

int64_t Chain::block_time(uint64_t slot) const {
    int64_t delta_slots = static_cast<int64_t>(slot) - static_cast<int64_t>(cfg_.start_slot);
    int64_t ms = cfg_.anchor_ms + delta_slots * static_cast<int64_t>(cfg_.slot_ms);
    int64_t secs = ms / 1000;
    if (ms % 1000 != 0 && ms < 0) --secs;
    return secs;
}

uint64_t Chain::cluster_slot(int64_t now_ms) const {
    int64_t elapsed = now_ms - cfg_.anchor_ms;
    int64_t slot_ms = static_cast<int64_t>(cfg_.slot_ms);
    int64_t q = elapsed / slot_ms;
    if (elapsed % slot_ms != 0 && elapsed < 0) --q;  // floor, not truncation
    int64_t s = static_cast<int64_t>(cfg_.start_slot) + q;
    return s < 0 ? 0 : static_cast<uint64_t>(s);
}

void Chain::clear_faults() {
    faults_.clear();
    faults_.getblock_latency_ms = cfg_.getblock_latency_ms;
    faults_.getblock_failure_rate = cfg_.getblock_failure_rate;
}

void Chain::set_stall(bool on) {
    if (on && !faults_.stall) faults_.stall_base = cluster_slot(wall_clock_ms());
    faults_.stall = on;
}

Tips Chain::tips(int64_t now_ms) const {
    Tips t;
    t.cluster = cluster_slot(now_ms);

    // The shred watermark follows the network (minus lag), even when replay
    // is stalled or the node rolled back: shreds keep arriving regardless.
    uint64_t received = sub_floor0(t.cluster, faults_.lag);
    t.shred = received + kShredOffsets[(received + cfg_.seed) % 8];

    uint64_t base = faults_.stall ? faults_.stall_base : t.cluster;
    base = sub_floor0(base, faults_.lag + faults_.rollback);
    // A real node's tips are always banks that exist, never skipped slots.
    t.processed = latest_produced(base);
    uint64_t confirm_gap = (t.processed & 1) ? 2 : 1;
    t.confirmed = latest_produced(sub_floor0(t.processed, confirm_gap));
    t.finalized = latest_produced(sub_floor0(t.processed, cfg_.finalized_lag));
    if (t.finalized > t.confirmed) t.finalized = t.confirmed;  // tiny --finalized-lag
    t.finalized += faults_.inflate_finalized;
    return t;
}

}  // namespace solsim
