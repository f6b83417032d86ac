// The simulated accounts: each key's deterministic account, plus the lamport
// changes recorded through /_sim/account, each visible from its slot on.
// Pure state: no clock, no I/O. Callers pass every slot, so a read answers
// the value as of its own context slot (processed, confirmed or finalized).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace solsim {

struct SimAccount {
    bool exists = false;
    uint64_t lamports = 0;
};

struct AccountChange {
    uint64_t id = 0;    // recording order, from 1: a subscription remembers the last id it was told of
    uint64_t slot = 0;  // visible to a read whose context slot is >= slot
    uint64_t lamports = 0;
};

// The account every node with the same seed invents for a key before any
// change: about one key in sixteen does not exist.
SimAccount seeded_account(uint64_t seed, std::string_view pubkey);

class AccountChanges {
  public:
    // Bounds on what arbitrary control requests can make the node hold.
    static constexpr size_t kMaxAccounts = 65536;
    static constexpr size_t kMaxChangesPerAccount = 1024;

    explicit AccountChanges(uint64_t seed) : seed_(seed) {}

    // Records that pubkey holds lamports from slot on. Changes recorded at
    // later slots are dropped first: the node's tips went back (a rollback
    // or lag fault), and a change made there replaces what the abandoned
    // fork held. Past kMaxChangesPerAccount the oldest change is forgotten
    // (a read older than the oldest kept change sees the seeded account).
    // Returns nothing, recording nothing, when kMaxAccounts other keys are
    // already held.
    std::optional<AccountChange> record(const std::string& pubkey, uint64_t slot, uint64_t lamports);

    // The last change of pubkey visible at slot, or nullptr when none is
    // (valid until the next record()).
    const AccountChange* visible_at(std::string_view pubkey, uint64_t slot) const;

    // The account as a read at that context slot sees it. Zero lamports is
    // no account: Solana deletes an account that holds none.
    SimAccount account_at(std::string_view pubkey, uint64_t slot) const;

    size_t accounts_changed() const { return by_key_.size(); }

  private:
    uint64_t seed_;
    uint64_t last_id_ = 0;
    // Per key, ordered by slot and by id alike (record() keeps it so).
    std::unordered_map<std::string, std::vector<AccountChange>> by_key_;
};

}  // namespace solsim
