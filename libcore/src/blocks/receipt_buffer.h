// Fleet mode: the receipts a process noted (blocks served to keys), kept
// for the region's store until the poller thread takes them
// (RegionRetrievals::NoteReceipts). Off until Keep(); bounded: past
// kMaxBufferedReceipts between two takes the rest are dropped and counted,
// which can only leave a repeat uncounted. Add is called on nginx's event
// loop and Take on the poller thread: safe from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

#include "blocks/region_retrievals.h"

namespace solgate {

constexpr size_t kMaxBufferedReceipts = 100000;

class ReceiptBuffer {
public:
    void Keep() { keeping_.store(true, std::memory_order_relaxed); }
    bool keeping() const { return keeping_.load(std::memory_order_relaxed); }

    void Add(std::string_view key, uint64_t slot, int64_t wall_ms);
    std::vector<RegionReceipt> Take();
    uint64_t dropped() const { return dropped_.load(); }

private:
    std::atomic<bool> keeping_{false};
    std::atomic<uint64_t> dropped_{0};
    std::mutex mutex_;
    std::vector<RegionReceipt> receipts_;
};

}  // namespace solgate
