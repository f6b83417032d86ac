#include "accounts.h"

#include <algorithm>

#include "det.h"

namespace solsim {

SimAccount seeded_account(uint64_t seed, std::string_view pubkey) {
    const uint64_t h = hash3(seed, kTagAccount, hash_bytes(pubkey));
    SimAccount a;
    a.exists = (h & 15) != 0;
    a.lamports = a.exists ? 890880 + (h >> 8) % 250000000000ULL : 0;
    return a;
}

std::optional<AccountChange> AccountChanges::record(const std::string& pubkey, uint64_t slot, uint64_t lamports) {
    auto it = by_key_.find(pubkey);
    if (it == by_key_.end()) {
        if (by_key_.size() >= kMaxAccounts) return std::nullopt;
        it = by_key_.emplace(pubkey, std::vector<AccountChange>()).first;
    }
    std::vector<AccountChange>& changes = it->second;
    while (!changes.empty() && changes.back().slot > slot) changes.pop_back();
    if (changes.size() >= kMaxChangesPerAccount) changes.erase(changes.begin());
    changes.push_back(AccountChange{++last_id_, slot, lamports});
    return changes.back();
}

const AccountChange* AccountChanges::visible_at(std::string_view pubkey, uint64_t slot) const {
    const auto it = by_key_.find(std::string(pubkey));
    if (it == by_key_.end()) return nullptr;
    const std::vector<AccountChange>& changes = it->second;
    // The first change after slot; the one before it is in force.
    const auto after = std::upper_bound(changes.begin(), changes.end(), slot,
                                        [](uint64_t s, const AccountChange& c) { return s < c.slot; });
    return after == changes.begin() ? nullptr : &*(after - 1);
}

SimAccount AccountChanges::account_at(std::string_view pubkey, uint64_t slot) const {
    // Most nodes never record a change: their reads skip the key's copy.
    const AccountChange* change = by_key_.empty() ? nullptr : visible_at(pubkey, slot);
    if (change == nullptr) return seeded_account(seed_, pubkey);
    return SimAccount{change->lamports > 0, change->lamports};
}

}  // namespace solsim
