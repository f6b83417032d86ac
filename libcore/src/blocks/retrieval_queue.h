// Cube Runner's long-term storage (LTS) queue behind ShmRetrievalQueue
// (shm_retrieval_queue.h): one per plan per region, shared by every API
// key on the plan and every nginx worker of the host.  It lives in shared
// memory that several processes map (MAP_SHARED), so it holds only
// trivially-copyable data: fixed arrays and one process-shared, robust
// pthread mutex.  Every call takes the mutex for an O(entries) pass at
// most; a worker killed while holding it does not wedge the others
// (EOWNERDEAD: the next locker repairs the derived counts and carries
// on).  Nothing throws; every call takes now_ms, a monotonic clock shared
// by the processes (fake clocks in tests).  `repeats` (queue_store.h) is
// asked under the mutex: once per NextRetrieval, and by RequestBlock once
// per key in its position estimate.
//
// The rules, from the spec (cube-runner-getblock.txt):
// - A block is (slot, variant); variant is ASCII, at most 47 bytes.
//   Several keys asking for one block share one entry: it is retrieved
//   once.  An entry records its distinct waiting keys: the first
//   kMaxWaiters by key index, the rest only counted (a 256-bit filter on
//   key_index & 255 tells repeats, so past 16 the count may run low).
//   Repeats from one key never add to the count.
// - queue_limit (per plan, clamped to kQueueCapacity) bounds the entries
//   queued or being retrieved; a new block beyond it is not queued
//   (kQueueFull).  A block already queued is always accepted.
// - Order: keys take turns by start-time weighted fair queuing.  Each key
//   has a virtual time; the turn goes to the key with the smallest one
//   among keys with a queued block (ties: lower key_index), which then
//   advances by 1 + repeat_count (weight 1 / (1 + repeat_count); counts
//   past 2^20 count as 2^20 - 1).  The queue's virtual time is the start
//   of the last turn; a key that had no queued block starts again at
//   max(its own, the queue's), so idle keys cannot bank turns.  On its
//   turn a key gets its queued block with the most distinct waiters,
//   then the highest slot, then the lowest entry index.  Only the stored
//   waiters (first 16) own turns.
// - A queued block with no request for more than kQueueIdleDropMs is
//   dropped; a failed retrieval is marked failed.  Both stay as
//   tombstones for kTombstoneKeepMs, so the next request for the block
//   is told (kDropped / kStorageFailed) and queues it again as new.
//   Tombstones past that age, or the oldest one when the table is out of
//   room, are reused.
// - Retrievals are handed out at most one per 1 / rate seconds (token
//   bucket of burst 1), at most max_in_flight at once.  One whose worker
//   did not complete it within stale_ms goes back to the queue.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blocks/queue_store.h"

namespace solgate {

constexpr size_t kQueueCapacity = 16384;    // entries of one queue
constexpr size_t kMaxWaiters = 16;          // key indices kept per entry
constexpr size_t kQueueVariantBytes = 48;   // 47 bytes and a NUL
constexpr size_t kQueueKeys = kMaxKeys;     // waiters are key ids
constexpr int64_t kQueueIdleDropMs = 150000;   // dropped after > 150 s
constexpr int64_t kTombstoneKeepMs = 600000;   // freed after > 10 min

// What an entry of the queue is doing.
enum QueueEntryState : uint8_t {
    kEntryFree = 0,
    kEntryQueued = 1,
    kEntryRetrieving = 2,
    kEntryDropped = 3,   // tombstone: idle for too long
    kEntryFailed = 4,    // tombstone: storage did not return it
};

// The parts of an entry that scans do not need (see the hot arrays in
// RetrievalQueueShared).
struct QueueEntry {
    int64_t queued_ms;        // when it was (last) queued as new
    uint32_t generation;      // bumped when handed out or reused
    uint32_t waiter_count;    // distinct keys waiting (see above)
    uint32_t stored;          // waiters[0, stored) are valid
    uint32_t variant_length;
    // Bit j: waiters[j]'s allowance already counts this block (fleet mode:
    // the region's claim counted it), so the entry no longer holds a
    // share of what is left of it.
    uint32_t counted;
    uint32_t waiters[kMaxWaiters];
    uint64_t overflow[4];     // filter of waiters past kMaxWaiters
    char variant[kQueueVariantBytes];  // NUL-padded
};

// One queue, placed in shared memory by the caller (8-byte aligned,
// sizeof(RetrievalQueueShared), about 3.3 MB).  Every field is guarded
// by `mutex`; use the functions below rather than the fields.
struct RetrievalQueueShared {
    static constexpr uint32_t kMagic = 0x52515545;  // "RQUE"
    static constexpr uint32_t kLayout = 2;

