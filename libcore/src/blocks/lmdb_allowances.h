// The allowances, receipts and repeat counts of a solgate_blocks in its
// key ledger (store/key_ledger.h): the AllowanceStore over LMDB under
// <state_dir>/keys, which every process of the host opens after fork.
//
// Closed (or never opened, as in the master) it is the closed store of
// allowance_store.h. Safe from any thread, like KeyLedger.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "blocks/allowance_store.h"

namespace solgate {

class KeyLedger;

// The ledger's old hours are pruned at most this often per process.
constexpr int64_t kLedgerPruneMs = 3600 * 1000;

class LmdbAllowances : public AllowanceStore {
public:
    LmdbAllowances();
    ~LmdbAllowances() override;   // closes the ledger (flushing what waits)

    LmdbAllowances(const LmdbAllowances&) = delete;
    LmdbAllowances& operator=(const LmdbAllowances&) = delete;

    // Opens <state_dir>/keys; `recover` in the first process only (see
    // KeyLedgerOptions). False with the reason in *error.
    bool Open(const std::string& state_dir, bool recover,
              std::string* error);
    void Close();

    bool open() const override { return ledger_ != nullptr; }
    // KeyLedger::damage of the open ledger; "" when none or not open.
    const std::string& damage() const;
    void NoteReceipt(std::string_view key, uint64_t slot,
                     int64_t wall_ms) override;
    bool Received(std::string_view key, uint64_t slot,
                  int64_t wall_ms) const override;
    uint64_t AllowanceUsed(std::string_view key,
                           int64_t wall_ms) const override;
    uint64_t RepeatCount(std::string_view key,
                         int64_t wall_ms) const override;
    size_t CountRetrieval(const std::vector<std::string>& keys,
                          uint64_t slot, int64_t wall_ms) override;
    size_t CountRepeats(const std::vector<std::string>& keys, uint64_t slot,
                        int64_t wall_ms) override;
    void AddRepeats(const std::vector<std::string>& keys,
                    int64_t wall_ms) override;
    void SetAllowanceUsed(
        const std::vector<std::pair<std::string, uint64_t>>& used,
        int64_t wall_ms) override;
    // Receipts wait in memory until then (kill -9 loses at most a second
    // of them, which can only leave a repeat uncounted).
    void Flush() override;
    // At most every kLedgerPruneMs.
    void PruneIfDue(int64_t wall_ms) override;

private:
    std::unique_ptr<KeyLedger> ledger_;
    int64_t last_prune_ms_ = 0;
};

}  // namespace solgate
