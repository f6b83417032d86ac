#include "blocks/retrieval_queue.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "blocks/key_limiter.h"

namespace solgate {

static_assert(kQueueKeys == KeyTable::kCapacity,
              "the queue indexes keys by their key-table entry");
static_assert(std::is_trivially_copyable<RetrievalQueueShared>::value,
              "the queue lives in shared memory");
static_assert(kQueueCapacity <= std::numeric_limits<uint32_t>::max(),
              "entry indices are 32-bit");

namespace {

constexpr uint32_t kNoKey = std::numeric_limits<uint32_t>::max();
constexpr int64_t kNoEntry = -1;
constexpr uint64_t kMaxTurnWeight = uint64_t{1} << 20;

bool Usable(const RetrievalQueueShared* q) {
    return q != nullptr && q->magic == RetrievalQueueShared::kMagic &&
           q->layout == RetrievalQueueShared::kLayout;
}

// Whether entry a is retrieved before entry b on a turn that may take
// either: more waiters, then the higher slot, then the lower index.
bool Before(const RetrievalQueueShared* q, uint32_t a, uint32_t b) {
    uint32_t wa = q->entries[a].waiter_count;
    uint32_t wb = q->entries[b].waiter_count;
    if (wa != wb) return wa > wb;
    if (q->slot[a] != q->slot[b]) return q->slot[a] > q->slot[b];
    return a < b;
}

bool Listed(uint8_t state) {
    return state == kEntryQueued || state == kEntryRetrieving;
}

struct OrderLess {
    const RetrievalQueueShared* q;
    bool operator()(uint32_t a, uint32_t b) const { return Before(q, a, b); }
};

// Sorts the listed entries into `order` again (after a crash).
void RebuildOrder(RetrievalQueueShared* q) {
    q->order_len = 0;
    for (uint32_t i = 0; i < q->used; ++i) {
        if (Listed(q->state[i])) q->order[q->order_len++] = i;
    }
    std::sort(q->order, q->order + q->order_len, OrderLess{q});
}

// Puts entry i into `order`; its waiter count and slot are set.
void List(RetrievalQueueShared* q, uint32_t i) {
    if (q->order_len >= kQueueCapacity) return;  // cannot happen
    uint32_t* last = q->order + q->order_len;
    uint32_t* at = std::lower_bound(q->order, last, i, OrderLess{q});
    std::memmove(at + 1, at, (last - at) * sizeof(uint32_t));
    *at = i;
    ++q->order_len;
}

// Takes entry i out of `order`, before its waiter count changes.
void Unlist(RetrievalQueueShared* q, uint32_t i) {
    uint32_t* last = q->order + q->order_len;
    uint32_t* at = std::lower_bound(q->order, last, i, OrderLess{q});
    if (at == last || *at != i) at = std::find(q->order, last, i);
    if (at == last) return;
    std::memmove(at, at + 1, (last - at - 1) * sizeof(uint32_t));
    --q->order_len;
}

// Rebuilds what the entries imply (pending counts, `used`) and clamps
// fields a dying process may have left half-written.
void Repair(RetrievalQueueShared* q) {
    if (q->used > kQueueCapacity) q->used = kQueueCapacity;
    std::memset(q->pending, 0, sizeof(q->pending));
    for (uint32_t i = 0; i < q->used; ++i) {
        if (q->state[i] > kEntryFailed) q->state[i] = kEntryFree;
        if (q->state[i] == kEntryFree) continue;
        QueueEntry& e = q->entries[i];
        if (e.variant_length >= kQueueVariantBytes) {
            e.variant_length = kQueueVariantBytes - 1;
        }
        e.variant[kQueueVariantBytes - 1] = '\0';
        uint32_t kept = 0;
        uint32_t stored = std::min<uint32_t>(e.stored, kMaxWaiters);
        for (uint32_t j = 0; j < stored; ++j) {
            if (e.waiters[j] < kQueueKeys) e.waiters[kept++] = e.waiters[j];
        }
        e.stored = kept;
        if (e.waiter_count < kept) e.waiter_count = kept;
        if (q->state[i] == kEntryQueued) {
            for (uint32_t j = 0; j < kept; ++j) ++q->pending[e.waiters[j]];
        }
    }
    while (q->used > 0 && q->state[q->used - 1] == kEntryFree) --q->used;
    RebuildOrder(q);
}

// Holds the queue's mutex for a scope; takes over from a dead holder.
class QueueLock {
public:
    explicit QueueLock(RetrievalQueueShared* q) : q_(q) {
        if (!Usable(q)) return;
        int rc = pthread_mutex_lock(&q->mutex);
        if (rc == EOWNERDEAD) {
            if (pthread_mutex_consistent(&q->mutex) != 0) {
                pthread_mutex_unlock(&q->mutex);
                return;
            }
            Repair(q);
            ++q->recovered;
            rc = 0;
        }
        locked_ = rc == 0;
    }
    ~QueueLock() {
        if (locked_) pthread_mutex_unlock(&q_->mutex);
    }
    QueueLock(const QueueLock&) = delete;
    QueueLock& operator=(const QueueLock&) = delete;

