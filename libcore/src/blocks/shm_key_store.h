// The keys of a solgate_blocks in its shared memory zone: the KeyStore
// over the zone's key table (key_limiter.h), which every worker of the
// host maps. An id is the key's entry in the table.
#pragma once

#include "blocks/key_limiter.h"
#include "blocks/key_store.h"

namespace solgate {

class ShmKeyStore : public KeyStore {
public:
    // `table` is set up (InitKeyTable) and outlives the store.
    explicit ShmKeyStore(KeyTable& table) : table_(table) {}

    std::optional<KeyId> FindOrAdd(std::string_view key, uint32_t plan_index,
                                   int64_t now_ms) override;
    LimitVerdict CheckRate(KeyId key, double rate_per_sec,
                           int64_t now_us) override;
    void RaiseBucket(KeyId key, int64_t tat_us) override;
    void CountServed(KeyId key, int source) override;
    std::string Text(KeyId key) const override;
    std::vector<KeySnapshot> Snapshot() const override;
    uint64_t TableFull() const override;

private:
    // nullptr for an id out of the table (taken as a key not admitted).
    KeyEntry* Entry(KeyId key) const;

    KeyTable& table_;
};

}  // namespace solgate
