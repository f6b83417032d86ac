#include "blocks/receipt_buffer.h"

#include <string>

namespace solgate {

void ReceiptBuffer::Add(std::string_view key, uint64_t slot,
                        int64_t wall_ms) {
    if (!keeping()) {
        return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (receipts_.size() >= kMaxBufferedReceipts) {
        dropped_.fetch_add(1);
        return;
    }
    receipts_.push_back(RegionReceipt{std::string(key), slot, wall_ms});
}

std::vector<RegionReceipt> ReceiptBuffer::Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<RegionReceipt> out;
    out.swap(receipts_);
    return out;
}

}  // namespace solgate
