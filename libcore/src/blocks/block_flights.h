// Which blocks are being fetched right now, by which process of the host:
// the cache lock of Cube Runner (as nginx's proxy_cache_lock). The first
// request that misses the cache for a block it will capture claims the
// block's flight and goes to the ledger or another region; requests for
// the same block that arrive meanwhile, in any worker, wait until the
// flight is released and are then answered from the cache. A flight is
// released once its answer is in the cache index (or was not cacheable),
// so a request right after the first answer finds it there.
//
// The table lives in the blocks zone (BlocksShared::flights), lock-free
// like the rest of it: each entry is a key word and a lease word (pid and
// expiry, slots/lease_store.h's packing); the lease word says whether the
// entry is held, the key word which block it is for (a free entry's key
// is left as it was). A flight expires after its ttl, so a crashed holder
// delays others by at most that long. Two requests may both become
// holders of one block in a narrow race (a claim is two stores); then
// both fetch it, as they would without the lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace solgate {

struct FlightEntry {
    std::atomic<uint64_t> key;     // FlightKey; 0: never used or released
    std::atomic<uint64_t> lease;   // Lease::Pack(); 0: free
};

struct FlightTable {
    static constexpr size_t kCapacity = 1024;   // a power of two
    FlightEntry entries[kCapacity];
};

// The flight key of a block (never 0).
uint64_t FlightKey(uint64_t slot, std::string_view variant) noexcept;

class FlightHold;

// The host's flights. Every call is safe from any thread and process.
class BlockFlights {
public:
    // nullptr: no zone yet (nothing is ever held).
    explicit BlockFlights(FlightTable* table = nullptr) : table_(table) {}

    // Claims the key's flight for `pid` until now_ms + ttl_ms: a hold
    // that releases it when it goes; an empty hold when another holds it
    // (Holding is then true) or no entry near the key's is free.
    FlightHold Claim(uint64_t key, uint32_t pid, int64_t now_ms,
                     int64_t ttl_ms);
    // Whether a flight of the key is held (and not expired) at now_ms.
    bool Holding(uint64_t key, int64_t now_ms) const;

private:
    friend class FlightHold;
    // Frees the entry if it still holds `lease`, the word its claim wrote:
    // a flight that expired and was claimed again (by anyone, for any
    // block) has another word and is left alone.
    void Release(size_t index, uint64_t lease);
    bool HeldFurtherOn(size_t start, size_t i, uint64_t key,
                       int64_t now_ms) const;

    FlightTable* table_;
};

// One claimed flight, released when the hold is destroyed or Release is
// called (whichever comes first). Movable, so the hold can pass from the
// request's call to the capture that stores its answer.
class FlightHold {
public:
    FlightHold() = default;
    FlightHold(FlightHold&& other) noexcept { *this = std::move(other); }
    FlightHold& operator=(FlightHold&& other) noexcept;
    ~FlightHold() { Release(); }

    FlightHold(const FlightHold&) = delete;
    FlightHold& operator=(const FlightHold&) = delete;

    bool held() const { return flights_ != nullptr; }
    void Release();

private:
    friend class BlockFlights;
    FlightHold(BlockFlights* flights, size_t index, uint64_t lease)
        : flights_(flights), index_(index), lease_(lease) {}

    BlockFlights* flights_ = nullptr;
    size_t index_ = 0;
    uint64_t lease_ = 0;   // the lease word the claim wrote
};

}  // namespace solgate
