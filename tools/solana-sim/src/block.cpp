#include "block.h"

#include <cstring>
#include <utility>

#include "codec.h"
#include "det.h"
#include "json.h"

namespace solsim {

namespace {

constexpr size_t kWalletCount = 512;
// The first wallets double as validator identities (block rewards).
constexpr size_t kValidatorCount = 32;
constexpr uint64_t kBaseFee = 5000;
constexpr size_t kRecentBlockhashes = 4;
// Keeps the per-slot transaction-count cache bounded.
constexpr size_t kTxCountCacheLimit = 8192;

const char kSystemProgram[] = "11111111111111111111111111111111";
const char kComputeBudgetProgram[] = "ComputeBudget111111111111111111111111111111";
const char kMemoProgram[] = "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr";

Key key_from_base58(const char* text) {
    Key k{};
    std::vector<uint8_t> raw;
    base58_decode(text, raw);
    // Program ids are well-formed 32-byte keys; copy defensively anyway.
    std::memcpy(k.raw, raw.data(), raw.size() < 32 ? raw.size() : 32);
    k.b58 = text;
    return k;
}

void key_from_rng(Rng& r, Key& k) {
    r.fill(k.raw, sizeof(k.raw));
    k.b58 = base58_encode(k.raw, sizeof(k.raw));
}

// Solana "compact-u16" length prefix.
void put_shortvec(std::vector<uint8_t>& w, size_t n) {
    do {
        uint8_t b = n & 0x7f;
        n >>= 7;
        if (n != 0) b |= 0x80;
        w.push_back(b);
    } while (n != 0);
}

void put_le(std::vector<uint8_t>& w, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) w.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void append_key(std::string& out, const Key* k) {
    // base58 never needs JSON escaping.
    out.push_back('"');
    out.append(k->b58);
    out.push_back('"');
}

void append_u64_array(std::string& out, const std::vector<uint64_t>& values) {
    out.push_back('[');
    for (size_t i = 0; i < values.size(); ++i) {
        if (i != 0) out.push_back(',');
        json_append_u64(out, values[i]);
    }
    out.push_back(']');
}

}  // namespace

enum class IxKind { SetComputeUnitLimit, SetComputeUnitPrice, Transfer, Memo };

struct Instruction {
    IxKind kind = IxKind::Memo;
    uint8_t program_index = 0;
    std::vector<uint8_t> accounts;
    std::vector<uint8_t> data;
    uint64_t lamports = 0;  // Transfer only
};

// Everything needed to render one transaction in any encoding.
struct TxModel {
    bool v0 = false;
    uint8_t num_required_signatures = 1;
    uint8_t num_readonly_signed = 0;
    uint8_t num_readonly_unsigned = 0;
    std::vector<const Key*> keys;  // static account keys
    // Version-0 transactions load one writable account from a lookup table.
    const Key* lookup_table = nullptr;
    uint8_t lookup_writable_index = 0;
    std::vector<const Key*> loaded_writable;
    std::vector<Instruction> ixs;
    uint8_t sig[64] = {};
    const Key* recent_blockhash = nullptr;
    uint64_t fee = 0;
    uint64_t compute_units = 0;
    std::vector<uint64_t> pre;
    std::vector<uint64_t> post;
    std::vector<std::string> logs;