    bool ok() const { return locked_; }

private:
    RetrievalQueueShared* q_;
    bool locked_ = false;
};

// How far a key's virtual time moves per turn: 1 + repeat_count, the
// count capped at kMaxTurnWeight - 1.
uint64_t TurnWeight(uint32_t repeat_count) {
    return 1 + std::min<uint64_t>(repeat_count, kMaxTurnWeight - 1);
}

// Where `key` is among e's stored waiters; e.stored when it is not.
uint32_t WaiterIndex(const QueueEntry& e, uint32_t key) {
    for (uint32_t j = 0; j < e.stored; ++j) {
        if (e.waiters[j] == key) return j;
    }
    return e.stored;
}

bool HasWaiter(const QueueEntry& e, uint32_t key) {
    return WaiterIndex(e, key) < e.stored;
}

// Entry `index` is still the retrieval handed out under `generation` (or
// queued again since).
bool StillHandedOut(const RetrievalQueueShared* q, uint32_t index,
                    uint32_t generation) {
    return index < q->used && q->entries[index].generation == generation &&
           (q->state[index] == kEntryRetrieving ||
            q->state[index] == kEntryQueued);
}

// The key has one more queued entry; a key coming back from idle starts
// at the queue's virtual time.
void Activate(RetrievalQueueShared* q, uint32_t key) {
    if (q->pending[key] == 0) {
        q->vtime[key] = std::max(q->vtime[key], q->virtual_time);
    }
    ++q->pending[key];
}

// Entry i stops being queued (handed out, dropped, freed).
void Deactivate(RetrievalQueueShared* q, uint32_t i) {
    const QueueEntry& e = q->entries[i];
    for (uint32_t j = 0; j < e.stored; ++j) {
        uint32_t& p = q->pending[e.waiters[j]];
        if (p > 0) --p;
    }
}

// Entry i (queued again after being handed out) is queued.
void Reactivate(RetrievalQueueShared* q, uint32_t i) {
    const QueueEntry& e = q->entries[i];
    for (uint32_t j = 0; j < e.stored; ++j) Activate(q, e.waiters[j]);
}

// Adds a distinct waiter to entry i (no-op for a repeat).
void AddWaiter(RetrievalQueueShared* q, uint32_t i, uint32_t key) {
    QueueEntry& e = q->entries[i];
    if (HasWaiter(e, key)) return;
    if (e.stored < kMaxWaiters) {
        e.waiters[e.stored++] = key;
        if (q->state[i] == kEntryQueued) Activate(q, key);
    } else {
        uint32_t bit = key & 255;
        uint64_t mask = uint64_t{1} << (bit % 64);
        if (e.overflow[bit / 64] & mask) return;
        e.overflow[bit / 64] |= mask;
    }
    bool listed = Listed(q->state[i]);
    if (listed) Unlist(q, i);
    ++e.waiter_count;
    if (listed) List(q, i);
}

// Entry i (listed) leaves the queue: freed or made a tombstone.
void Retire(RetrievalQueueShared* q, uint32_t i, uint8_t state) {
    if (q->state[i] == kEntryQueued) Deactivate(q, i);
    if (Listed(q->state[i])) Unlist(q, i);
    q->state[i] = state;
}

// Makes entry i a new queued block with one waiter.
void StartEntry(RetrievalQueueShared* q, uint32_t i, uint32_t key,
                uint64_t slot, std::string_view variant, int64_t now_ms) {
    Retire(q, i, kEntryFree);
    QueueEntry& e = q->entries[i];
    uint32_t generation = e.generation + 1;
    std::memset(&e, 0, sizeof(e));
    e.generation = generation;
    e.queued_ms = now_ms;
    e.variant_length = static_cast<uint32_t>(variant.size());
    std::memcpy(e.variant, variant.data(), variant.size());
    q->state[i] = kEntryQueued;
    q->slot[i] = slot;
    q->last_request_ms[i] = now_ms;
    q->state_ms[i] = now_ms;
    if (i >= q->used) q->used = i + 1;
    List(q, i);
    AddWaiter(q, i, key);
}

void TrimUsed(RetrievalQueueShared* q) {
    while (q->used > 0 && q->state[q->used - 1] == kEntryFree) --q->used;
}

// The 150-second drop and the freeing of old tombstones.
void Sweep(RetrievalQueueShared* q, int64_t now_ms) {
    for (uint32_t i = 0; i < q->used; ++i) {
        switch (q->state[i]) {
        case kEntryQueued:
            if (now_ms - q->last_request_ms[i] > kQueueIdleDropMs) {
                Retire(q, i, kEntryDropped);
                q->state_ms[i] = q->last_request_ms[i] + kQueueIdleDropMs;
                ++q->dropped;
            } else {
                break;
            }
            [[fallthrough]];  // a long-idle block may be forgotten at once
        case kEntryDropped:
        case kEntryFailed:
            if (now_ms - q->state_ms[i] > kTombstoneKeepMs) {
                q->state[i] = kEntryFree;
            }
            break;
        default:
            break;
        }
    }
    TrimUsed(q);
}

// Retrievals out for stale_ms or more go back to the queue.
void RequeueStale(RetrievalQueueShared* q, int64_t now_ms,
                  int64_t stale_ms) {
    if (stale_ms <= 0) return;
    for (uint32_t i = 0; i < q->used; ++i) {
        if (q->state[i] == kEntryRetrieving &&
            now_ms - q->state_ms[i] >= stale_ms) {
            q->state[i] = kEntryQueued;
            q->state_ms[i] = now_ms;
            Reactivate(q, i);
            ++q->stale;
        }
    }
}

struct Counts {
    uint32_t queued = 0;
    uint32_t in_flight = 0;
};

Counts CountEntries(const RetrievalQueueShared* q) {
    Counts c;
    for (uint32_t i = 0; i < q->used; ++i) {
        if (q->state[i] == kEntryQueued) ++c.queued;
        if (q->state[i] == kEntryRetrieving) ++c.in_flight;
    }
    return c;
}

int64_t FindEntry(const RetrievalQueueShared* q, uint64_t slot,
                  std::string_view variant) {
    for (uint32_t i = 0; i < q->used; ++i) {
        if (q->state[i] == kEntryFree || q->slot[i] != slot) continue;
        const QueueEntry& e = q->entries[i];
        if (e.variant_length == variant.size() &&
            std::memcmp(e.variant, variant.data(), variant.size()) == 0) {
            return i;
        }
    }
    return kNoEntry;
}

// A free entry, else one past `used`, else the oldest tombstone.
int64_t FindRoom(const RetrievalQueueShared* q) {
    for (uint32_t i = 0; i < q->used; ++i) {
        if (q->state[i] == kEntryFree) return i;
    }
    if (q->used < kQueueCapacity) return q->used;
    int64_t oldest = kNoEntry;
    for (uint32_t i = 0; i < q->used; ++i) {
        uint8_t s = q->state[i];
        if (s != kEntryDropped && s != kEntryFailed) continue;
        if (oldest == kNoEntry || q->state_ms[i] < q->state_ms[oldest]) {
            oldest = i;
        }
    }
    return oldest;
}

// The key whose turn it is: smallest virtual time among keys with a
// queued entry, ties to the lower index.
uint32_t NextKey(const RetrievalQueueShared* q) {
    uint32_t best = kNoKey;
    for (uint32_t k = 0; k < kQueueKeys; ++k) {
        if (q->pending[k] == 0) continue;
        if (best == kNoKey || q->vtime[k] < q->vtime[best]) best = k;
    }
    return best;
}

// The queued entry to retrieve on `key`'s turn (any key: kNoKey).
int64_t BestEntry(const RetrievalQueueShared* q, uint32_t key) {
    for (uint32_t n = 0; n < q->order_len; ++n) {
        uint32_t i = q->order[n];
        if (q->state[i] != kEntryQueued) continue;
        if (key == kNoKey || HasWaiter(q->entries[i], key)) return i;
    }
    return kNoEntry;
}

// --- Position estimate: the turns replayed on a copy. ---

// A turn in the replay, packed for quick comparison: virtual time
// relative to the smallest one, then key_index in the low 12 bits.
constexpr int kTurnKeyBits = 12;
static_assert(kQueueKeys <= (size_t{1} << kTurnKeyBits), "keys fit");
constexpr uint64_t kTurnKeyMask = (uint64_t{1} << kTurnKeyBits) - 1;
// Far beyond any real spread (turns x kMaxTurnWeight stays below 2^35).
constexpr uint64_t kMaxRelativeVtime = uint64_t{1} << 50;
constexpr uint32_t kPrefetchAhead = 16;

// Restores the 4-ary min-heap h[0, n) after h[i] grew.  Four children a
// node keep the heap shallow: fewer dependent steps per turn.
void SiftDown(uint64_t* h, size_t n, size_t i) {
    uint64_t v = h[i];
    for (;;) {
        size_t first = 4 * i + 1;
        if (first >= n) break;
        size_t c = first;
        if (first + 4 <= n) {  // written to compile to conditional moves
            size_t l = h[first + 1] < h[first] ? first + 1 : first;
            size_t r = h[first + 3] < h[first + 2] ? first + 3 : first + 2;
            c = h[r] < h[l] ? r : l;
        } else {
            for (size_t j = first + 1; j < n; ++j) {
                if (h[j] < h[c]) c = j;
            }
        }
        if (h[c] >= v) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

// Reused between calls so that a request does not allocate.
struct Scratch {
    std::vector<uint32_t> start;   // per key: its list in `lists`
    std::vector<uint32_t> next;    // per key: count, then cursor
    std::vector<uint64_t> weight;  // per key: turn weight; 0 = not asked
    std::vector<uint64_t> pairs;   // (key << 32 | entry), best first
    std::vector<uint32_t> lists;   // queued entries per key, best first
    std::vector<uint8_t> taken;    // per entry
    std::vector<uint64_t> turns;   // min-heap of packed turns
};

Scratch& GetScratch() {
    thread_local Scratch scratch;
    return scratch;
}

// How many queued entries the turns retrieve up to and including
// `target` (queued), if nothing else arrived.  Walking `order` fills
// each key's list already sorted.  May throw bad_alloc.
uint32_t TurnsUntil(const RetrievalQueueShared* q, uint32_t target,
                    const RepeatFn& repeats) {
    Scratch& s = GetScratch();
    s.start.assign(kQueueKeys + 1, 0);
    s.next.assign(kQueueKeys, 0);
    s.weight.assign(kQueueKeys, 0);
    s.taken.assign(q->used, 0);
    s.pairs.clear();
    s.turns.clear();

    for (uint32_t n = 0; n < q->order_len; ++n) {
        // `order` jumps around the entries: fetch a few turns ahead.
        if (n + kPrefetchAhead < q->order_len) {
            const QueueEntry* ahead = &q->entries[q->order[n + kPrefetchAhead]];
            __builtin_prefetch(&ahead->stored);
            __builtin_prefetch(&ahead->waiters[kMaxWaiters - 1]);
        }
        uint32_t i = q->order[n];
        if (q->state[i] != kEntryQueued) continue;
        const QueueEntry& e = q->entries[i];
        for (uint32_t j = 0; j < e.stored; ++j) {
            uint32_t k = e.waiters[j];
            ++s.next[k];
            s.pairs.push_back(uint64_t{k} << 32 | i);
        }
    }
    uint64_t base = std::numeric_limits<uint64_t>::max();
    for (uint32_t k = 0; k < kQueueKeys; ++k) {
        if (s.next[k] > 0) base = std::min(base, q->vtime[k]);
    }
    uint32_t total = 0;
    for (uint32_t k = 0; k < kQueueKeys; ++k) {
        s.start[k] = total;
        total += s.next[k];
        if (s.next[k] > 0) {
            uint64_t rel = std::min(q->vtime[k] - base, kMaxRelativeVtime);
            s.turns.push_back(rel << kTurnKeyBits | k);
        }
        s.next[k] = s.start[k];
    }
    s.start[kQueueKeys] = total;
    s.lists.resize(total);
    for (uint64_t pair : s.pairs) {
        s.lists[s.next[pair >> 32]++] = static_cast<uint32_t>(pair);
    }
    for (uint32_t k = 0; k < kQueueKeys; ++k) s.next[k] = s.start[k];
    uint64_t* heap = s.turns.data();
    size_t size = s.turns.size();
    for (size_t i = size / 4 + 1; i-- > 0;) SiftDown(heap, size, i);

    uint32_t done = 0;
    while (size > 0) {
        uint32_t k = static_cast<uint32_t>(heap[0] & kTurnKeyMask);
        uint32_t& at = s.next[k];
        uint32_t end = s.start[k + 1];
        while (at < end && s.taken[s.lists[at]]) ++at;
        if (at == end) {  // others took its blocks: no more turns
            heap[0] = heap[--size];
            SiftDown(heap, size, 0);
            continue;
        }
        uint32_t index = s.lists[at++];
        s.taken[index] = 1;
        ++done;
        if (index == target) return done;
        if (s.weight[k] == 0) s.weight[k] = TurnWeight(repeats(k));
        heap[0] += s.weight[k] << kTurnKeyBits;
        SiftDown(heap, size, 0);
    }
    return done + 1;  // not reached (cannot happen): after the rest
}

uint32_t Position(const RetrievalQueueShared* q, uint32_t index,
                  const RepeatFn& repeats) {
    if (q->state[index] == kEntryRetrieving) return 1;
    Counts c = CountEntries(q);
    uint32_t turns;
    try {
        turns = TurnsUntil(q, index, repeats);
    } catch (...) {
        turns = c.queued;  // out of memory: the worst case
    }
    return c.in_flight + turns;
}

int64_t ToMicros(int64_t ms) {
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 1000;
    return std::clamp(ms, -kMax, kMax) * 1000;
}

std::vector<uint32_t> StoredWaiters(const QueueEntry& e) {
    return std::vector<uint32_t>(e.waiters, e.waiters + e.stored);
}

}  // namespace

bool InitRetrievalQueue(RetrievalQueueShared* q) noexcept {
    std::memset(static_cast<void*>(q), 0, sizeof(*q));
    pthread_mutexattr_t attr;
    if (pthread_mutexattr_init(&attr) != 0) return false;
    bool ok =
        pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) == 0 &&
        pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST) == 0 &&
        pthread_mutex_init(&q->mutex, &attr) == 0;
    pthread_mutexattr_destroy(&attr);
    if (!ok) return false;
    q->next_retrieval_us = std::numeric_limits<int64_t>::min();
    q->magic = RetrievalQueueShared::kMagic;
    q->layout = RetrievalQueueShared::kLayout;
    return true;
}

uint32_t RetryAfterSeconds(uint32_t position, double rate) noexcept {
    if (!(rate > 0)) rate = 1;
    double seconds = std::ceil(static_cast<double>(position) / rate);
    if (!(seconds >= 1)) return 1;
    if (seconds >= kMaxRetryAfterS) return kMaxRetryAfterS;
    return static_cast<uint32_t>(seconds);
}

// Entries queued or being retrieved that list `key` among their stored
// waiters and have not counted for it yet: the retrievals that will.
static uint32_t ChargedWaits(const RetrievalQueueShared* q, uint32_t key) {
    uint32_t n = 0;
    for (uint32_t k = 0; k < q->order_len; k++) {
        const QueueEntry& e = q->entries[q->order[k]];
        uint32_t j = WaiterIndex(e, key);
        n += j < e.stored && (e.counted >> j & 1u) == 0;
    }
    return n;
}

QueueAnswer RequestBlock(RetrievalQueueShared* q, uint32_t key_index,
                         uint64_t slot, std::string_view variant,
                         int64_t now_ms, uint32_t queue_limit,
                         double retrieval_rate, const RepeatFn& repeats,
                         const KeyLimitFn& key_limit) noexcept {
    QueueAnswer answer;
    answer.retry_after_s = RetryAfterSeconds(1, retrieval_rate);
    if (key_index >= kQueueKeys || variant.size() >= kQueueVariantBytes) {
        return answer;
    }
    QueueLock lock(q);
    if (!lock.ok()) return answer;
    Sweep(q, now_ms);
    uint32_t limit = std::min<uint32_t>(queue_limit, kQueueCapacity);

    int64_t found = FindEntry(q, slot, variant);
    bool active = found != kNoEntry && (q->state[found] == kEntryQueued ||
                                        q->state[found] == kEntryRetrieving);
    // Would this request make the key one more stored waiter?
    bool charged = !active || (!HasWaiter(q->entries[found], key_index) &&
                               q->entries[found].stored < kMaxWaiters);
    if (charged && key_limit.fn != nullptr &&
        ChargedWaits(q, key_index) >= key_limit(key_index)) {
        answer.outcome = QueueOutcome::kAllowanceSpent;
        return answer;
    }
    uint32_t index;
    if (active) {
        index = static_cast<uint32_t>(found);
        q->last_request_ms[index] = now_ms;
        AddWaiter(q, index, key_index);
        answer.outcome = QueueOutcome::kQueued;
    } else {
        Counts c = CountEntries(q);
        int64_t room = found;
        if (room == kNoEntry && c.queued + c.in_flight < limit) {
            room = FindRoom(q);
        }
        if (c.queued + c.in_flight >= limit || room == kNoEntry) {
            ++q->queue_full;
            answer.outcome = QueueOutcome::kQueueFull;
            return answer;
        }
        index = static_cast<uint32_t>(room);
        if (found == kNoEntry) {
            answer.outcome = QueueOutcome::kQueued;
        } else if (q->state[index] == kEntryFailed) {
            answer.outcome = QueueOutcome::kStorageFailed;
        } else {
            answer.outcome = QueueOutcome::kDropped;
        }
        StartEntry(q, index, key_index, slot, variant, now_ms);
    }
    answer.position = Position(q, index, repeats);
    answer.retry_after_s = RetryAfterSeconds(answer.position,
                                             retrieval_rate);
    return answer;
}

std::optional<Retrieval> NextRetrieval(RetrievalQueueShared* q,
                                       int64_t now_ms,
                                       double retrieval_rate,
                                       uint32_t max_in_flight,
                                       int64_t stale_ms,
                                       const RepeatFn& repeats) noexcept {
    try {
        QueueLock lock(q);
        if (!lock.ok()) return std::nullopt;
        RequeueStale(q, now_ms, stale_ms);
        Sweep(q, now_ms);
        Counts c = CountEntries(q);
        if (c.queued == 0 || c.in_flight >= std::max(max_in_flight, 1u)) {
            return std::nullopt;
        }
        int64_t now_us = ToMicros(now_ms);
        bool paced = !std::isinf(retrieval_rate);
        if (paced && now_us < q->next_retrieval_us) return std::nullopt;

        uint32_t key = NextKey(q);
        int64_t best = key == kNoKey ? kNoEntry : BestEntry(q, key);
        if (best == kNoEntry) {
            // The pending counts disagree with the entries: rebuild them.
            Repair(q);
            key = NextKey(q);
            best = BestEntry(q, key);
        }
        if (best == kNoEntry) return std::nullopt;
        uint32_t index = static_cast<uint32_t>(best);
        const QueueEntry& e = q->entries[index];

        Retrieval r;  // built before any change, in case it throws
        r.index = index;
        r.generation = e.generation + 1;
        r.slot = q->slot[index];
        r.variant.assign(e.variant, e.variant_length);
        r.waiters = StoredWaiters(e);
        r.waiter_count = e.waiter_count;

        if (key != kNoKey) {
            q->virtual_time = q->vtime[key];
            q->vtime[key] += TurnWeight(repeats(key));
        }
        Deactivate(q, index);
        q->state[index] = kEntryRetrieving;
        q->state_ms[index] = now_ms;
        q->entries[index].generation = r.generation;

        if (paced) {
            double rate = retrieval_rate > 0 ? retrieval_rate : 1;
            rate = std::clamp(rate, 1e-6, 1e6);
            int64_t interval_us =
                std::max<int64_t>(1, std::llround(1e6 / rate));
            q->next_retrieval_us =
                std::max(q->next_retrieval_us, now_us) + interval_us;
        }
        return r;
    } catch (...) {
        return std::nullopt;
    }
}

std::vector<uint32_t> RetrievalWaiters(RetrievalQueueShared* q,
                                       uint32_t index,
                                       uint32_t generation) noexcept {
    try {
        QueueLock lock(q);
        if (!lock.ok() || !StillHandedOut(q, index, generation)) return {};
        return StoredWaiters(q->entries[index]);
    } catch (...) {
        return {};
    }
}

void MarkRetrievalCounted(RetrievalQueueShared* q, uint32_t index,
                          uint32_t generation,
                          const std::vector<uint32_t>& keys) noexcept {
    static_assert(kMaxWaiters <= 32, "a bit per stored waiter");
    QueueLock lock(q);
    if (!lock.ok() || !StillHandedOut(q, index, generation)) return;
    QueueEntry& e = q->entries[index];
    for (uint32_t j = 0; j < e.stored; ++j) {
        if (std::find(keys.begin(), keys.end(), e.waiters[j]) != keys.end()) {
            e.counted |= 1u << j;
        }
    }
}

std::vector<uint32_t> CompleteRetrieval(RetrievalQueueShared* q,
                                        uint32_t index, uint32_t generation,
                                        bool ok, int64_t now_ms) noexcept {
    try {
        QueueLock lock(q);
        if (!lock.ok()) return {};
        Sweep(q, now_ms);
        if (index >= q->used) return {};
        QueueEntry& e = q->entries[index];
        uint8_t state = q->state[index];
        if (e.generation != generation) return {};
        if (state == kEntryRetrieving) {
            std::vector<uint32_t> waiters = StoredWaiters(e);
            if (ok) {
                Retire(q, index, kEntryFree);
                ++q->retrieved;
            } else {
                Retire(q, index, kEntryFailed);
                q->state_ms[index] = now_ms;
                ++q->failed;
            }
            TrimUsed(q);
            return waiters;
        }
        if (state == kEntryQueued && ok) {  // went stale, not handed out
            std::vector<uint32_t> waiters = StoredWaiters(e);
            Retire(q, index, kEntryFree);
            ++q->retrieved;
            TrimUsed(q);
            return waiters;
        }
        return {};
    } catch (...) {
        return {};
    }
}

bool LetGoRetrieval(RetrievalQueueShared* q, uint32_t index,
                    uint32_t generation, int64_t now_ms) noexcept {
    try {
        QueueLock lock(q);
        if (!lock.ok()) return false;
        Sweep(q, now_ms);
        if (!StillHandedOut(q, index, generation)) return false;
        Retire(q, index, kEntryFree);
        TrimUsed(q);
        return true;
    } catch (...) {
        return false;
    }
}

void ExpireIdle(RetrievalQueueShared* q, int64_t now_ms) noexcept {
    QueueLock lock(q);
    if (lock.ok()) Sweep(q, now_ms);
}

QueueStats GetQueueStats(RetrievalQueueShared* q, int64_t now_ms) noexcept {
    QueueStats stats;
    QueueLock lock(q);
    if (!lock.ok()) return stats;
    Sweep(q, now_ms);
    int64_t oldest = now_ms;
    for (uint32_t i = 0; i < q->used; ++i) {
        switch (q->state[i]) {
        case kEntryQueued:
            ++stats.depth;
            oldest = std::min(oldest, q->entries[i].queued_ms);
            break;
        case kEntryRetrieving:
            ++stats.in_flight;
            break;
        case kEntryDropped:
        case kEntryFailed:
            ++stats.tombstones;
            break;
        default:
            break;
        }
    }
    stats.oldest_wait_ms = now_ms - oldest;
    stats.dropped = q->dropped;
    stats.retrieved = q->retrieved;
    stats.failed = q->failed;
    stats.queue_full = q->queue_full;
    stats.stale = q->stale;
    stats.recovered = q->recovered;
    return stats;
}

}  // namespace solgate
