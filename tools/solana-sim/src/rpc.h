// JSON-RPC 2.0 framing (single requests, batches, notifications) and the
// Solana method handlers.
#pragma once

#include <yajl/yajl_tree.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "accounts.h"
#include "block.h"
#include "chain.h"
#include "config.h"

namespace solsim {

struct RpcError {
    int code = 0;
    std::string message;
    std::string data;  // raw JSON; empty means "no data member"
};

// Outcome of one method call: a raw JSON result or an error.
struct RpcResult {
    bool ok = true;
    std::string json;
    RpcError error;

    static RpcResult value(std::string json_text) {
        RpcResult r;
        r.json = std::move(json_text);
        return r;
    }
    static RpcResult fail(int code, std::string message, std::string data = std::string()) {
        RpcResult r;
        r.ok = false;
        r.error.code = code;
        r.error.message = std::move(message);
        r.error.data = std::move(data);
        return r;
    }
};

// Counters exposed by /_sim/stats.
// Calls from Solgate's state poller (User-Agent "solgate-poller/...") are
// also counted apart, so tests can tell client traffic from polling.
struct CallStats {
    std::map<std::string, uint64_t> calls;
    uint64_t total = 0;
    std::map<std::string, uint64_t> poller_calls;
    uint64_t poller_total = 0;
    uint64_t http_requests = 0;
    // Connections whose first request came from a client, not the poller.
    uint64_t client_connections = 0;
    // The request target (path and query) of the last client JSON-RPC
    // request: what a gateway in front forwards, or strips.
    std::string last_client_target;
    // Its Content-Type header ("" when it had none): Solana nodes take
    // only application/json.
    std::string last_client_content_type;
    // Its X-Solgate-Peer header (values joined with ", " if repeated, ""
    // when none), and the Connection and Upgrade headers of the last
    // WebSocket handshake: what a gateway in front adds or strips.
    std::string last_client_peer;
    std::string last_ws_connection;
    std::string last_ws_upgrade;
    // getBlock calls failed by the getblock_failure_rate fault (-32019).
    uint64_t getblock_failures = 0;
    // The slots of the last kRecentBlocks blocks answered, oldest first:
    // the order a client (Cube Runner's retriever) asked for them.
    static constexpr size_t kRecentBlocks = 64;
    std::deque<uint64_t> blocks_served;

    void count(const std::string& method, bool from_poller);
    void reset() {
        calls.clear();
        total = 0;
        poller_calls.clear();
        poller_total = 0;
        http_requests = 0;
        client_connections = 0;
        last_client_target.clear();
        last_client_content_type.clear();
        last_client_peer.clear();
        last_ws_connection.clear();
        last_ws_upgrade.clear();
        getblock_failures = 0;
        blocks_served.clear();
    }
};

// rentEpoch of a rent-exempt account, as Solana reports it.
constexpr uint64_t kRentExemptEpoch = UINT64_MAX;

// The JSON of a system account's (empty) data in a getAccountInfo or
// accountSubscribe encoding; empty means binary, the default of both.
// nullptr for an encoding the simulator does not serve.
const char* account_data_json(std::string_view encoding);
// Appends one system account object as getAccountInfo shows it:
// {"data":..,"executable":false,"lamports":N,"owner":"111..","rentEpoch":R,"space":0}
void append_account_object(std::string& out, const char* data_json, uint64_t lamports, uint64_t rent_epoch);

class RpcEngine {
  public:
    RpcEngine(const SimConfig& cfg, Chain& chain, BlockGenerator& blocks, CallStats& stats,
              const AccountChanges& accounts);

    // Counts every call in a parsed body (each batch element is one call).
    // Done separately from answering because faults may reject the request
    // before it is answered, yet the calls must still be counted.
    void count_calls(yajl_val root, bool from_poller);

    // Answers a parsed body. Returns the HTTP body; empty when the body
    // contained only notifications (requests without an id).
    std::string respond(yajl_val root);

    // The -32700 response for a body that is not valid JSON.
    static std::string parse_error_body();
    // The -32005 "Node is behind" answer to a single call (its id kept);
    // empty for a batch or a notification.
    static std::string behind_answer(yajl_val root, uint64_t behind);

    // True when the body holds at least one call of that method.
    static bool has_method(yajl_val root, const char* method);

    // True when the last respond() answered a single (non-batch) request
    // with the -32019 storage failure; the node then answers HTTP 503.
    bool last_was_storage_failure() const { return last_storage_failure_; }

    // Forgets the per-slot getBlock attempt counters (by /_sim/reset).
    void reset_attempts() { storage_attempts_.clear(); }

  private:
    using Handler = RpcResult (RpcEngine::*)(yajl_val params);

    std::string respond_one(yajl_val request);
    RpcResult dispatch(const std::string& method, yajl_val params);

    RpcResult get_slot(yajl_val params);
    RpcResult get_block_height(yajl_val params);
    RpcResult get_max_shred_insert_slot(yajl_val params);
    RpcResult get_block(yajl_val params);
    RpcResult get_health(yajl_val params);
    RpcResult get_genesis_hash(yajl_val params);
    RpcResult get_first_available_block(yajl_val params);
    RpcResult get_minimum_ledger_slot(yajl_val params);
    RpcResult get_version(yajl_val params);
    RpcResult get_identity(yajl_val params);
    RpcResult get_balance(yajl_val params);
    RpcResult get_account_info(yajl_val params);
    RpcResult get_multiple_accounts(yajl_val params);
    RpcResult get_latest_blockhash(yajl_val params);
    RpcResult get_token_account_balance(yajl_val params);
    RpcResult get_signature_statuses(yajl_val params);
    RpcResult send_transaction(yajl_val params);
    RpcResult simulate_transaction(yajl_val params);
    RpcResult get_epoch_info(yajl_val params);
    RpcResult get_blocks(yajl_val params);
    RpcResult get_block_time(yajl_val params);
    RpcResult get_program_accounts(yajl_val params);
    RpcResult get_signatures_for_address(yajl_val params);
    RpcResult get_transaction(yajl_val params);

    // {"context":{"apiVersion":..,"slot":S},"value":V}
    static std::string with_context(uint64_t slot, const std::string& value);
    // Renders one account object (or null) as of a context slot for
    // getAccountInfo-style methods; false for an unknown encoding.
    bool render_account(const char* pubkey, uint64_t slot, const std::string& encoding, std::string& out) const;

    const SimConfig& cfg_;
    Chain& chain_;
    BlockGenerator& blocks_;
    CallStats& stats_;
    const AccountChanges& accounts_;
    std::string identity_;
    std::unordered_map<std::string, Handler> handlers_;
    // getBlock calls per slot while the failure rate is above 0; the n-th
    // attempt's fate is hash(seed, slot, n), so retries may succeed.
    std::unordered_map<uint64_t, uint32_t> storage_attempts_;
    bool storage_failed_ = false;        // set by get_block during respond()
    bool last_storage_failure_ = false;  // see last_was_storage_failure()
};

}  // namespace solsim
