// Deterministic block bodies for getBlock.
//
// A block is a pure function of (seed, slot) plus the static flags
// (--block-bytes, --skip-rate, clock flags). The node name and the current
// time never influence it, so every node started with the same flags returns
// byte-identical bodies for the same slot and parameters.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "chain.h"
#include "config.h"

namespace solsim {

enum class TxEncoding { Json, JsonParsed, Base64, Base58, Binary };
enum class TxDetails { Full, Accounts, Signatures, None };

struct BlockOptions {
    TxEncoding encoding = TxEncoding::Json;
    TxDetails details = TxDetails::Full;
    bool rewards = true;
    bool show_version = false;  // maxSupportedTransactionVersion was given
};

struct Key {
    uint8_t raw[32];
    std::string b58;
};

struct TxModel;  // defined in block.cpp
struct BlockCtx;

class BlockGenerator {
  public:
    BlockGenerator(const SimConfig& cfg, const Chain& chain);
    ~BlockGenerator();

    // About half of the slots carry version-0 transactions.
    bool has_v0(uint64_t slot) const;
    std::string blockhash(uint64_t slot) const;
    const std::vector<Key>& wallets() const { return wallets_; }

    // Appends the getBlock result object for a produced (non-skipped) slot.
    // The caller has already checked availability.
    void render(uint64_t slot, const BlockOptions& opts, std::string& out);

  private:
    void make_ctx(uint64_t slot, BlockCtx& ctx) const;
    void build_tx(const BlockCtx& ctx, uint32_t index, TxModel& tx) const;
    void tx_signature(uint64_t slot, uint32_t index, uint8_t sig[64]) const;
    // Transaction count of a slot: as many as needed for the canonical
    // rendering (json, full details, no rewards, no version fields) to reach
    // --block-bytes. Every other rendering shows the same transactions.
    uint32_t tx_count(const BlockCtx& ctx);
    static BlockOptions canonical_options();
    void render_head(const BlockCtx& ctx, std::string& out) const;
    void render_rewards(const BlockCtx& ctx, std::string& out) const;
    void render_tx(const TxModel& tx, const BlockOptions& opts, std::string& out) const;

    const SimConfig& cfg_;
    const Chain& chain_;
    std::vector<Key> wallets_;  // pool of payer / recipient / validator keys
    Key system_program_;
    Key compute_budget_program_;
    Key memo_program_;
    std::unordered_map<uint64_t, uint32_t> tx_count_cache_;
};

}  // namespace solsim
