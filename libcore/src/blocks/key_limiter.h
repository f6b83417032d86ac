// The key table behind ShmKeyStore (shm_key_store.h): per-API-key rate
// limiting that every nginx worker shares, a fixed table in shared memory,
// one entry per key, found by open addressing on the key's hash.  Like
// shared_state.h, everything is lock-free (std::atomic on process-shared
// memory, compare-and-swap), because a lock held by a worker that crashes
// would never be released.
//
// Entries are claimed and never freed: the table holds the first
// kCapacity distinct keys (a key whose probe window of kMaxProbe entries
// is taken is not admitted).  Such a key is not limited at all, it fails
// open: FindOrAddKey returns nullptr, counts it in `table_full`, and the
// nullptr is accepted by CheckRate (allowed) and CountServed (ignored).
// Refusing paying clients because of table pressure would be worse than
// letting a few go unmetered; `table_full` rising says to raise capacity.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "blocks/key_store.h"

namespace solgate {

constexpr size_t kKeyTextCapacity = 64;  // 63 bytes and a NUL

// One API key.  Claimed by CAS on `hash`; the claimer then writes the key
// text and publishes it with `ready` (release), so readers that see
// ready == 1 (acquire) see the whole text.  Other fields are atomics that
// any process updates at any time.
struct KeyEntry {
    std::atomic<uint64_t> hash;        // KeyHash of the key; 0 = free
    std::atomic<uint32_t> ready;       // 1 once key_length/text are set
    std::atomic<uint32_t> plan_index;  // the plan the key was last seen on
    // The key's full length: a key longer than kKeyTextCapacity - 1 is
    // stored cut, and told apart by hash and length.  Written before
    // `ready`, like text.
    uint32_t key_length;
    char text[kKeyTextCapacity];       // NUL-padded
    // GCRA theoretical arrival time, monotonic microseconds.
    std::atomic<int64_t> tat_us;
    std::atomic<uint64_t> requests;    // CheckRate calls
    std::atomic<uint64_t> limited;     // of those, refused
    std::atomic<uint64_t> served[kSourceCount];  // by BlockSource
    std::atomic<int64_t> last_seen_ms;  // highest now_ms seen
};

struct KeyTable {
    static constexpr uint32_t kMagic = 0x4b4c4d54;  // "KLMT"
    static constexpr uint32_t kLayout = 1;
    static constexpr size_t kCapacity = kMaxKeys;   // a power of two
    static constexpr size_t kMaxProbe = 64;

    uint32_t magic;
    uint32_t layout;
    std::atomic<uint64_t> table_full;  // lookups that found no room
    KeyEntry entries[kCapacity];
};

// Prepares fresh shared memory of sizeof(KeyTable) (8-byte aligned, e.g.
// from mmap), before any other process uses it.  Clears every entry, so
// it is also correct on memory that is not zeroed.
void InitKeyTable(KeyTable* t) noexcept;

// 64-bit FNV-1a of the key, with 0 (the free mark) mapped to 1.
uint64_t KeyHash(std::string_view key) noexcept;

// Where the probe for a hash starts (Fibonacci hashing on the high bits).
size_t KeyProbeStart(uint64_t hash) noexcept;

// Finds the key's entry, or claims one for it, and records plan_index and
// now_ms in it.  nullptr when its probe window is full (counted in
// t->table_full; the caller lets the request through).
KeyEntry* FindOrAddKey(KeyTable* t, std::string_view key,
                       uint32_t plan_index, int64_t now_ms) noexcept;

// FindOrAddKey with the hash given, so tests can force collisions.  `hash`
// must be what KeyHash would return for some key (never 0).
KeyEntry* FindOrAddKeyWithHash(KeyTable* t, std::string_view key,
                               uint64_t hash, uint32_t plan_index,
                               int64_t now_ms) noexcept;

// GCRA: emission interval T = 1e6 / rate us, burst tolerance
// tau = T * (burst - 1) with burst = max(1, ceil(rate)), i.e. one
// second's worth may come at once.  A request is allowed when
// now >= max(tat, now) - tau, and then moves tat to max(tat, now) + T.
// rate <= 0 (or NaN) means unlimited; rates are clamped to
// [1e-6, 1e6] per second.  Counts requests and limited in the entry;
// e == nullptr (table full) is allowed.  Lock-free: a CAS loop on tat_us,
// exact under concurrent callers in any number of processes.
LimitVerdict CheckRate(KeyEntry* e, double rate_per_sec,
                       int64_t now_us) noexcept;

// Raises the entry's theoretical arrival time to tat_us (never lowers
// it); e == nullptr is ignored. Lock-free, like CheckRate.
void RaiseTat(KeyEntry* e, int64_t tat_us) noexcept;

// Counts one answer served to the key from `source` (a BlockSource);
// e == nullptr or a source out of range is ignored.
void CountServed(KeyEntry* e, int source) noexcept;

// The ready entries, in table order (id: the entry's index; key: the
// stored text, cut to 63 bytes when longer).  Counters are read one by one, not as
// one atomic picture.  Returns what it gathered if memory runs out.
std::vector<KeySnapshot> SnapshotKeys(const KeyTable* t) noexcept;

}  // namespace solgate