    size_t account_count() const { return keys.size() + loaded_writable.size(); }
    const Key* account(size_t i) const { return i < keys.size() ? keys[i] : loaded_writable[i - keys.size()]; }
    bool is_signer(size_t i) const { return i < num_required_signatures; }
    bool is_writable(size_t i) const {
        if (i >= keys.size()) return true;  // only writable lookups are generated
        if (i < num_required_signatures) return i < size_t(num_required_signatures - num_readonly_signed);
        return i < keys.size() - num_readonly_unsigned;
    }
};

struct BlockCtx {
    uint64_t slot = 0;
    uint64_t parent = 0;
    uint64_t height = 0;
    int64_t time = 0;
    bool v0 = false;
    Key blockhash;
    Key previous_blockhash;
    Key recent[kRecentBlockhashes];
    const Key* leader = nullptr;
    uint64_t reward_lamports = 0;
    uint64_t leader_balance = 0;
};

BlockGenerator::BlockGenerator(const SimConfig& cfg, const Chain& chain)
    : cfg_(cfg),
      chain_(chain),
      system_program_(key_from_base58(kSystemProgram)),
      compute_budget_program_(key_from_base58(kComputeBudgetProgram)),
      memo_program_(key_from_base58(kMemoProgram)) {
    Rng r(hash2(cfg.seed, kTagKeyPool));
    wallets_.resize(kWalletCount);
    for (Key& k : wallets_) key_from_rng(r, k);
}

BlockGenerator::~BlockGenerator() = default;

bool BlockGenerator::has_v0(uint64_t slot) const { return (hash3(cfg_.seed, kTagV0, slot) & 1) != 0; }

std::string BlockGenerator::blockhash(uint64_t slot) const {
    Rng r(hash3(cfg_.seed, kTagBlockhash, slot));
    Key k;
    key_from_rng(r, k);
    return k.b58;
}

void BlockGenerator::make_ctx(uint64_t slot, BlockCtx& ctx) const {
    ctx.slot = slot;
    ctx.parent = chain_.parent_slot(slot);
    ctx.height = chain_.block_height(slot);
    ctx.time = chain_.block_time(slot);
    ctx.v0 = has_v0(slot);
    {
        Rng r(hash3(cfg_.seed, kTagBlockhash, slot));
        key_from_rng(r, ctx.blockhash);
    }
    {
        Rng r(hash3(cfg_.seed, kTagBlockhash, ctx.parent));
        key_from_rng(r, ctx.previous_blockhash);
    }
    // Transactions reference one of a few recent blockhashes, as real ones do.
    for (size_t k = 0; k < kRecentBlockhashes; ++k) {
        uint64_t back = 1 + 5 * k;
        uint64_t s = chain_.latest_produced(slot > back ? slot - back : 0);
        Rng r(hash3(cfg_.seed, kTagBlockhash, s));
        key_from_rng(r, ctx.recent[k]);
    }
    Rng lr(hash3(cfg_.seed, kTagLeader, slot));
    ctx.leader = &wallets_[lr.below(kValidatorCount)];
    ctx.reward_lamports = lr.range(5000, 50000000);
    ctx.leader_balance = lr.range(1000000000ULL, 900000000000000ULL);
}

void BlockGenerator::tx_signature(uint64_t slot, uint32_t index, uint8_t sig[64]) const {
    Rng r(hash4(cfg_.seed, kTagSig, slot, index));
    r.fill(sig, 64);
}

void BlockGenerator::build_tx(const BlockCtx& ctx, uint32_t index, TxModel& tx) const {
    tx = TxModel();
    Rng r(hash4(cfg_.seed, kTagTx, ctx.slot, index));
    tx_signature(ctx.slot, index, tx.sig);
    tx.recent_blockhash = &ctx.recent[r.below(kRecentBlockhashes)];
    const Key* payer = &wallets_[r.below(kWalletCount)];
    const Key* other = &wallets_[r.below(kWalletCount)];
    // In v0 slots the first transaction (and every fourth) is version 0, so
    // such a block always contains at least one.
    const bool v0 = ctx.v0 && index % 4 == 0;

    if (v0 || r.below(100) < 70) {
        // Priority-fee SOL transfer: two ComputeBudget instructions + transfer.
        const uint64_t cu_limit = r.range(1, 14) * 1000 + 450;
        const uint64_t cu_price = r.range(1, 500000);  // micro-lamports per CU
        const uint64_t lamports = r.range(1000, 5000000000ULL);
        uint8_t system_index, budget_index, dest_index;
        tx.num_readonly_unsigned = 2;
        if (v0) {
            tx.v0 = true;
            tx.keys = {payer, &system_program_, &compute_budget_program_};
            tx.lookup_table = &wallets_[r.below(kWalletCount)];
            tx.lookup_writable_index = static_cast<uint8_t>(r.below(256));
            tx.loaded_writable = {other};
            system_index = 1;
            budget_index = 2;
            dest_index = 3;  // loaded accounts follow the static keys
        } else {
            tx.keys = {payer, other, &system_program_, &compute_budget_program_};
            system_index = 2;
            budget_index = 3;
            dest_index = 1;
        }
        Instruction limit;
        limit.kind = IxKind::SetComputeUnitLimit;
        limit.program_index = budget_index;
        limit.data.push_back(2);
        put_le(limit.data, cu_limit, 4);
        Instruction price;
        price.kind = IxKind::SetComputeUnitPrice;
        price.program_index = budget_index;
        price.data.push_back(3);
        put_le(price.data, cu_price, 8);
        Instruction transfer;
        transfer.kind = IxKind::Transfer;
        transfer.program_index = system_index;
        transfer.accounts = {0, dest_index};
        put_le(transfer.data, 2, 4);
        put_le(transfer.data, lamports, 8);
        transfer.lamports = lamports;
        tx.ixs = {std::move(limit), std::move(price), std::move(transfer)};

        tx.fee = kBaseFee + (cu_limit * cu_price + 999999) / 1000000;
        tx.compute_units = 450;
        const uint64_t payer_pre = r.range(lamports + tx.fee + 1000000, lamports + 500000000000ULL);
        const uint64_t dest_pre = r.range(0, 100000000000ULL);
        tx.pre.assign(tx.account_count(), 1);
        tx.pre[0] = payer_pre;
        tx.pre[dest_index] = dest_pre;
        tx.post = tx.pre;
        tx.post[0] = payer_pre - tx.fee - lamports;
        tx.post[dest_index] = dest_pre + lamports;

        const std::string cb(kComputeBudgetProgram);
        const std::string sys(kSystemProgram);
        tx.logs = {"Program " + cb + " invoke [1]", "Program " + cb + " success",
                   "Program " + cb + " invoke [1]", "Program " + cb + " success",
                   "Program " + sys + " invoke [1]", "Program " + sys + " success"};
    } else {
        // Memo transaction; its text length varies the transaction size.
        static const char kChars[] = "abcdefghijklmnopqrstuvwxyz0123456789 -";
        std::string text = "solgate-sim:";
        const uint64_t extra = r.range(4, 60);
        for (uint64_t k = 0; k < extra; ++k) text.push_back(kChars[r.below(sizeof(kChars) - 1)]);
        tx.keys = {payer, &memo_program_};
        tx.num_readonly_unsigned = 1;
        Instruction memo;
        memo.kind = IxKind::Memo;
        memo.program_index = 1;
        memo.accounts = {0};
        memo.data.assign(text.begin(), text.end());
        tx.ixs = {std::move(memo)};
        tx.fee = kBaseFee;
        tx.compute_units = r.range(3000, 40000);
        const uint64_t payer_pre = r.range(10000000ULL, 100000000000ULL);
        tx.pre = {payer_pre, 521498880};
        tx.post = {payer_pre - tx.fee, 521498880};
        const std::string memo_id(kMemoProgram);
        std::string log_text = "Program log: Memo (len " + std::to_string(text.size()) + "): \"" + text + "\"";
        tx.logs = {"Program " + memo_id + " invoke [1]", std::move(log_text),
                   "Program " + memo_id + " consumed " + std::to_string(tx.compute_units) +
                       " of 200000 compute units",
                   "Program " + memo_id + " success"};
    }
}

namespace {

void serialize_tx(const TxModel& tx, std::vector<uint8_t>& w) {
    w.clear();
    put_shortvec(w, 1);
    w.insert(w.end(), tx.sig, tx.sig + 64);
    if (tx.v0) w.push_back(0x80);  // versioned message prefix, version 0
    w.push_back(tx.num_required_signatures);
    w.push_back(tx.num_readonly_signed);
    w.push_back(tx.num_readonly_unsigned);
    put_shortvec(w, tx.keys.size());
    for (const Key* k : tx.keys) w.insert(w.end(), k->raw, k->raw + 32);
    w.insert(w.end(), tx.recent_blockhash->raw, tx.recent_blockhash->raw + 32);
    put_shortvec(w, tx.ixs.size());
    for (const Instruction& ix : tx.ixs) {
        w.push_back(ix.program_index);
        put_shortvec(w, ix.accounts.size());
        w.insert(w.end(), ix.accounts.begin(), ix.accounts.end());
        put_shortvec(w, ix.data.size());
        w.insert(w.end(), ix.data.begin(), ix.data.end());
    }
    if (tx.v0) {
        put_shortvec(w, 1);
        w.insert(w.end(), tx.lookup_table->raw, tx.lookup_table->raw + 32);
        put_shortvec(w, 1);
        w.push_back(tx.lookup_writable_index);
        put_shortvec(w, 0);
    }
}

void render_signature(std::string& out, const uint8_t sig[64]) {
    out.push_back('"');
    base58_append(out, sig, 64);
    out.push_back('"');
}

void render_parsed_account_keys(const TxModel& tx, std::string& out) {
    out.push_back('[');
    for (size_t i = 0; i < tx.account_count(); ++i) {
        if (i != 0) out.push_back(',');
        out.append("{\"pubkey\":");
        append_key(out, tx.account(i));
        out.append(tx.is_signer(i) ? ",\"signer\":true" : ",\"signer\":false");
        out.append(i < tx.keys.size() ? ",\"source\":\"transaction\"" : ",\"source\":\"lookupTable\"");
        out.append(tx.is_writable(i) ? ",\"writable\":true}" : ",\"writable\":false}");
    }
    out.push_back(']');
}

void render_lookups(const TxModel& tx, std::string& out) {
    out.append("\"addressTableLookups\":[{\"accountKey\":");
    append_key(out, tx.lookup_table);
    out.append(",\"readonlyIndexes\":[],\"writableIndexes\":[");
    json_append_u64(out, tx.lookup_writable_index);
    out.append("]}],");
}

void render_message(const TxModel& tx, bool parsed, std::string& out) {
    out.append("{\"accountKeys\":");
    if (parsed) {
        render_parsed_account_keys(tx, out);
    } else {
        out.push_back('[');
        for (size_t i = 0; i < tx.keys.size(); ++i) {
            if (i != 0) out.push_back(',');
            append_key(out, tx.keys[i]);
        }
        out.push_back(']');
    }
    out.push_back(',');
    if (tx.v0) render_lookups(tx, out);
    if (!parsed) {
        out.append("\"header\":{\"numReadonlySignedAccounts\":");
        json_append_u64(out, tx.num_readonly_signed);
        out.append(",\"numReadonlyUnsignedAccounts\":");
        json_append_u64(out, tx.num_readonly_unsigned);
        out.append(",\"numRequiredSignatures\":");
        json_append_u64(out, tx.num_required_signatures);
        out.append("},");
    }
    out.append("\"instructions\":[");
    for (size_t n = 0; n < tx.ixs.size(); ++n) {
        const Instruction& ix = tx.ixs[n];
        if (n != 0) out.push_back(',');
        const Key* program = tx.account(ix.program_index);
        if (parsed && ix.kind == IxKind::Transfer) {
            out.append("{\"parsed\":{\"info\":{\"destination\":");
            append_key(out, tx.account(ix.accounts[1]));
            out.append(",\"lamports\":");
            json_append_u64(out, ix.lamports);
            out.append(",\"source\":");
            append_key(out, tx.account(ix.accounts[0]));
            out.append("},\"type\":\"transfer\"},\"program\":\"system\",\"programId\":");
            append_key(out, program);
            out.append(",\"stackHeight\":null}");
        } else if (parsed && ix.kind == IxKind::Memo) {
            out.append("{\"parsed\":");
            json_append_string(out, std::string_view(reinterpret_cast<const char*>(ix.data.data()), ix.data.size()));
            out.append(",\"program\":\"spl-memo\",\"programId\":");
            append_key(out, program);
            out.append(",\"stackHeight\":null}");
        } else if (parsed) {
            // No jsonParsed parser exists for ComputeBudget: "partially decoded".
            out.append("{\"accounts\":[");
            for (size_t a = 0; a < ix.accounts.size(); ++a) {
                if (a != 0) out.push_back(',');
                append_key(out, tx.account(ix.accounts[a]));
            }
            out.append("],\"data\":\"");
            base58_append(out, ix.data.data(), ix.data.size());
            out.append("\",\"programId\":");
            append_key(out, program);
            out.append(",\"stackHeight\":null}");
        } else {
            out.append("{\"accounts\":[");
            for (size_t a = 0; a < ix.accounts.size(); ++a) {
                if (a != 0) out.push_back(',');
                json_append_u64(out, ix.accounts[a]);
            }
            out.append("],\"data\":\"");
            base58_append(out, ix.data.data(), ix.data.size());
            out.append("\",\"programIdIndex\":");
            json_append_u64(out, ix.program_index);
            out.append(",\"stackHeight\":null}");
        }
    }
    out.append("],\"recentBlockhash\":");
    append_key(out, tx.recent_blockhash);
    out.push_back('}');
}

void render_balances_and_status(const TxModel& tx, bool rewards, std::string& out) {
    out.append("\"postBalances\":");
    append_u64_array(out, tx.post);
    out.append(",\"postTokenBalances\":[],\"preBalances\":");
    append_u64_array(out, tx.pre);
    out.append(",\"preTokenBalances\":[],");
    if (rewards) out.append("\"rewards\":[],");
    out.append("\"status\":{\"Ok\":null}}");
}

void render_meta_full(const TxModel& tx, bool parsed, bool rewards, std::string& out) {
    out.append("{\"computeUnitsConsumed\":");
    json_append_u64(out, tx.compute_units);
    out.append(",\"err\":null,\"fee\":");
    json_append_u64(out, tx.fee);
    out.append(",\"innerInstructions\":[],");
    if (!parsed) {
        out.append("\"loadedAddresses\":{\"readonly\":[],\"writable\":[");
        for (size_t i = 0; i < tx.loaded_writable.size(); ++i) {
            if (i != 0) out.push_back(',');
            append_key(out, tx.loaded_writable[i]);
        }
        out.append("]},");
    }
    out.append("\"logMessages\":[");
    for (size_t i = 0; i < tx.logs.size(); ++i) {
        if (i != 0) out.push_back(',');
        json_append_string(out, tx.logs[i]);
    }
    out.append("],");
    render_balances_and_status(tx, rewards, out);
}

void render_meta_accounts(const TxModel& tx, bool rewards, std::string& out) {
    out.append("{\"err\":null,\"fee\":");
    json_append_u64(out, tx.fee);
    out.push_back(',');
    render_balances_and_status(tx, rewards, out);
}

}  // namespace

void BlockGenerator::render_tx(const TxModel& tx, const BlockOptions& opts, std::string& out) const {
    out.append("{\"meta\":");
    if (opts.details == TxDetails::Accounts) {
        // "accounts" ignores the encoding: it always lists parsed keys.
        render_meta_accounts(tx, opts.rewards, out);
        out.append(",\"transaction\":{\"accountKeys\":");
        render_parsed_account_keys(tx, out);
        out.append(",\"signatures\":[");
        render_signature(out, tx.sig);
        out.append("]}");
    } else {
        const bool parsed = opts.encoding == TxEncoding::JsonParsed;
        render_meta_full(tx, parsed, opts.rewards, out);
        out.append(",\"transaction\":");
        if (opts.encoding == TxEncoding::Json || parsed) {
            out.append("{\"message\":");
            render_message(tx, parsed, out);
            out.append(",\"signatures\":[");
            render_signature(out, tx.sig);
            out.append("]}");
        } else {
            std::vector<uint8_t> wire;
            serialize_tx(tx, wire);
            out.push_back(opts.encoding == TxEncoding::Binary ? '"' : '[');
            if (opts.encoding == TxEncoding::Base64) {
                out.push_back('"');
                base64_append(out, wire.data(), wire.size());
                out.append("\",\"base64\"]");
            } else if (opts.encoding == TxEncoding::Base58) {
                out.push_back('"');
                base58_append(out, wire.data(), wire.size());
                out.append("\",\"base58\"]");
            } else {  // legacy "binary": a bare base58 string
                base58_append(out, wire.data(), wire.size());
                out.push_back('"');
            }
        }
    }
    if (opts.show_version) out.append(tx.v0 ? ",\"version\":0" : ",\"version\":\"legacy\"");
    out.push_back('}');
}

void BlockGenerator::render_head(const BlockCtx& ctx, std::string& out) const {
    out.append("{\"blockHeight\":");
    json_append_u64(out, ctx.height);
    out.append(",\"blockTime\":");
    json_append_i64(out, ctx.time);
    out.append(",\"blockhash\":");
    append_key(out, &ctx.blockhash);
    out.append(",\"parentSlot\":");
    json_append_u64(out, ctx.parent);
    out.append(",\"previousBlockhash\":");
    append_key(out, &ctx.previous_blockhash);
}

void BlockGenerator::render_rewards(const BlockCtx& ctx, std::string& out) const {
    out.append(",\"rewards\":[{\"commission\":null,\"lamports\":");
    json_append_u64(out, ctx.reward_lamports);
    out.append(",\"postBalance\":");
    json_append_u64(out, ctx.leader_balance);
    out.append(",\"pubkey\":");
    append_key(out, ctx.leader);
    out.append(",\"rewardType\":\"Fee\"}]");
}

BlockOptions BlockGenerator::canonical_options() {
    // The smallest json/full variant, so that every json or jsonParsed
    // rendering with full details (rewards and version fields only add
    // bytes) is at least --block-bytes long.
    BlockOptions o;
    o.encoding = TxEncoding::Json;
    o.details = TxDetails::Full;
    o.rewards = false;
    o.show_version = false;
    return o;
}

uint32_t BlockGenerator::tx_count(const BlockCtx& ctx) {
    auto it = tx_count_cache_.find(ctx.slot);
    if (it != tx_count_cache_.end()) return it->second;

    // Measure the canonical rendering without keeping it.
    std::string scratch;
    render_head(ctx, scratch);
    size_t total = scratch.size() + std::strlen(",\"transactions\":[") + 1 /* ] */ + 1 /* } */;

    const BlockOptions canonical = canonical_options();
    TxModel tx;
    uint32_t n = 0;
    do {
        build_tx(ctx, n, tx);
        scratch.clear();
        render_tx(tx, canonical, scratch);
        total += scratch.size() + (n != 0 ? 1 : 0);
        ++n;
    } while (total < cfg_.block_bytes);

    if (tx_count_cache_.size() >= kTxCountCacheLimit) tx_count_cache_.clear();
    tx_count_cache_[ctx.slot] = n;
    return n;
}

void BlockGenerator::render(uint64_t slot, const BlockOptions& opts, std::string& out) {
    BlockCtx ctx;
    make_ctx(slot, ctx);
    const size_t start = out.size();
    const bool canonical = opts.encoding == TxEncoding::Json && opts.details == TxDetails::Full &&
                           !opts.rewards && !opts.show_version;
    std::string rewards;
    if (opts.rewards) render_rewards(ctx, rewards);

    render_head(ctx, out);
    if (opts.details == TxDetails::Signatures) {
        const uint32_t n = tx_count(ctx);
        out.reserve(out.size() + size_t(n) * 91 + rewards.size() + 32);
        out.append(",\"signatures\":[");
        uint8_t sig[64];
        for (uint32_t i = 0; i < n; ++i) {
            if (i != 0) out.push_back(',');
            tx_signature(slot, i, sig);
            render_signature(out, sig);
        }
        out.push_back(']');
    } else if (opts.details != TxDetails::None) {
        out.append(",\"transactions\":[");
        TxModel tx;
        if (canonical && tx_count_cache_.find(slot) == tx_count_cache_.end()) {
            // Generate and measure in one pass: add transactions until the
            // finished result object reaches --block-bytes.
            out.reserve(start + cfg_.block_bytes + 4096);
            const size_t tail = 1 + 1;  // "]}" (canonical has no rewards)
            uint32_t n = 0;
            do {
                if (n != 0) out.push_back(',');
                build_tx(ctx, n, tx);
                render_tx(tx, opts, out);
                ++n;
            } while (out.size() - start + tail < cfg_.block_bytes);
            if (tx_count_cache_.size() >= kTxCountCacheLimit) tx_count_cache_.clear();
            tx_count_cache_[slot] = n;
        } else {
            const uint32_t n = tx_count(ctx);
            out.reserve(start + cfg_.block_bytes + 4096);
            for (uint32_t i = 0; i < n; ++i) {
                if (i != 0) out.push_back(',');
                build_tx(ctx, i, tx);
                render_tx(tx, opts, out);
            }
        }
        out.push_back(']');
    }
    out.append(rewards);
    out.push_back('}');
}

}  // namespace solsim
