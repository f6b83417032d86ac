// The long-term storage queue of one archive plan: the blocks no cache,
// ledger or region holds, waiting to be retrieved, and the keys waiting
// for each. One queue per plan and region, shared by every key on the
// plan and every process that serves it (in fleet mode, every host of the
// region), so a block is retrieved once and the keys take fair turns; the
// implementation decides how (shm_retrieval_queue.h: the zone's queue).
// Calls are safe from any thread and any process, never throw, and take
// now_ms, a monotonic clock the sharers agree on.
//
// The rules are the spec's, spelled out in retrieval_queue.h: keys take
// turns by start-time weighted fair queuing (weight 1 / (1 + repeat
// count)); queue_limit bounds the blocks queued or being retrieved; a
// block idle for 150 s is dropped; hand-outs are paced at the retrieval
// rate, at most max_in_flight at once; one not completed within stale_ms
// is queued again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blocks/key_store.h"

namespace solgate {

constexpr uint32_t kMaxRetryAfterS = 60;

// A key's repeat count (Repeat requests in the spec), which weighs its
// turns. The queue may ask while it holds a lock: it must be quick, must
// not block and must not call into the queue. fn == nullptr means 0 for
// every key.
struct RepeatFn {
    uint32_t (*fn)(KeyId key, void* user) = nullptr;
    void* user = nullptr;

    uint32_t operator()(KeyId key) const { return fn ? fn(key, user) : 0; }
};

enum class QueueOutcome {
    kQueued,         // queued, or was already
    kQueueFull,      // not queued: queue_limit reached
    kDropped,        // was dropped for lack of requests; queued again
    kStorageFailed,  // storage did not return it last time; queued again
    kUnavailable,    // not queued: bad key/variant or unusable queue
    kAllowanceSpent, // not queued: the key waits for key_limit blocks
};

// No bound on the blocks one key may wait for (Request's key_limit).
constexpr uint32_t kNoKeyLimit = UINT32_MAX;

// How many blocks a key may wait for: what is left of its allowance. Asked
// under the queue's lock, so a retrieval counted meanwhile is seen either
// in what is left or as a block still waited for, never in neither. fn ==
// nullptr: no bound.
struct KeyLimitFn {
    uint32_t (*fn)(KeyId key, void* user) = nullptr;
    void* user = nullptr;

    uint32_t operator()(KeyId key) const {
        return fn ? fn(key, user) : kNoKeyLimit;
    }
};

// position: 1 while being retrieved; else in-flight count + 1 + queued
// blocks retrieved before it if nothing else arrived.  0 when not queued.
struct QueueAnswer {
    QueueOutcome outcome = QueueOutcome::kUnavailable;
    uint32_t position = 0;
    uint32_t retry_after_s = 1;  // RetryAfterSeconds(position or 1, rate)
};

// clamp(ceil(position / rate), 1, 60); rate <= 0 or NaN counts as 1/s.
uint32_t RetryAfterSeconds(uint32_t position, double rate) noexcept;

// One block to fetch from storage. index and generation are the queue's
// own: pass the Retrieval back to Complete.
struct Retrieval {
    uint32_t index = 0;
    uint32_t generation = 0;
    uint64_t slot = 0;
    std::string variant;
    std::vector<KeyId> waiters;  // the keys that own turns for it
    uint32_t waiter_count = 0;   // distinct waiters, all of them
};

// For metrics and the admin endpoint.
struct QueueStats {
    uint32_t depth = 0;         // queued, not being retrieved
    uint32_t in_flight = 0;     // being retrieved
    uint32_t tombstones = 0;    // dropped or failed, still remembered
    int64_t oldest_wait_ms = 0;  // now - queued_ms of the oldest queued
    uint64_t dropped = 0;
    uint64_t retrieved = 0;
    uint64_t failed = 0;
    uint64_t queue_full = 0;
    uint64_t stale = 0;
    uint64_t recovered = 0;
};

class QueueStore {
public:
    virtual ~QueueStore() = default;

    // A request from `key` for (slot, variant): queued, or one more waiter
    // of the block already queued (always accepted). A block dropped or
    // failed before is queued again as new (kDropped / kStorageFailed).
    // retry_after_s paces the client by retrieval_rate (per second).
    // key_limit: what is left of the key's allowance; a request that would
    // make the key wait for more blocks (queued or being retrieved, each a
    // retrieval that will count for it) is refused with kAllowanceSpent,
    // in the same step as the check, so concurrent requests cannot
    // overspend it.
    virtual QueueAnswer Request(KeyId key, uint64_t slot,
                                std::string_view variant, int64_t now_ms,
                                uint32_t queue_limit, double retrieval_rate,
                                const RepeatFn& repeats,
                                const KeyLimitFn& key_limit) = 0;

    // The next block to retrieve, now marked as being retrieved; nullopt
    // when nothing is queued, max_in_flight (0 counts as 1) are out, or
    // the rate allows none yet. Retrievals handed out stale_ms or more
    // ago (<= 0: never) go back to the queue first.
    virtual std::optional<Retrieval> Next(int64_t now_ms,
                                          double retrieval_rate,
                                          uint32_t max_in_flight,
                                          int64_t stale_ms,
                                          const RepeatFn& repeats) = 0;

    // The keys a retrieval counts for now (its stored waiters); empty when
    // the queue no longer knows it (handed out again since). Asked before
    // Complete, so the count lands while the keys still wait for it.
    virtual std::vector<KeyId> Waiters(const Retrieval& retrieval) = 0;

    // Fleet mode: these waiters' allowances count the retrieval already
    // (the region's claim counted them): from now on it no longer takes a
    // share of what is left of their allowance (key_limit above), so that
    // a key is not charged twice for one block.
    virtual void MarkCounted(const Retrieval& retrieval,
                             const std::vector<KeyId>& keys) = 0;

    // Ends a retrieval: ok frees the block (the caller stored it), not ok
    // remembers it failed. Returns the waiters to count it for; nothing
    // for a retrieval the queue no longer knows (handed out again since).
    virtual std::vector<KeyId> Complete(const Retrieval& retrieval, bool ok,
                                        int64_t now_ms) = 0;

    // Fleet mode: ends a retrieval without counting it retrieved or failed
    // here (another host of the region retrieved the block, or none of its
    // waiters may have it): the block leaves the queue.
    virtual void LetGo(const Retrieval& retrieval, int64_t now_ms) = 0;

    virtual QueueStats Stats(int64_t now_ms) = 0;
};

}  // namespace solgate
