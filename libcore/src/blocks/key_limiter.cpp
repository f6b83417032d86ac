#include "blocks/key_limiter.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <type_traits>

#include "base/table_hash.h"

namespace solgate {

static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<int64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "shared counters must be lock-free to work across processes");
static_assert(std::is_standard_layout_v<KeyTable>);
static_assert(std::is_trivially_destructible_v<KeyTable>);
static_assert((KeyTable::kCapacity & (KeyTable::kCapacity - 1)) == 0);
static_assert(KeyTable::kMaxProbe <= KeyTable::kCapacity);

namespace {

constexpr double kMinRate = 1e-6;  // T = 1e12 us, about 11.6 days
constexpr double kMaxRate = 1e6;   // T = 1 us

void ClearEntry(KeyEntry& e) {
    e.hash.store(0, std::memory_order_relaxed);
    e.ready.store(0, std::memory_order_relaxed);
    e.plan_index.store(0, std::memory_order_relaxed);
    e.key_length = 0;
    std::memset(e.text, 0, sizeof(e.text));
    e.tat_us.store(0, std::memory_order_relaxed);
    e.requests.store(0, std::memory_order_relaxed);
    e.limited.store(0, std::memory_order_relaxed);
    for (auto& s : e.served) {
        s.store(0, std::memory_order_relaxed);
    }
    e.last_seen_ms.store(0, std::memory_order_relaxed);
}

uint32_t ClampedLength(std::string_view key) {
    return static_cast<uint32_t>(
        std::min<size_t>(key.size(), UINT32_MAX));
}

// Whether a published entry holds `key`: same length, same stored text.
// Past the stored bytes, the hash (already equal) has to do.
bool SameKey(const KeyEntry& e, std::string_view key) {
    if (e.key_length != ClampedLength(key)) {
        return false;
    }
    size_t n = std::min(key.size(), kKeyTextCapacity - 1);
    return std::memcmp(e.text, key.data(), n) == 0;
}

// The hash already matched.  An entry still being published (its claimer
// is between the CAS and `ready`, or died there) is taken to be the key:
// two keys sharing a 64-bit hash in that window is not worth a wait.
bool Holds(const KeyEntry& e, std::string_view key) {
    return e.ready.load(std::memory_order_acquire) == 0 || SameKey(e, key);
}

void Publish(KeyEntry& e, std::string_view key) {
    e.key_length = ClampedLength(key);
    size_t n = std::min(key.size(), kKeyTextCapacity - 1);
    std::memcpy(e.text, key.data(), n);
    std::memset(e.text + n, 0, sizeof(e.text) - n);
    e.ready.store(1, std::memory_order_release);
}

void Touch(KeyEntry& e, uint32_t plan_index, int64_t now_ms) {
    if (e.plan_index.load(std::memory_order_relaxed) != plan_index) {
        e.plan_index.store(plan_index, std::memory_order_relaxed);
    }
    int64_t seen = e.last_seen_ms.load(std::memory_order_relaxed);
    while (seen < now_ms &&
           !e.last_seen_ms.compare_exchange_weak(
               seen, now_ms, std::memory_order_relaxed)) {
    }
}

}  // namespace

void InitKeyTable(KeyTable* t) noexcept {
    for (KeyEntry& e : t->entries) {
        ClearEntry(e);
    }
    t->table_full.store(0, std::memory_order_relaxed);
    t->layout = KeyTable::kLayout;
    t->magic = KeyTable::kMagic;
}

uint64_t KeyHash(std::string_view key) noexcept {
    uint64_t h = Fnv1a(key);
    return h == 0 ? 1 : h;
}

size_t KeyProbeStart(uint64_t hash) noexcept {
    return ProbeStart<KeyTable::kCapacity>(hash);
}

KeyEntry* FindOrAddKey(KeyTable* t, std::string_view key,
                       uint32_t plan_index, int64_t now_ms) noexcept {
    return FindOrAddKeyWithHash(t, key, KeyHash(key), plan_index, now_ms);
}

