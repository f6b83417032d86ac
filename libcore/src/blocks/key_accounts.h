// What Cube Runner counts per API key durably: the monthly allowance of
// long-term storage retrievals, the receipts of the last 24 hours and the
// repeat counts (store/key_ledger.h), as the parts of Cube Runner use them.
//
// The ledger is opened in each process after fork and may be closed (or
// never opened, as in the master): every question is then answered with
// "nothing counted" and every count is dropped, so no caller has to ask
// first. Safe from any thread, like KeyLedger.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace solgate {

class KeyLedger;

// The ledger's old hours are pruned at most this often per process.
constexpr int64_t kLedgerPruneMs = 3600 * 1000;

class KeyAccounts {
public:
    KeyAccounts();
    ~KeyAccounts();   // closes the ledger (flushing what is pending)

    KeyAccounts(const KeyAccounts&) = delete;
    KeyAccounts& operator=(const KeyAccounts&) = delete;

    // Opens <state_dir>/keys; `recover` in the first process only (see
    // KeyLedgerOptions). False with the reason in *error.
    bool Open(const std::string& state_dir, bool recover,
              std::string* error);
    void Close();
    bool open() const { return ledger_ != nullptr; }

    // `key` received `slot` (buffered until Flush).
    void NoteReceipt(std::string_view key, uint64_t slot, int64_t wall_ms);
    // Whether `key` received `slot` in the 24 hours before wall_ms.
    bool Received(std::string_view key, uint64_t slot, int64_t wall_ms) const;
    uint64_t AllowanceUsed(std::string_view key, int64_t wall_ms) const;
    uint64_t RepeatCount(std::string_view key, int64_t wall_ms) const;

    // One retrieval of `slot` for the keys that waited for it: each key's
    // allowance counts it, and so does its repeat count when it had
    // received the block within 24 h. Returns how many were repeats.
    size_t CountRetrieval(const std::vector<std::string>& keys,
                          uint64_t slot, int64_t wall_ms);

    // Writes the pending receipts (about once a second).
    void Flush();
    // Drops the hours nothing looks at any more, at most every
    // kLedgerPruneMs.
    void PruneIfDue(int64_t wall_ms);

private:
    std::unique_ptr<KeyLedger> ledger_;
    int64_t last_prune_ms_ = 0;
};

}  // namespace solgate
