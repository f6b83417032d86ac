// The API keys Cube Runner has seen: an id for each, its getBlock rate
// bucket and what the admin endpoint shows of it (calls, refusals, answers
// per source). Every worker (and, in fleet mode, every host of a region)
// sees the same keys, so a key gets its plan's rate once however many
// processes serve it; the implementation decides how (shm_key_store.h:
// the zone's key table). Calls are safe from any thread and any process.
//
// A key's id never changes once given and is below kMaxKeys: the
// long-term queues name their waiters by it. A store with no room for a
// new key gives none (FindOrAdd: nullopt, counted by the store), and such
// a key is not limited: refusing paying clients because of table pressure
// would be worse than letting a few go unmetered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blocks/block_source.h"

namespace solgate {

using KeyId = uint32_t;
constexpr size_t kMaxKeys = 4096;

struct LimitVerdict {
    bool allowed;
    int64_t retry_after_ms;  // > 0 when refused (rounded up), else 0
};

// What the admin endpoint shows of one key.
struct KeySnapshot {
    KeyId id = 0;
    std::string key;  // as stored: a store may cut long keys (key_length)
    uint32_t plan_index = 0;
    uint64_t requests = 0;
    uint64_t limited = 0;
    uint64_t served[kSourceCount] = {};
    int64_t last_seen_ms = 0;
    uint32_t key_length = 0;  // the full length; > key.size() when cut
};

class KeyStore {
public:
    virtual ~KeyStore() = default;

    // The key's id, given on first sight; notes the plan it came on and
    // when (the highest now_ms seen). nullopt when there is no room.
    virtual std::optional<KeyId> FindOrAdd(std::string_view key,
                                           uint32_t plan_index,
                                           int64_t now_ms) = 0;

    // GCRA: one second's worth (ceil(rate), at least 1) may come at once,
    // then `rate_per_sec`; rate <= 0 (or NaN) is unlimited, others are
    // clamped to [1e-6, 1e6] per second. Counts the call, and the refusal.
    // Exact under concurrent callers everywhere the store is shared.
    virtual LimitVerdict CheckRate(KeyId key, double rate_per_sec,
                                   int64_t now_us) = 0;
    // Fleet mode: the key's bucket is at least as full as the region's,
    // which says the key may come again at tat_us (the same clock as
    // CheckRate's now_us): its theoretical arrival time is raised to it.
    virtual void RaiseBucket(KeyId key, int64_t tat_us) = 0;
    // Counts one answer served to the key from `source` (a BlockSource);
    // a source out of range is ignored.
    virtual void CountServed(KeyId key, int source) = 0;

    // The key an id was given to, as stored ("" for an id not given).
    virtual std::string Text(KeyId key) const = 0;
    // Every key, in the store's order. Counters are read one by one, not
    // as one atomic picture.
    virtual std::vector<KeySnapshot> Snapshot() const = 0;
    // How many lookups found no room (those keys go unlimited).
    virtual uint64_t TableFull() const = 0;
};

}  // namespace solgate