    uint32_t magic;
    uint32_t layout;
    pthread_mutex_t mutex;   // process-shared, robust
    uint32_t used;           // entries at or past `used` are free
    // order[0, order_len): the entries queued or being retrieved, in the
    // order a turn prefers them (most waiters, highest slot, lowest
    // index), kept sorted on every change so no call has to sort.
    uint32_t order_len;
    uint64_t virtual_time;   // start of the last turn
    int64_t next_retrieval_us;  // token bucket: next hand-out allowed
    // Counters (since InitRetrievalQueue).
    uint64_t dropped;        // queued blocks dropped after 150 s
    uint64_t retrieved;      // completed ok
    uint64_t failed;         // completed not ok
    uint64_t queue_full;     // new blocks refused
    uint64_t stale;          // retrievals returned to the queue
    uint64_t recovered;      // locks taken over from a dead process
    // Per key (by key_index): virtual time, and how many queued entries
    // list it among their stored waiters (> 0: it takes turns).
    uint64_t vtime[kQueueKeys];
    uint32_t pending[kQueueKeys];
    // Hot per-entry fields, as arrays so that scans stay in few lines.
    uint8_t state[kQueueCapacity];      // QueueEntryState
    uint64_t slot[kQueueCapacity];
    int64_t last_request_ms[kQueueCapacity];
    // Queued: unused; retrieving: when handed out; tombstone: since when.
    int64_t state_ms[kQueueCapacity];
    uint32_t order[kQueueCapacity];
    QueueEntry entries[kQueueCapacity];
};

// Prepares fresh shared memory for a queue before any process uses it:
// clears everything and initialises the mutex (PTHREAD_PROCESS_SHARED,
// PTHREAD_MUTEX_ROBUST).  Returns false if the mutex could not be made;
// the queue then refuses every call.
bool InitRetrievalQueue(RetrievalQueueShared* q) noexcept;

// A request from key `key_index` (< kQueueKeys) for a block that no
// cache, ledger or region holds.  Queued or being retrieved: refreshes
// its last-request time and adds the key to its waiters.  A tombstone:
// queued again as new, answered kDropped / kStorageFailed (kQueueFull and
// the tombstone kept, when the queue is full).  Unknown: queued as new,
// or kQueueFull.  The position comes from replaying the turns on a copy
// of the queue; retry_after_s uses retrieval_rate (per second).
// key_limit (asked under the lock; none by default): a request that would
// add the key as a stored waiter (one its retrieval counts for) while it
// already is one of key_limit(key) entries queued or being retrieved is
// kAllowanceSpent, and changes nothing.
QueueAnswer RequestBlock(RetrievalQueueShared* q, uint32_t key_index,
                         uint64_t slot, std::string_view variant,
                         int64_t now_ms, uint32_t queue_limit,
                         double retrieval_rate, const RepeatFn& repeats,
                         const KeyLimitFn& key_limit = KeyLimitFn()) noexcept;

// The stored waiters of a retrieval still handed out under its
// generation; empty otherwise.
std::vector<uint32_t> RetrievalWaiters(RetrievalQueueShared* q,
                                       uint32_t index,
                                       uint32_t generation) noexcept;

// Marks the stored waiters `keys` of a retrieval still handed out under
// its generation as counted for it: they are no longer charged for it.
void MarkRetrievalCounted(RetrievalQueueShared* q, uint32_t index,
                          uint32_t generation,
                          const std::vector<uint32_t>& keys) noexcept;

// The next block to retrieve, now marked as being retrieved; nullopt when
// nothing is queued, max_in_flight (0 counts as 1) are out, or the rate
// (per second; <= 0 counts as 1, capped at 1e6; infinite: not paced, nor
// does it move the pace) allows none yet.  First
// returns retrievals handed out stale_ms or more ago (<= 0: never) to the
// queue.  Calls repeats for the key whose turn it is.
std::optional<Retrieval> NextRetrieval(RetrievalQueueShared* q,
                                       int64_t now_ms,
                                       double retrieval_rate,
                                       uint32_t max_in_flight,
                                       int64_t stale_ms,
                                       const RepeatFn& repeats) noexcept;

// Ends a retrieval.  ok: the caller has stored the block; the entry is
// freed.  Not ok: the entry becomes a kEntryFailed tombstone.  Returns the
// stored waiters (the keys to count the retrieval for) in both cases.
// A retrieval that went stale is still accepted while its entry waits in
// the queue (ok frees it; not ok leaves it queued); once handed out again
// (another generation), the old one is ignored and returns nothing.
std::vector<uint32_t> CompleteRetrieval(RetrievalQueueShared* q,
                                        uint32_t index, uint32_t generation,
                                        bool ok, int64_t now_ms) noexcept;

// Lets a retrieval go without it counting as retrieved or failed here
// (fleet mode: another host of the region retrieved it, or none of its
// waiters may have it): the entry is freed, if it is still the one handed
// out under that generation (or queued again since). False otherwise.
bool LetGoRetrieval(RetrievalQueueShared* q, uint32_t index,
                    uint32_t generation, int64_t now_ms) noexcept;

// The 150-second drop and the freeing of old tombstones; every call above
// does it first, this is for a timer when no traffic comes.
void ExpireIdle(RetrievalQueueShared* q, int64_t now_ms) noexcept;

// For metrics and the admin endpoint (after ExpireIdle).
QueueStats GetQueueStats(RetrievalQueueShared* q, int64_t now_ms) noexcept;

}  // namespace solgate
