#include "blocks/lmdb_allowances.h"

#include "store/key_ledger.h"

namespace solgate {

LmdbAllowances::LmdbAllowances() = default;

LmdbAllowances::~LmdbAllowances() = default;

const std::string& LmdbAllowances::damage() const {
    static const std::string kNone;
    return ledger_ ? ledger_->damage() : kNone;
}

bool LmdbAllowances::Open(const std::string& state_dir, bool recover,
                          std::string* error) {
    KeyLedgerOptions options;
    options.state_dir = state_dir;
    options.recover = recover;
    ledger_ = KeyLedger::Open(options, error);
    return ledger_ != nullptr;
}

void LmdbAllowances::Close() { ledger_.reset(); }

void LmdbAllowances::NoteReceipt(std::string_view key, uint64_t slot,
                                 int64_t wall_ms) {
    if (ledger_) {
        ledger_->NoteReceipt(key, slot, wall_ms);
    }
}

bool LmdbAllowances::Received(std::string_view key, uint64_t slot,
                              int64_t wall_ms) const {
    return ledger_ && ledger_->Received(key, slot, wall_ms);
}

uint64_t LmdbAllowances::AllowanceUsed(std::string_view key,
                                       int64_t wall_ms) const {
    return ledger_ ? ledger_->AllowanceUsed(key, wall_ms) : 0;
}

uint64_t LmdbAllowances::RepeatCount(std::string_view key,
                                     int64_t wall_ms) const {
    return ledger_ ? ledger_->RepeatCount(key, wall_ms) : 0;
}

size_t LmdbAllowances::CountRetrieval(const std::vector<std::string>& keys,
                                      uint64_t slot, int64_t wall_ms) {
    if (!ledger_ || keys.empty()) {
        return 0;
    }
    size_t repeats = CountRepeats(keys, slot, wall_ms);
    std::string error;
    ledger_->CountRetrieval(keys, wall_ms, &error);
    return repeats;
}

size_t LmdbAllowances::CountRepeats(const std::vector<std::string>& keys,
                                    uint64_t slot, int64_t wall_ms) {
    size_t repeats = 0;
    std::string error;
    for (const std::string& key : keys) {
        // Retrieved again for a key that already had it: a repeat.
        if (ledger_ && ledger_->Received(key, slot, wall_ms)) {
            ledger_->AddRepeat(key, wall_ms, &error);
            repeats++;
        }
    }
    return repeats;
}

void LmdbAllowances::AddRepeats(const std::vector<std::string>& keys,
                                int64_t wall_ms) {
    std::string error;
    for (const std::string& key : keys) {
        if (ledger_) {
            ledger_->AddRepeat(key, wall_ms, &error);
        }
    }
}

void LmdbAllowances::SetAllowanceUsed(
    const std::vector<std::pair<std::string, uint64_t>>& used,
    int64_t wall_ms) {
    std::string error;
    if (ledger_) {
        ledger_->SetAllowances(used, wall_ms, &error);
    }
}

void LmdbAllowances::Flush() {
    std::string error;
    if (ledger_) {
        ledger_->Flush(&error);
    }
}

void LmdbAllowances::PruneIfDue(int64_t wall_ms) {
    if (ledger_ && wall_ms - last_prune_ms_ >= kLedgerPruneMs) {
        last_prune_ms_ = wall_ms;
        std::string error;
        ledger_->Prune(wall_ms, &error);
    }
}

}  // namespace solgate
