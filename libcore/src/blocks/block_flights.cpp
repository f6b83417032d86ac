#include "blocks/block_flights.h"

#include <utility>

#include "base/table_hash.h"
#include "slots/slot_types.h"

namespace solgate {
namespace {

// How many entries after the key's first one are tried.
constexpr size_t kProbe = 16;
constexpr uint32_t kPidMask = 0xffffff;   // what Lease::Pack keeps of a pid

size_t At(size_t start, size_t i) {
    return (start + i) & (FlightTable::kCapacity - 1);
}

bool Live(uint64_t lease_word, int64_t now_ms) {
    return Lease::Unpack(lease_word).HeldAt(now_ms);
}

}  // namespace

uint64_t FlightKey(uint64_t slot, std::string_view variant) noexcept {
    char bytes[8];   // the slot's, lowest first
    for (int i = 0; i < 8; i++) {
        bytes[i] = static_cast<char>((slot >> (8 * i)) & 0xff);
    }
    uint64_t h = Fnv1a(variant, Fnv1a(std::string_view(bytes, 8)));
    return h == 0 ? 1 : h;
}

FlightHold BlockFlights::Claim(uint64_t key, uint32_t pid, int64_t now_ms,
                               int64_t ttl_ms) {
    if (table_ == nullptr || (pid & kPidMask) == 0) {
        return {};
    }
    const uint64_t mine = Lease{pid & kPidMask, now_ms + ttl_ms}.Pack();
    size_t start = ProbeStart<FlightTable::kCapacity>(key);
    for (size_t i = 0; i < kProbe; i++) {
        FlightEntry& e = table_->entries[At(start, i)];
        uint64_t word = e.lease.load(std::memory_order_acquire);
        for (;;) {
            if (Live(word, now_ms)) {
                if (e.key.load(std::memory_order_acquire) == key) {
                    return {};   // another request fetches it
                }
                break;           // another block's: the next entry
            }
            // free or expired; a failed swap reloads `word`: look again
            if (e.lease.compare_exchange_weak(word, mine,
                                              std::memory_order_acq_rel)) {
                e.key.store(key, std::memory_order_release);
                if (HeldFurtherOn(start, i, key, now_ms)) {
                    Release(At(start, i), mine);
                    return {};
                }
                return FlightHold(this, At(start, i), mine);
            }
        }
    }
    return {};
}

// The key may still be held after entry i of its window (its holder's
// entry was past one that has since been freed).
bool BlockFlights::HeldFurtherOn(size_t start, size_t i, uint64_t key,
                                 int64_t now_ms) const {
    for (size_t j = i + 1; j < kProbe; j++) {
        const FlightEntry& later = table_->entries[At(start, j)];
        if (later.key.load(std::memory_order_acquire) == key &&
            Live(later.lease.load(std::memory_order_acquire), now_ms)) {
            return true;
        }
    }
    return false;
}

bool BlockFlights::Holding(uint64_t key, int64_t now_ms) const {
    if (table_ == nullptr) {
        return false;
    }
    size_t start = ProbeStart<FlightTable::kCapacity>(key);
    for (size_t i = 0; i < kProbe; i++) {
        const FlightEntry& e = table_->entries[At(start, i)];
        if (Live(e.lease.load(std::memory_order_acquire), now_ms) &&
            e.key.load(std::memory_order_acquire) == key) {
            return true;
        }
    }
    return false;
}

void BlockFlights::Release(size_t index, uint64_t lease) {
    table_->entries[index].lease.compare_exchange_strong(
        lease, 0, std::memory_order_acq_rel);
}

FlightHold& FlightHold::operator=(FlightHold&& other) noexcept {
    if (this != &other) {
        Release();
        flights_ = std::exchange(other.flights_, nullptr);
        index_ = other.index_;
        lease_ = other.lease_;
    }
    return *this;
}

void FlightHold::Release() {
    if (flights_ != nullptr) {
        std::exchange(flights_, nullptr)->Release(index_, lease_);
    }
}

}  // namespace solgate