KeyEntry* FindOrAddKeyWithHash(KeyTable* t, std::string_view key,
                               uint64_t hash, uint32_t plan_index,
                               int64_t now_ms) noexcept {
    if (hash == 0) {
        hash = 1;
    }
    size_t start = KeyProbeStart(hash);
    for (size_t i = 0; i < KeyTable::kMaxProbe; i++) {
        KeyEntry& e = t->entries[(start + i) & (KeyTable::kCapacity - 1)];
        uint64_t current = e.hash.load(std::memory_order_acquire);
        if (current == 0) {
            if (e.hash.compare_exchange_strong(current, hash,
                                               std::memory_order_acq_rel)) {
                Publish(e, key);
                Touch(e, plan_index, now_ms);
                return &e;
            }
            // Lost the race: `current` is the winner's hash, maybe ours.
        }
        // Entries are never freed, so a key is always before the first
        // free entry of its window.
        if (current == hash && Holds(e, key)) {
            Touch(e, plan_index, now_ms);
            return &e;
        }
    }
    t->table_full.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
}

LimitVerdict CheckRate(KeyEntry* e, double rate_per_sec,
                       int64_t now_us) noexcept {
    if (e == nullptr) {
        return {true, 0};  // fail open: see the header
    }
    e->requests.fetch_add(1, std::memory_order_relaxed);
    if (!(rate_per_sec > 0)) {
        return {true, 0};
    }
    double rate = std::min(std::max(rate_per_sec, kMinRate), kMaxRate);
    int64_t interval = std::max<int64_t>(1, std::llround(1e6 / rate));
    auto burst = static_cast<int64_t>(std::max(1.0, std::ceil(rate)));
    int64_t tolerance = interval * (burst - 1);

    int64_t tat = e->tat_us.load(std::memory_order_relaxed);
    for (;;) {
        int64_t from = std::max(tat, now_us);
        int64_t allowed_at = from - tolerance;
        if (now_us < allowed_at) {
            e->limited.fetch_add(1, std::memory_order_relaxed);
            int64_t wait_us = allowed_at - now_us;
            return {false, (wait_us + 999) / 1000};
        }
        // One location, so its modification order alone makes the count
        // exact: relaxed is enough.
        if (e->tat_us.compare_exchange_weak(tat, from + interval,
                                            std::memory_order_relaxed)) {
            return {true, 0};
        }
    }
}

void RaiseTat(KeyEntry* e, int64_t tat_us) noexcept {
    if (e == nullptr) {
        return;
    }
    int64_t tat = e->tat_us.load(std::memory_order_relaxed);
    while (tat < tat_us &&
           !e->tat_us.compare_exchange_weak(tat, tat_us,
                                            std::memory_order_relaxed)) {
    }
}

void CountServed(KeyEntry* e, int source) noexcept {
    if (e == nullptr || source < 0 || source >= kSourceCount) {
        return;
    }
    e->served[source].fetch_add(1, std::memory_order_relaxed);
}

std::vector<KeySnapshot> SnapshotKeys(const KeyTable* t) noexcept {
    std::vector<KeySnapshot> out;
    try {
        for (size_t i = 0; i < KeyTable::kCapacity; i++) {
            const KeyEntry& e = t->entries[i];
            if (e.hash.load(std::memory_order_relaxed) == 0 ||
                e.ready.load(std::memory_order_acquire) == 0) {
                continue;
            }
            KeySnapshot s;
            s.id = static_cast<KeyId>(i);
            size_t n = std::min<size_t>(e.key_length, kKeyTextCapacity - 1);
            s.key.assign(e.text, n);
            s.key_length = e.key_length;
            s.plan_index = e.plan_index.load(std::memory_order_relaxed);
            s.requests = e.requests.load(std::memory_order_relaxed);
            s.limited = e.limited.load(std::memory_order_relaxed);
            for (int i = 0; i < kSourceCount; i++) {
                s.served[i] = e.served[i].load(std::memory_order_relaxed);
            }
            s.last_seen_ms = e.last_seen_ms.load(std::memory_order_relaxed);
            out.push_back(std::move(s));
        }
    } catch (...) {
        // Out of memory: what was gathered so far.
    }
    return out;
}

}  // namespace solgate
