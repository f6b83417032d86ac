#include "blocks/shm_key_store.h"

#include <cstring>

namespace solgate {

static_assert(KeyTable::kCapacity == kMaxKeys, "an id is a table entry");

KeyEntry* ShmKeyStore::Entry(KeyId key) const {
    return key < KeyTable::kCapacity ? &table_.entries[key] : nullptr;
}

std::optional<KeyId> ShmKeyStore::FindOrAdd(std::string_view key,
                                            uint32_t plan_index,
                                            int64_t now_ms) {
    KeyEntry* e = FindOrAddKey(&table_, key, plan_index, now_ms);
    if (e == nullptr) {
        return std::nullopt;
    }
    return static_cast<KeyId>(e - table_.entries);
}

LimitVerdict ShmKeyStore::CheckRate(KeyId key, double rate_per_sec,
                                    int64_t now_us) {
    return solgate::CheckRate(Entry(key), rate_per_sec, now_us);
}

void ShmKeyStore::RaiseBucket(KeyId key, int64_t tat_us) {
    solgate::RaiseTat(Entry(key), tat_us);
}

void ShmKeyStore::CountServed(KeyId key, int source) {
    solgate::CountServed(Entry(key), source);
}

std::string ShmKeyStore::Text(KeyId key) const {
    const KeyEntry* e = Entry(key);
    if (e == nullptr || e->ready.load(std::memory_order_acquire) == 0) {
        return "";
    }
    return std::string(e->text, strnlen(e->text, sizeof(e->text)));
}

std::vector<KeySnapshot> ShmKeyStore::Snapshot() const {
    return SnapshotKeys(&table_);
}

uint64_t ShmKeyStore::TableFull() const {
    return table_.table_full.load(std::memory_order_relaxed);
}

}  // namespace solgate
