#include "rpc.h"

#include <cstring>
#include <vector>

#include "codec.h"
#include "det.h"
#include "json.h"

namespace solsim {

namespace {

const char kApiVersion[] = "2.0.15";
const uint64_t kFeatureSet = 607245837;
// Distinct method names tracked by the stats; arbitrary client input must
// not grow the map without bound.
const size_t kMaxTrackedMethods = 256;
const uint64_t kMaxMultipleAccounts = 100;
const uint64_t kMaxSignatureStatuses = 256;
// getHealth reports "behind" past this distance, like Solana's default
// --health-check-slot-distance.
const uint64_t kHealthSlotDistance = 150;

const char kInvalidParams[] = "Invalid params";
// Bound on the per-slot getBlock attempt counters.
const size_t kMaxTrackedAttemptSlots = 1 << 20;

RpcResult invalid_params() { return RpcResult::fail(-32602, kInvalidParams); }

// Positional params: absent or null means none; otherwise an array of at
// most max_len elements.
bool get_params(yajl_val params, size_t max_len, std::vector<yajl_val>& out) {
    out.clear();
    if (params == nullptr || YAJL_IS_NULL(params)) return true;
    if (!YAJL_IS_ARRAY(params) || params->u.array.len > max_len) return false;
    out.assign(params->u.array.values, params->u.array.values + params->u.array.len);
    return true;
}

// The commitment/minContextSlot part shared by most config objects.
struct CommonConfig {
    Commitment commitment = Commitment::Finalized;
    bool has_min_context = false;
    uint64_t min_context = 0;
};

bool parse_common_config(yajl_val cfg, CommonConfig& out) {
    if (cfg == nullptr || YAJL_IS_NULL(cfg)) return true;
    if (!YAJL_IS_OBJECT(cfg)) return false;
    yajl_val commitment = json_get(cfg, "commitment");
    if (commitment != nullptr && !YAJL_IS_NULL(commitment)) {
        if (!YAJL_IS_STRING(commitment) || !parse_commitment(commitment->u.string, out.commitment)) return false;
    }
    yajl_val mcs = json_get(cfg, "minContextSlot");
    if (mcs != nullptr && !YAJL_IS_NULL(mcs)) {
        if (!json_as_u64(mcs, out.min_context)) return false;
        out.has_min_context = true;
    }
    return true;
}

// Returns true (and fills err) when minContextSlot is ahead of the node.
bool min_context_unmet(const CommonConfig& cfg, uint64_t slot, RpcResult& err) {
    if (!cfg.has_min_context || cfg.min_context <= slot) return false;
    std::string data = "{\"contextSlot\":";
    json_append_u64(data, slot);
    data += "}";
    err = RpcResult::fail(-32016, "Minimum context slot has not been reached", data);
    return true;
}

bool valid_pubkey(yajl_val v, size_t expected_bytes) {
    return YAJL_IS_STRING(v) && base58_decodes_to(v->u.string, expected_bytes);
}

std::string error_envelope(const RpcError& err, const std::string& id_json) {
    std::string o = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":";
    json_append_i64(o, err.code);
    o += ",\"message\":";
    json_append_string(o, err.message);
    if (!err.data.empty()) {
        o += ",\"data\":";
        o += err.data;
    }
    o += "},\"id\":";
    o += id_json;
    o += "}";
    return o;
}

std::string invalid_request(const std::string& id_json) {
    RpcError err;
    err.code = -32600;
    err.message = "Invalid request";
    return error_envelope(err, id_json);
}

}  // namespace

static void CountInto(std::map<std::string, uint64_t>& calls,
                      const std::string& method) {
    auto it = calls.find(method);
    if (it != calls.end()) {
        ++it->second;
    } else if (calls.size() < kMaxTrackedMethods) {
        calls.emplace(method, 1);
    } else {
        ++calls["(other)"];
    }
}

void CallStats::count(const std::string& method, bool from_poller) {
    ++total;
    CountInto(calls, method);
    if (from_poller) {
        ++poller_total;
        CountInto(poller_calls, method);
    }
}

RpcEngine::RpcEngine(const SimConfig& cfg, Chain& chain, BlockGenerator& blocks, CallStats& stats,
                     const AccountChanges& accounts)
    : cfg_(cfg), chain_(chain), blocks_(blocks), stats_(stats), accounts_(accounts) {
    // The identity is the one thing that is per node, hence from the name.
    Rng r(hash2(hash_bytes(cfg.name), kTagIdentity));
    uint8_t raw[32];
    r.fill(raw, sizeof(raw));
    identity_ = base58_encode(raw, sizeof(raw));

    handlers_ = {
        {"getSlot", &RpcEngine::get_slot},
        {"getBlockHeight", &RpcEngine::get_block_height},
        {"getMaxShredInsertSlot", &RpcEngine::get_max_shred_insert_slot},
        {"getBlock", &RpcEngine::get_block},
        {"getHealth", &RpcEngine::get_health},
        {"getGenesisHash", &RpcEngine::get_genesis_hash},
        {"getFirstAvailableBlock", &RpcEngine::get_first_available_block},
        {"minimumLedgerSlot", &RpcEngine::get_minimum_ledger_slot},
        {"getVersion", &RpcEngine::get_version},
        {"getIdentity", &RpcEngine::get_identity},
        {"getBalance", &RpcEngine::get_balance},
        {"getAccountInfo", &RpcEngine::get_account_info},
        {"getMultipleAccounts", &RpcEngine::get_multiple_accounts},
        {"getLatestBlockhash", &RpcEngine::get_latest_blockhash},
        {"getTokenAccountBalance", &RpcEngine::get_token_account_balance},
        {"getSignatureStatuses", &RpcEngine::get_signature_statuses},
        {"sendTransaction", &RpcEngine::send_transaction},
        {"simulateTransaction", &RpcEngine::simulate_transaction},
        {"getEpochInfo", &RpcEngine::get_epoch_info},
        {"getBlocks", &RpcEngine::get_blocks},
        {"getBlockTime", &RpcEngine::get_block_time},
        {"getProgramAccounts", &RpcEngine::get_program_accounts},
        {"getSignaturesForAddress", &RpcEngine::get_signatures_for_address},
        {"getTransaction", &RpcEngine::get_transaction},
    };
}

// ---------------------------------------------------------------------------
// Framing

void RpcEngine::count_calls(yajl_val root, bool from_poller) {
    auto count_one = [this, from_poller](yajl_val req) {
        yajl_val method = json_get(req, "method");
        if (YAJL_IS_STRING(method)) stats_.count(method->u.string, from_poller);
    };
    if (YAJL_IS_ARRAY(root)) {
        for (size_t i = 0; i < root->u.array.len; ++i) count_one(root->u.array.values[i]);
    } else {
        count_one(root);
    }
}

std::string RpcEngine::parse_error_body() {
    RpcError err;
    err.code = -32700;
    err.message = "Parse error";
    return error_envelope(err, "null");
}

std::string RpcEngine::behind_answer(yajl_val root, uint64_t behind) {
    yajl_val id = YAJL_IS_OBJECT(root) ? json_get(root, "id") : nullptr;
    if (id == nullptr) return std::string();
    std::string id_json;
    json_append_value(id_json, id);
    RpcError err;
    err.code = -32005;
    err.message = "Node is behind by " + std::to_string(behind) + " slots";
    err.data = "{\"numSlotsBehind\":" + std::to_string(behind) + "}";
    return error_envelope(err, id_json);
}

bool RpcEngine::has_method(yajl_val root, const char* name) {
    auto is = [name](yajl_val req) {
        yajl_val method = json_get(req, "method");
        return YAJL_IS_STRING(method) && std::strcmp(method->u.string, name) == 0;
    };
    if (!YAJL_IS_ARRAY(root)) return is(root);
    for (size_t i = 0; i < root->u.array.len; ++i) {
        if (is(root->u.array.values[i])) return true;
    }
    return false;
}

std::string RpcEngine::respond(yajl_val root) {
    storage_failed_ = false;
    last_storage_failure_ = false;
    if (YAJL_IS_ARRAY(root)) {
        if (root->u.array.len == 0) return invalid_request("null");
        std::string out = "[";
        bool any = false;
        for (size_t i = 0; i < root->u.array.len; ++i) {
            std::string one = respond_one(root->u.array.values[i]);
            if (one.empty()) continue;  // notification
            if (any) out.push_back(',');
            out += one;
            any = true;
        }
        if (!any) return std::string();
        out.push_back(']');
        return out;
    }
    std::string out = respond_one(root);
    last_storage_failure_ = storage_failed_ && !out.empty();
    return out;
}

std::string RpcEngine::respond_one(yajl_val req) {
    if (!YAJL_IS_OBJECT(req)) return invalid_request("null");

    yajl_val id = json_get(req, "id");
    const bool has_id = id != nullptr;
    std::string id_json = "null";
    if (has_id) {
        if (!YAJL_IS_STRING(id) && !YAJL_IS_NUMBER(id) && !YAJL_IS_NULL(id)) return invalid_request("null");
        id_json.clear();
        json_append_value(id_json, id);  // numbers keep their exact spelling
    }

    yajl_val version = json_get(req, "jsonrpc");
    if (version != nullptr && !(YAJL_IS_STRING(version) && std::strcmp(version->u.string, "2.0") == 0)) {
        return invalid_request(id_json);
    }
    yajl_val method = json_get(req, "method");
    if (!YAJL_IS_STRING(method)) return invalid_request(id_json);

    RpcResult res = dispatch(method->u.string, json_get(req, "params"));
    if (!has_id) return std::string();  // notifications get no response

    if (!res.ok) return error_envelope(res.error, id_json);
    std::string out;
    out.reserve(res.json.size() + id_json.size() + 40);
    out += "{\"jsonrpc\":\"2.0\",\"result\":";
    out += res.json;
    out += ",\"id\":";
    out += id_json;
    out += "}";
    return out;
}

RpcResult RpcEngine::dispatch(const std::string& method, yajl_val params) {
    auto it = handlers_.find(method);
    if (it == handlers_.end()) return RpcResult::fail(-32601, "Method not found");
    return (this->*(it->second))(params);
}

std::string RpcEngine::with_context(uint64_t slot, const std::string& value) {
    std::string o = "{\"context\":{\"apiVersion\":\"";
    o += kApiVersion;
    o += "\",\"slot\":";
    json_append_u64(o, slot);
    o += "},\"value\":";
    o += value;
    o += "}";
    return o;
}

// ---------------------------------------------------------------------------
// Slot methods

RpcResult RpcEngine::get_slot(yajl_val params) {
    std::vector<yajl_val> p;
    CommonConfig cfg;
    if (!get_params(params, 1, p) || !parse_common_config(p.empty() ? nullptr : p[0], cfg)) return invalid_params();
    const uint64_t slot = chain_.tips_now().at(cfg.commitment);
    RpcResult err;
    if (min_context_unmet(cfg, slot, err)) return err;
    std::string o;
    json_append_u64(o, slot);
    return RpcResult::value(o);
}

RpcResult RpcEngine::get_block_height(yajl_val params) {
    std::vector<yajl_val> p;
    CommonConfig cfg;
    if (!get_params(params, 1, p) || !parse_common_config(p.empty() ? nullptr : p[0], cfg)) return invalid_params();
    const uint64_t slot = chain_.tips_now().at(cfg.commitment);
    RpcResult err;
    if (min_context_unmet(cfg, slot, err)) return err;
    std::string o;
    json_append_u64(o, chain_.block_height(slot));
    return RpcResult::value(o);
}

RpcResult RpcEngine::get_max_shred_insert_slot(yajl_val params) {
    std::vector<yajl_val> p;
    if (!get_params(params, 0, p)) return invalid_params();
    std::string o;
    json_append_u64(o, chain_.tips_now().shred);
    return RpcResult::value(o);
}

// The node's local ledger; unlike getFirstAvailableBlock it ignores --archive.
RpcResult RpcEngine::get_minimum_ledger_slot(yajl_val params) {
    std::vector<yajl_val> p;
    if (!get_params(params, 0, p)) return invalid_params();
    std::string o;
    json_append_u64(o, cfg_.first_available_block);
    return RpcResult::value(o);
}

RpcResult RpcEngine::get_first_available_block(yajl_val params) {
    std::vector<yajl_val> p;
    if (!get_params(params, 0, p)) return invalid_params();
    // Long-term storage holds every block since genesis.
    return RpcResult::value(cfg_.archive ? "0" : std::to_string(cfg_.first_available_block));
}

// ---------------------------------------------------------------------------
// getBlock

RpcResult RpcEngine::get_block(yajl_val params) {
    std::vector<yajl_val> p;
    uint64_t slot = 0;
    if (!get_params(params, 2, p) || p.empty() || !json_as_u64(p[0], slot)) return invalid_params();

    BlockOptions opts;
    yajl_val config = p.size() > 1 ? p[1] : nullptr;
    const char* encoding = nullptr;
    if (YAJL_IS_STRING(config)) {
        encoding = config->u.string;  // legacy form: the encoding alone
    } else if (YAJL_IS_OBJECT(config)) {
        yajl_val v = json_get(config, "encoding");
        if (v != nullptr && !YAJL_IS_NULL(v)) {
            if (!YAJL_IS_STRING(v)) return invalid_params();
            encoding = v->u.string;
        }
        v = json_get(config, "transactionDetails");
        if (v != nullptr && !YAJL_IS_NULL(v)) {
            if (!YAJL_IS_STRING(v)) return invalid_params();
            const char* d = v->u.string;
            if (std::strcmp(d, "full") == 0) opts.details = TxDetails::Full;
            else if (std::strcmp(d, "accounts") == 0) opts.details = TxDetails::Accounts;
            else if (std::strcmp(d, "signatures") == 0) opts.details = TxDetails::Signatures;
            else if (std::strcmp(d, "none") == 0) opts.details = TxDetails::None;
            else return invalid_params();
        }
        v = json_get(config, "rewards");
        if (v != nullptr && !YAJL_IS_NULL(v)) {
            if (YAJL_IS_TRUE(v)) opts.rewards = true;
            else if (YAJL_IS_FALSE(v)) opts.rewards = false;
            else return invalid_params();
        }
        v = json_get(config, "maxSupportedTransactionVersion");
        if (v != nullptr && !YAJL_IS_NULL(v)) {
            uint64_t version = 0;
            if (!json_as_u64(v, version) || version > 255) return invalid_params();
            opts.show_version = true;
        }
        CommonConfig common;
        if (!parse_common_config(config, common)) return invalid_params();
        if (common.commitment == Commitment::Processed) {
            return RpcResult::fail(-32602, "Method does not support commitment below `confirmed`");
        }
    } else if (config != nullptr && !YAJL_IS_NULL(config)) {
        return invalid_params();
    }
    if (encoding != nullptr) {
        if (std::strcmp(encoding, "json") == 0) opts.encoding = TxEncoding::Json;
        else if (std::strcmp(encoding, "jsonParsed") == 0) opts.encoding = TxEncoding::JsonParsed;
        else if (std::strcmp(encoding, "base64") == 0) opts.encoding = TxEncoding::Base64;
        else if (std::strcmp(encoding, "base58") == 0) opts.encoding = TxEncoding::Base58;
        else if (std::strcmp(encoding, "binary") == 0) opts.encoding = TxEncoding::Binary;
        else return invalid_params();
    }

    const Tips tips = chain_.tips_now();
    const std::string slot_text = std::to_string(slot);
    if (cfg_.archive) {
        // Long-term storage: every finalized block since genesis.
        if (slot > tips.finalized) return RpcResult::fail(-32004, "Block not available for slot " + slot_text);
    } else {
        if (slot > tips.shred) return RpcResult::fail(-32004, "Block not available for slot " + slot_text);
        if (slot < cfg_.first_available_block) {
            return RpcResult::fail(-32001, "Block " + slot_text +
                                               " cleaned up, does not exist on node. First available block: " +
                                               std::to_string(cfg_.first_available_block));
        }
    }
    // The storage query itself may fail. The n-th attempt at a slot fails
    // when hash(seed, slot, n) < rate, so a retry of the same slot may pass.
    const double failure_rate = chain_.faults().getblock_failure_rate;
    if (failure_rate > 0.0) {
        if (storage_attempts_.size() >= kMaxTrackedAttemptSlots && storage_attempts_.count(slot) == 0) {
            storage_attempts_.clear();
        }
        const uint32_t attempt = storage_attempts_[slot]++;
        if (failure_rate >= 1.0 || unit_interval(hash4(cfg_.seed, kTagStorageFail, slot, attempt)) < failure_rate) {
            storage_failed_ = true;
            ++stats_.getblock_failures;
            return RpcResult::fail(-32019, "Failed to query long-term storage; please try again");
        }
    }
    if (chain_.is_skipped(slot)) {
        if (cfg_.archive) {
            return RpcResult::fail(-32009, "Slot " + slot_text + " was skipped, or missing in long-term storage");
        }
        return RpcResult::fail(-32007,
                               "Slot " + slot_text + " was skipped, or missing due to ledger jump to recent snapshot");
    }
    // Solana only checks versions when it has to encode whole transactions.
    const bool encodes_transactions = opts.details == TxDetails::Full || opts.details == TxDetails::Accounts;
    if (encodes_transactions && !opts.show_version && blocks_.has_v0(slot)) {
        return RpcResult::fail(-32015,
                               "Transaction version (0) is not supported by the requesting client. Please try the "
                               "request again with the following configuration parameter: "
                               "\"maxSupportedTransactionVersion\": 0");
    }
    RpcResult res;
    blocks_.render(slot, opts, res.json);
    if (stats_.blocks_served.size() == CallStats::kRecentBlocks) {
        stats_.blocks_served.pop_front();
    }
    stats_.blocks_served.push_back(slot);
    return res;
}

// ---------------------------------------------------------------------------
// Node information

RpcResult RpcEngine::get_health(yajl_val params) {
    std::vector<yajl_val> p;
    if (!get_params(params, 0, p)) return invalid_params();
    const Tips tips = chain_.tips_now();
    const Faults& f = chain_.faults();
    const uint64_t behind = tips.cluster > tips.processed ? tips.cluster - tips.processed : 0;
    if (behind > kHealthSlotDistance) {
        std::string data = "{\"numSlotsBehind\":";
        json_append_u64(data, behind);
        data += "}";
        return RpcResult::fail(-32005, "Node is behind by " + std::to_string(behind) + " slots", data);
    }
    if (f.unhealthy) {
        std::string data = "{\"numSlotsBehind\":";
        if (f.lag > 0) json_append_u64(data, f.lag);
        else data += "null";
        data += "}";
        return RpcResult::fail(-32005, "Node is unhealthy", data);
    }
    return RpcResult::value("\"ok\"");
}

RpcResult RpcEngine::get_genesis_hash(yajl_val params) {
    std::vector<yajl_val> p;
    if (!get_params(params, 0, p)) return invalid_params();
    const char* hash = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d";  // mainnet-beta
    if (cfg_.cluster == "devnet") hash = "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG";
    if (cfg_.cluster == "testnet") hash = "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY";
    return RpcResult::value(json_quote(hash));
}

RpcResult RpcEngine::get_version(yajl_val params) {
    std::vector<yajl_val> p;
    if (!get_params(params, 0, p)) return invalid_params();
    std::string o = "{\"feature-set\":";
    json_append_u64(o, kFeatureSet);
    o += ",\"solana-core\":\"";
    o += kApiVersion;
    o += "\"}";
    return RpcResult::value(o);
}

RpcResult RpcEngine::get_identity(yajl_val params) {
    std::vector<yajl_val> p;
    if (!get_params(params, 0, p)) return invalid_params();
    return RpcResult::value("{\"identity\":" + json_quote(identity_) + "}");
}

// ---------------------------------------------------------------------------
// Context-envelope methods

const char* account_data_json(std::string_view encoding) {
    if (encoding.empty() || encoding == "binary") return "\"\"";  // legacy bare base58 string
    if (encoding == "base58") return "[\"\",\"base58\"]";
    // jsonParsed has no parser for plain system accounts and falls back to base64.
    if (encoding == "base64" || encoding == "jsonParsed") return "[\"\",\"base64\"]";
    if (encoding == "base64+zstd") return "[\"KLUv/SAAAQAA\",\"base64+zstd\"]";  // empty zstd frame
    return nullptr;
}

void append_account_object(std::string& out, const char* data_json, uint64_t lamports, uint64_t rent_epoch) {
    out += "{\"data\":";
    out += data_json;
    out += ",\"executable\":false,\"lamports\":";
    json_append_u64(out, lamports);
    out += ",\"owner\":\"11111111111111111111111111111111\",\"rentEpoch\":";
    json_append_u64(out, rent_epoch);
    out += ",\"space\":0}";
}

bool RpcEngine::render_account(const char* pubkey, uint64_t slot, const std::string& encoding,
                               std::string& out) const {
    const char* data = account_data_json(encoding);
    if (data == nullptr) return false;
    const SimAccount a = accounts_.account_at(pubkey, slot);
    if (!a.exists) {
        out += "null";
        return true;
    }
    const uint64_t wrong = chain_.faults().wrong_value_method == "getAccountInfo" ? 1 : 0;
    append_account_object(out, data, a.lamports + wrong, kRentExemptEpoch);
    return true;
}

namespace {

// Parses {commitment, minContextSlot, encoding, dataSlice} for account methods.
bool parse_account_config(yajl_val cfg, CommonConfig& common, std::string& encoding) {
    if (!parse_common_config(cfg, common)) return false;
    yajl_val enc = json_get(cfg, "encoding");
    if (enc != nullptr && !YAJL_IS_NULL(enc)) {
        if (!YAJL_IS_STRING(enc)) return false;
        encoding = enc->u.string;
    }
    return true;
}

}  // namespace

RpcResult RpcEngine::get_balance(yajl_val params) {
    std::vector<yajl_val> p;
    CommonConfig cfg;
    if (!get_params(params, 2, p) || p.empty() || !valid_pubkey(p[0], 32) ||
        !parse_common_config(p.size() > 1 ? p[1] : nullptr, cfg)) {
        return invalid_params();
    }
    const uint64_t slot = chain_.tips_now().at(cfg.commitment);
    RpcResult err;
    if (min_context_unmet(cfg, slot, err)) return err;
    std::string v;
    uint64_t lamports = accounts_.account_at(p[0]->u.string, slot).lamports;
    if (chain_.faults().wrong_value_method == "getBalance") lamports++;
    json_append_u64(v, lamports);
    return RpcResult::value(with_context(slot, v));
}

RpcResult RpcEngine::get_account_info(yajl_val params) {
    std::vector<yajl_val> p;
    CommonConfig cfg;
    std::string encoding;
    if (!get_params(params, 2, p) || p.empty() || !valid_pubkey(p[0], 32) ||
        !parse_account_config(p.size() > 1 ? p[1] : nullptr, cfg, encoding)) {
        return invalid_params();
    }
    const uint64_t slot = chain_.tips_now().at(cfg.commitment);
    RpcResult err;
    if (min_context_unmet(cfg, slot, err)) return err;
    std::string v;
    if (!render_account(p[0]->u.string, slot, encoding, v)) return invalid_params();
    return RpcResult::value(with_context(slot, v));
}

RpcResult RpcEngine::get_multiple_accounts(yajl_val params) {
    std::vector<yajl_val> p;
    CommonConfig cfg;
    std::string encoding;
    if (!get_params(params, 2, p) || p.empty() || !YAJL_IS_ARRAY(p[0]) ||
        !parse_account_config(p.size() > 1 ? p[1] : nullptr, cfg, encoding)) {
        return invalid_params();
    }
    yajl_val keys = p[0];
    if (keys->u.array.len > kMaxMultipleAccounts) {
        return RpcResult::fail(-32602, "Too many inputs provided; max " + std::to_string(kMaxMultipleAccounts));
    }
    for (size_t i = 0; i < keys->u.array.len; ++i) {
        if (!valid_pubkey(keys->u.array.values[i], 32)) return invalid_params();
    }
    const uint64_t slot = chain_.tips_now().at(cfg.commitment);
    RpcResult err;
    if (min_context_unmet(cfg, slot, err)) return err;
    std::string v = "[";
    for (size_t i = 0; i < keys->u.array.len; ++i) {
        if (i != 0) v += ",";
        if (!render_account(keys->u.array.values[i]->u.string, slot, encoding, v)) return invalid_params();
    }
    v += "]";
    return RpcResult::value(with_context(slot, v));
}

RpcResult RpcEngine::get_latest_blockhash(yajl_val params) {
    std::vector<yajl_val> p;
    CommonConfig cfg;
    if (!get_params(params, 1, p) || !parse_common_config(p.empty() ? nullptr : p[0], cfg)) return invalid_params();
    const uint64_t slot = chain_.tips_now().at(cfg.commitment);
    RpcResult err;
    if (min_context_unmet(cfg, slot, err)) return err;
    // Same hash getBlock reports for that slot (an inflated finalized slot
    // may be skipped; use the bank it would have built on).
    const uint64_t bank = chain_.latest_produced(slot);
    std::string v = "{\"blockhash\":" + json_quote(blocks_.blockhash(bank)) + ",\"lastValidBlockHeight\":";
    json_append_u64(v, chain_.block_height(bank) + 150);
    v += "}";
    return RpcResult::value(with_context(slot, v));
}

RpcResult RpcEngine::get_token_account_balance(yajl_val params) {
    std::vector<yajl_val> p;
    CommonConfig cfg;
    if (!get_params(params, 2, p) || p.empty() || !valid_pubkey(p[0], 32) ||
        !parse_common_config(p.size() > 1 ? p[1] : nullptr, cfg)) {
        return invalid_params();
    }
    const uint64_t slot = chain_.tips_now().at(cfg.commitment);
    RpcResult err;
    if (min_context_unmet(cfg, slot, err)) return err;
    const uint64_t amount = hash3(cfg_.seed, kTagToken, hash_bytes(p[0]->u.string)) % 100000000000ULL;
    // uiAmount is derived textually from the integer amount, so no floating
    // point rounding can make the two disagree.
    std::string whole = std::to_string(amount / 1000000);
    std::string frac = std::to_string(amount % 1000000);
    frac.insert(0, 6 - frac.size(), '0');
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    const std::string ui = frac.empty() ? whole : whole + "." + frac;
    std::string v = "{\"amount\":\"" + std::to_string(amount) + "\",\"decimals\":6,\"uiAmount\":" + ui +
                    ",\"uiAmountString\":\"" + ui + "\"}";
    return RpcResult::value(with_context(slot, v));
}

RpcResult RpcEngine::get_signature_statuses(yajl_val params) {
    std::vector<yajl_val> p;
    if (!get_params(params, 2, p) || p.empty() || !YAJL_IS_ARRAY(p[0])) return invalid_params();
    if (p.size() > 1 && !YAJL_IS_NULL(p[1]) && !YAJL_IS_OBJECT(p[1])) return invalid_params();
    yajl_val sigs = p[0];
    if (sigs->u.array.len > kMaxSignatureStatuses) {
        return RpcResult::fail(-32602, "Too many inputs provided; max " + std::to_string(kMaxSignatureStatuses));
    }
    for (size_t i = 0; i < sigs->u.array.len; ++i) {
        if (!valid_pubkey(sigs->u.array.values[i], 64)) return invalid_params();
    }
    // Like Solana, statuses are reported against the processed bank.
    const Tips tips = chain_.tips_now();
    std::string v = "[";
    for (size_t i = 0; i < sigs->u.array.len; ++i) {
        if (i != 0) v += ",";
        const uint64_t h = hash3(cfg_.seed, kTagStatus, hash_bytes(sigs->u.array.values[i]->u.string));
        if ((h & 3) == 0) {
            v += "null";  // unknown signature
            continue;
        }
        const uint64_t back = (h >> 8) % 500;
        const uint64_t slot = chain_.latest_produced(tips.finalized > back ? tips.finalized - back : 0);
        v += "{\"confirmationStatus\":\"finalized\",\"confirmations\":null,\"err\":null,\"slot\":";
        json_append_u64(v, slot);
        v += ",\"status\":{\"Ok\":null}}";
    }
    v += "]";
    return RpcResult::value(with_context(tips.processed, v));
}

// ---------------------------------------------------------------------------
// Transactions, history and the methods clients send besides reads

namespace {

const uint64_t kSlotsPerEpoch = 432000;
const uint64_t kMaxBlocksRange = 500000;
const uint64_t kMaxSignaturesLimit = 1000;
const uint64_t kProgramAccounts = 5;

// A signature made of (seed, tag, a, b): 64 bytes, base58.
std::string synthetic_signature(uint64_t seed, uint64_t a, uint64_t b) {
    uint8_t raw[64];
    for (int i = 0; i < 8; ++i) {
        uint64_t h = hash4(seed, kTagHistory, hash2(a, b), static_cast<uint64_t>(i));
        std::memcpy(raw + i * 8, &h, 8);
    }
    return base58_encode(raw, sizeof(raw));
}

// The first signature of a wire transaction (compact-u16 count, then the
// 64-byte signatures), or empty when it is not one.
std::string first_signature(const std::vector<uint8_t>& wire) {
    if (wire.empty() || wire[0] == 0 || wire[0] >= 0x80 || wire.size() < 1 + 64) return std::string();
    return base58_encode(wire.data() + 1, 64);
}

// params[0] as a wire transaction in the encoding params[1] names.
bool decode_transaction(const std::vector<yajl_val>& p, std::vector<uint8_t>& wire) {
    if (p.empty() || !YAJL_IS_STRING(p[0])) return false;
    std::string encoding = "base58";
    if (p.size() > 1 && !YAJL_IS_NULL(p[1])) {
        if (!YAJL_IS_OBJECT(p[1])) return false;
        yajl_val e = json_get(p[1], "encoding");
        if (e != nullptr && !YAJL_IS_NULL(e)) {
            if (!YAJL_IS_STRING(e)) return false;
            encoding = e->u.string;
        }
    }
    if (encoding == "base64") return base64_decode(p[0]->u.string, wire);
    if (encoding == "base58") return base58_decode(p[0]->u.string, wire);
    return false;
}

}  // namespace

RpcResult RpcEngine::send_transaction(yajl_val params) {
    std::vector<yajl_val> p;
    std::vector<uint8_t> wire;
    if (!get_params(params, 2, p) || !decode_transaction(p, wire)) {
        return RpcResult::fail(-32602, "invalid transaction: failed to deserialize");
    }
    std::string sig = first_signature(wire);
    if (sig.empty()) return RpcResult::fail(-32602, "invalid transaction: failed to deserialize");
    return RpcResult::value(json_quote(sig));
}

RpcResult RpcEngine::simulate_transaction(yajl_val params) {
    std::vector<yajl_val> p;
    std::vector<uint8_t> wire;
    if (!get_params(params, 2, p) || !decode_transaction(p, wire) || first_signature(wire).empty()) {
        return RpcResult::fail(-32602, "invalid transaction: failed to deserialize");
    }
    const uint64_t slot = chain_.tips_now().processed;
    std::string v = "{\"accounts\":null,\"err\":null,\"innerInstructions\":null,"
                    "\"logs\":[\"Program 11111111111111111111111111111111 invoke [1]\","
                    "\"Program 11111111111111111111111111111111 success\"],"
                    "\"replacementBlockhash\":null,\"returnData\":null,\"unitsConsumed\":150}";
    return RpcResult::value(with_context(slot, v));
}

RpcResult RpcEngine::get_epoch_info(yajl_val params) {
    std::vector<yajl_val> p;
    CommonConfig cfg;
    if (!get_params(params, 1, p) || !parse_common_config(p.empty() ? nullptr : p[0], cfg)) return invalid_params();
    const uint64_t slot = chain_.tips_now().at(cfg.commitment);
    RpcResult err;
    if (min_context_unmet(cfg, slot, err)) return err;
    std::string v = "{\"absoluteSlot\":";
    json_append_u64(v, slot);
    v += ",\"blockHeight\":";
    json_append_u64(v, chain_.block_height(slot));
    v += ",\"epoch\":";
    json_append_u64(v, slot / kSlotsPerEpoch);
    v += ",\"slotIndex\":";
    json_append_u64(v, slot % kSlotsPerEpoch);
    v += ",\"slotsInEpoch\":";
    json_append_u64(v, kSlotsPerEpoch);
    v += ",\"transactionCount\":";
    json_append_u64(v, slot * 1500);
    v += "}";
    return RpcResult::value(v);
}

RpcResult RpcEngine::get_blocks(yajl_val params) {
    std::vector<yajl_val> p;
    uint64_t start = 0, end = 0;
    if (!get_params(params, 3, p) || p.empty() || !json_as_u64(p[0], start)) return invalid_params();
    CommonConfig cfg;
    size_t next = 1;
    const uint64_t finalized = chain_.tips_now().finalized;
    end = finalized;
    if (p.size() > 1 && YAJL_IS_NUMBER(p[1])) {
        if (!json_as_u64(p[1], end)) return invalid_params();
        next = 2;
    }
    if (p.size() > next && !parse_common_config(p[next], cfg)) return invalid_params();
    if (end > finalized) end = finalized;
    if (end >= start && end - start > kMaxBlocksRange) {
        return RpcResult::fail(-32602, "Slot range too large; max " + std::to_string(kMaxBlocksRange));
    }
    std::string v = "[";
    bool first = true;
    for (uint64_t s = std::max(start, cfg_.first_available_block); s <= end && end >= start; ++s) {
        if (chain_.is_skipped(s)) continue;
        if (!first) v += ",";
        first = false;
        json_append_u64(v, s);
    }
    v += "]";
    return RpcResult::value(v);
}

RpcResult RpcEngine::get_block_time(yajl_val params) {
    std::vector<yajl_val> p;
    uint64_t slot = 0;
    if (!get_params(params, 1, p) || p.size() != 1 || !json_as_u64(p[0], slot)) return invalid_params();
    const std::string slot_text = std::to_string(slot);
    if (slot > chain_.tips_now().finalized) {
        return RpcResult::fail(-32004, "Block not available for slot " + slot_text);
    }
    if (chain_.is_skipped(slot)) {
        return RpcResult::fail(-32007, "Slot " + slot_text + " was skipped, or missing due to ledger jump to recent snapshot");
    }
    std::string v;
    json_append_i64(v, chain_.block_time(slot));
    return RpcResult::value(v);
}

RpcResult RpcEngine::get_program_accounts(yajl_val params) {
    std::vector<yajl_val> p;
    if (!get_params(params, 2, p) || p.empty() || !valid_pubkey(p[0], 32)) return invalid_params();
    CommonConfig cfg;
    std::string encoding;
    bool with_context = false;
    if (p.size() > 1 && !YAJL_IS_NULL(p[1])) {
        if (!parse_account_config(p[1], cfg, encoding)) return invalid_params();
        yajl_val wc = json_get(p[1], "withContext");
        with_context = wc != nullptr && YAJL_IS_TRUE(wc);
    }
    const uint64_t slot = chain_.tips_now().at(cfg.commitment);
    RpcResult err;
    if (min_context_unmet(cfg, slot, err)) return err;
    const uint64_t program = hash_bytes(p[0]->u.string);
    std::string v = "[";
    for (uint64_t i = 0; i < kProgramAccounts; ++i) {
        uint8_t raw[32];
        for (int k = 0; k < 4; ++k) {
            uint64_t h = hash4(cfg_.seed, kTagProgram, program, i * 4 + static_cast<uint64_t>(k));
            std::memcpy(raw + k * 8, &h, 8);
        }
        std::string key = base58_encode(raw, sizeof(raw));
        if (i != 0) v += ",";
        v += "{\"account\":";
        if (!render_account(key.c_str(), slot, encoding, v)) return invalid_params();
        v += ",\"pubkey\":" + json_quote(key) + "}";
    }
    v += "]";
    return RpcResult::value(with_context ? this->with_context(slot, v) : v);
}

RpcResult RpcEngine::get_signatures_for_address(yajl_val params) {
    std::vector<yajl_val> p;
    if (!get_params(params, 2, p) || p.empty() || !valid_pubkey(p[0], 32)) return invalid_params();
    uint64_t limit = kMaxSignaturesLimit;
    CommonConfig cfg;
    if (p.size() > 1 && !YAJL_IS_NULL(p[1])) {
        if (!parse_common_config(p[1], cfg)) return invalid_params();
        yajl_val l = json_get(p[1], "limit");
        if (l != nullptr && !YAJL_IS_NULL(l) && (!json_as_u64(l, limit) || limit == 0 || limit > kMaxSignaturesLimit)) {
            return RpcResult::fail(-32602, "Invalid limit; max " + std::to_string(kMaxSignaturesLimit));
        }
    }
    const uint64_t tip = chain_.tips_now().at(cfg.commitment);
    const uint64_t address = hash_bytes(p[0]->u.string);
    // About one transaction of the address every 40 slots, newest first.
    const uint64_t count = std::min<uint64_t>(limit, 10 + address % 20);
    std::string v = "[";
    uint64_t slot = tip;
    for (uint64_t i = 0; i < count && slot > cfg_.first_available_block; ++i) {
        slot = chain_.latest_produced(slot > 40 ? slot - 1 - hash3(cfg_.seed, address, i) % 40 : 0);
        if (i != 0) v += ",";
        v += "{\"blockTime\":";
        json_append_i64(v, chain_.block_time(slot));
        v += ",\"confirmationStatus\":\"finalized\",\"err\":null,\"memo\":null,\"signature\":";
        v += json_quote(synthetic_signature(cfg_.seed, address, slot));
        v += ",\"slot\":";
        json_append_u64(v, slot);
        v += "}";
    }
    v += "]";
    return RpcResult::value(v);
}

RpcResult RpcEngine::get_transaction(yajl_val params) {
    std::vector<yajl_val> p;
    if (!get_params(params, 2, p) || p.empty() || !valid_pubkey(p[0], 64)) return invalid_params();
    CommonConfig cfg;
    if (p.size() > 1 && !YAJL_IS_NULL(p[1]) && !parse_common_config(p[1], cfg)) return invalid_params();
    const Tips tips = chain_.tips_now();
    const uint64_t h = hash3(cfg_.seed, kTagStatus, hash_bytes(p[0]->u.string));
    if ((h & 3) == 0) return RpcResult::value("null");  // an unknown signature
    const uint64_t back = (h >> 8) % 500;
    const uint64_t slot = chain_.latest_produced(tips.finalized > back ? tips.finalized - back : 0);
    if (slot < cfg_.first_available_block) return RpcResult::value("null");
    const std::vector<Key>& wallets = blocks_.wallets();
    const Key& payer = wallets[(h >> 16) % wallets.size()];
    const Key& recipient = wallets[(h >> 24) % wallets.size()];
    std::string v = "{\"blockTime\":";
    json_append_i64(v, chain_.block_time(slot));
    v += ",\"meta\":{\"computeUnitsConsumed\":150,\"err\":null,\"fee\":5000,"
         "\"innerInstructions\":[],\"loadedAddresses\":{\"readonly\":[],\"writable\":[]},"
         "\"logMessages\":[\"Program 11111111111111111111111111111111 invoke [1]\","
         "\"Program 11111111111111111111111111111111 success\"],"
         "\"postBalances\":[999995000,1000000,1],\"postTokenBalances\":[],"
         "\"preBalances\":[1001000000,0,1],\"preTokenBalances\":[],\"rewards\":[],"
         "\"status\":{\"Ok\":null}},\"slot\":";
    json_append_u64(v, slot);
    v += ",\"transaction\":{\"message\":{\"accountKeys\":[" + json_quote(payer.b58) + "," +
         json_quote(recipient.b58) + ",\"11111111111111111111111111111111\"],"
         "\"header\":{\"numReadonlySignedAccounts\":0,\"numReadonlyUnsignedAccounts\":1,"
         "\"numRequiredSignatures\":1},\"instructions\":[{\"accounts\":[0,1],\"data\":"
         "\"3Bxs4h24hBtQy9rw\",\"programIdIndex\":2,\"stackHeight\":null}],"
         "\"recentBlockhash\":" + json_quote(blocks_.blockhash(chain_.parent_slot(slot))) +
         "},\"signatures\":[" + json_quote(p[0]->u.string) + "]}}";
    return RpcResult::value(v);
}

}  // namespace solsim
