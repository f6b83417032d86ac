#include "node.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "codec.h"
#include "json.h"

namespace solsim {

namespace {

constexpr uint64_t kMaxLatencyMs = 10 * 60 * 1000;

std::map<std::string, std::string> parse_query(const std::string& query) {
    std::map<std::string, std::string> out;
    size_t pos = 0;
    while (pos <= query.size()) {
        size_t amp = query.find('&', pos);
        if (amp == std::string::npos) amp = query.size();
        std::string item = query.substr(pos, amp - pos);
        if (!item.empty()) {
            size_t eq = item.find('=');
            if (eq == std::string::npos) out[item] = "";
            else out[item.substr(0, eq)] = item.substr(eq + 1);
        }
        pos = amp + 1;
    }
    return out;
}

bool parse_u64_text(const std::string& s, uint64_t& out) {
    if (s.empty() || s.size() > 19) return false;
    uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + static_cast<uint64_t>(c - '0');
    }
    out = v;
    return true;
}

bool parse_rate_text(const std::string& s, double& out) {
    if (s.empty() || s.size() > 32) return false;
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || !(v >= 0.0 && v <= 1.0)) return false;
    out = v;
    return true;
}

bool parse_bool_text(const std::string& s, bool& out) {
    if (s == "1" || s == "true" || s == "on" || s == "yes") out = true;
    else if (s == "0" || s == "false" || s == "off" || s == "no") out = false;
    else return false;
    return true;
}

HttpResponse json_response(int status, std::string body) {
    HttpResponse r;
    r.status = status;
    r.body = std::move(body);
    return r;
}

HttpResponse control_error(int status, const std::string& message) {
    return json_response(status, "{\"ok\":false,\"error\":" + json_quote(message) + "}");
}

}  // namespace

SimNode::SimNode(const SimConfig& cfg)
    : cfg_(cfg),
      chain_(cfg),
      blocks_(cfg, chain_),
      accounts_(cfg.seed),
      rpc_(cfg, chain_, blocks_, stats_, accounts_) {}

void SimNode::log(const std::string& line) const {
    if (!cfg_.quiet) std::fprintf(stderr, "solana-sim %s: %s\n", cfg_.name.c_str(), line.c_str());
}

PubSub& SimNode::start_pubsub(uv_loop_t* loop) {
    pubsub_ = std::make_unique<PubSub>(loop, cfg_, chain_, accounts_);
    return *pubsub_;
}

void SimNode::stop_pubsub() {
    if (pubsub_) pubsub_->stop();
}

// The HTTP faults apply to the handshake too: a node answering 503 or
// dropping connections refuses subscribers the same way.
HttpResponse SimNode::handle_websocket(const HttpRequest& req) {
    HttpResponse r;
    stats_.last_ws_connection = req.connection;
    stats_.last_ws_upgrade = req.upgrade;
    const Faults& f = chain_.faults();
    if (f.close) {
        r.drop_connection = true;
    } else if (f.http_status != 0) {
        r.status = f.http_status;
        r.body = "{\"error\":\"injected HTTP status\"}";
    } else {
        r.accept_websocket = true;
        log("websocket " + req.target + " opened");
    }
    return r;
}

HttpResponse SimNode::handle(const HttpRequest& req) {
    if (req.websocket) return handle_websocket(req);
    if (req.path == "/_sim" || req.path.compare(0, 6, "/_sim/") == 0) return handle_control(req);
    // Solana's plain-HTTP health endpoint; handy for load balancers.
    if (req.method == "GET" && req.path == "/health") return handle_health_get();
    if (req.method != "POST") {
        HttpResponse r;
        r.status = 405;
        r.content_type = "text/plain; charset=utf-8";
        r.body = "Used HTTP Method is not allowed. POST or OPTIONS is required\n";
        return r;
    }
    return handle_rpc(req);
}

HttpResponse SimNode::handle_health_get() {
    HttpResponse r;
    r.content_type = "text/plain; charset=utf-8";
    const Tips t = chain_.tips_now();
    const uint64_t behind = t.cluster > t.processed ? t.cluster - t.processed : 0;
    if (behind > 150) r.body = "behind";
    else if (chain_.faults().unhealthy) r.body = "unknown";
    else r.body = "ok";
    return r;
}

HttpResponse SimNode::handle_rpc(const HttpRequest& req) {
    ++stats_.http_requests;
    JsonDoc doc;
    const bool parsed = doc.parse(req.body);
    // Counted before any fault decides the request's fate.
    const bool from_poller = req.user_agent.rfind("solgate-poller", 0) == 0;
    if (parsed) rpc_.count_calls(doc.root(), from_poller);
    if (req.first_on_connection && !from_poller) ++stats_.client_connections;
    if (!from_poller) {
        stats_.last_client_target = req.target;
        stats_.last_client_content_type = req.content_type;
        stats_.last_client_peer = req.solgate_peer;
    }

    const Faults& f = chain_.faults();
    HttpResponse resp;
    resp.delay_ms = f.latency_ms;
    if (f.getblock_latency_ms > 0 && parsed && RpcEngine::has_method(doc.root(), "getBlock")) {
        resp.delay_ms += f.getblock_latency_ms;
    }
    if (f.method_latency_ms > 0 && parsed && RpcEngine::has_method(doc.root(), f.latency_method.c_str())) {
        resp.delay_ms += f.method_latency_ms;
    }
    if (f.close) {
        resp.drop_connection = true;
        return resp;
    }
    if (f.http_status != 0) {
        resp.status = f.http_status;
        resp.content_type = "text/plain; charset=utf-8";
        // 204 and 304 must not carry a body.
        if (f.http_status != 204 && f.http_status != 304) {
            resp.body = std::to_string(f.http_status) + " " + http_reason(f.http_status) + " (simulated)\n";
        }
        return resp;
    }
    if (f.behind_answers && parsed && !from_poller) {
        resp.body = RpcEngine::behind_answer(doc.root(), f.lag);
        if (!resp.body.empty()) return resp;
    }
    resp.body = parsed ? rpc_.respond(doc.root()) : RpcEngine::parse_error_body();
    resp.cut_body = f.cut_answers && !from_poller;
    // A lone getBlock that failed to query storage: 503, like an archive
    // backend that is temporarily unavailable. Batches keep 200.
    if (parsed && rpc_.last_was_storage_failure()) resp.status = 503;
    return resp;
}

std::string SimNode::slots_json() const {
    const Tips t = chain_.tips_now();
    std::string o = "{\"processed\":";
    json_append_u64(o, t.processed);
    o += ",\"confirmed\":";
    json_append_u64(o, t.confirmed);
    o += ",\"finalized\":";
    json_append_u64(o, t.finalized);
    o += ",\"shred\":";
    json_append_u64(o, t.shred);
    o += ",\"cluster\":";
    json_append_u64(o, t.cluster);
    o += "}";
    return o;
}

static void AppendCallCounts(std::string& o,
                             const std::map<std::string, uint64_t>& calls) {
    o += "{";
    bool first = true;
    for (const auto& kv : calls) {
        if (!first) o += ",";
        first = false;
        json_append_string(o, kv.first);
        o += ":";
        json_append_u64(o, kv.second);
    }
    o += "}";
}

std::string SimNode::stats_json() const {
    std::string o = "{\"name\":" + json_quote(cfg_.name) + ",\"calls\":";
    AppendCallCounts(o, stats_.calls);
    o += ",\"total\":";
    json_append_u64(o, stats_.total);
    o += ",\"poller_calls\":";
    AppendCallCounts(o, stats_.poller_calls);
    o += ",\"poller_total\":";
    json_append_u64(o, stats_.poller_total);
    o += ",\"http_requests\":";
    json_append_u64(o, stats_.http_requests);
    o += ",\"client_connections\":";
    json_append_u64(o, stats_.client_connections);
    o += ",\"last_client_target\":" + json_quote(stats_.last_client_target);
    o += ",\"last_client_content_type\":" + json_quote(stats_.last_client_content_type);
    o += ",\"last_client_peer\":" + json_quote(stats_.last_client_peer);
    o += ",\"last_ws_connection\":" + json_quote(stats_.last_ws_connection);
    o += ",\"last_ws_upgrade\":" + json_quote(stats_.last_ws_upgrade);
    o += ",\"slots\":" + slots_json();
    o += ",\"faults\":" + chain_.faults().to_json();
    const PubSubStats ws = pubsub_ ? pubsub_->stats() : PubSubStats();
    o += ",\"ws_sessions\":";
    json_append_u64(o, ws.sessions);
    o += ",\"ws_opened\":";
    json_append_u64(o, ws.opened);
    o += ",\"ws_notifications\":";
    json_append_u64(o, ws.notifications);
    o += ",\"archive\":";
    o += cfg_.archive ? "true" : "false";
    o += ",\"getblock_failures\":";
    json_append_u64(o, stats_.getblock_failures);
    o += ",\"blocks_served\":[";
    for (size_t i = 0; i < stats_.blocks_served.size(); i++) {
        if (i > 0) {
            o += ",";
        }
        json_append_u64(o, stats_.blocks_served[i]);
    }
    o += "]}";
    return o;
}

// /_sim/account?pubkey=K&lamports=N: K holds N lamports from the processed
// tip on, so reads and subscriptions at each commitment see it when their
// slot reaches it, as they would a transfer landing in that slot.
HttpResponse SimNode::handle_account_change(const HttpRequest& req) {
    const auto params = parse_query(req.query);
    const auto pubkey = params.find("pubkey");
    if (pubkey == params.end() || pubkey->second.empty()) return control_error(400, "missing pubkey=BASE58");
    if (!base58_decodes_to(pubkey->second, 32)) {
        return control_error(400, "invalid pubkey '" + pubkey->second + "': not base58 of 32 bytes");
    }
    const auto lamports_text = params.find("lamports");
    uint64_t lamports = 0;
    if (lamports_text == params.end() || !parse_u64_text(lamports_text->second, lamports)) {
        return control_error(400, "expected lamports=N, a whole number of at most 19 digits");
    }
    const uint64_t slot = chain_.tips_now().processed;
    const std::optional<AccountChange> change = accounts_.record(pubkey->second, slot, lamports);
    if (!change) {
        return control_error(400, "too many accounts changed (at most " +
                                      std::to_string(AccountChanges::kMaxAccounts) + ")");
    }
    log("account " + pubkey->second + " lamports=" + std::to_string(lamports) + " from slot " +
        std::to_string(slot));
    // Processed subscribers hear of it now, not at the next tick.
    if (pubsub_) pubsub_->notify_accounts();
    std::string body = "{\"pubkey\":" + json_quote(pubkey->second) + ",\"lamports\":";
    json_append_u64(body, lamports);
    body += ",\"slot\":";
    json_append_u64(body, slot);
    body += "}";
    return json_response(200, body);
}

HttpResponse SimNode::handle_control(const HttpRequest& req) {
    const std::string& path = req.path;
    if (path == "/_sim/stats") return json_response(200, stats_json());
    if (path == "/_sim/account") return handle_account_change(req);
    if (path == "/_sim/reset") {
        stats_.reset();
        rpc_.reset_attempts();
        log("call counters reset");
        return json_response(200, "{\"ok\":true}");
    }

    const std::string prefix = "/_sim/fault/";
    if (path.compare(0, prefix.size(), prefix) != 0) return control_error(404, "unknown control path " + path);
    const std::string fault = path.substr(prefix.size());
    const auto params = parse_query(req.query);
    Faults& f = chain_.faults();

    auto need_bool = [&](const char* key, bool& out) {
        auto it = params.find(key);
        return it != params.end() && parse_bool_text(it->second, out);
    };
    auto need_u64 = [&](const char* key, uint64_t& out) {
        auto it = params.find(key);
        return it != params.end() && parse_u64_text(it->second, out);
    };

    bool on = false;
    uint64_t n = 0;
    std::string change;
    if (fault == "stall") {
        if (!need_bool("on", on)) return control_error(400, "expected on=1|0");
        chain_.set_stall(on);
        change = std::string("stall=") + (on ? "on" : "off");
    } else if (fault == "unhealthy") {
        if (!need_bool("on", on)) return control_error(400, "expected on=1|0");
        f.unhealthy = on;
        change = std::string("unhealthy=") + (on ? "on" : "off");
    } else if (fault == "close") {
        if (!need_bool("on", on)) return control_error(400, "expected on=1|0");
        f.close = on;
        change = std::string("close=") + (on ? "on" : "off");
    } else if (fault == "cut_answers") {
        if (!need_bool("on", on)) return control_error(400, "expected on=1|0");
        f.cut_answers = on;
        change = std::string("cut_answers=") + (on ? "on" : "off");
    } else if (fault == "behind_answers") {
        if (!need_bool("on", on)) return control_error(400, "expected on=1|0");
        f.behind_answers = on;
        change = std::string("behind_answers=") + (on ? "on" : "off");
    } else if (fault == "lag") {
        if (!need_u64("slots", n)) return control_error(400, "expected slots=N");
        f.lag = n;
        change = "lag=" + std::to_string(n);
    } else if (fault == "rollback") {
        if (!need_u64("slots", n)) return control_error(400, "expected slots=N");
        f.rollback = n;
        change = "rollback=" + std::to_string(n);
    } else if (fault == "inflate_finalized") {
        if (!need_u64("slots", n)) return control_error(400, "expected slots=N");
        f.inflate_finalized = n;
        change = "inflate_finalized=" + std::to_string(n);
    } else if (fault == "latency") {
        if (!need_u64("ms", n) || n > kMaxLatencyMs) return control_error(400, "expected ms=N (<= 600000)");
        f.latency_ms = n;
        change = "latency_ms=" + std::to_string(n);
    } else if (fault == "http_status") {
        if (!need_u64("code", n) || (n != 0 && (n < 200 || n > 599))) {
            return control_error(400, "expected code=0 or 200..599");
        }
        f.http_status = static_cast<int>(n);
        change = "http_status=" + std::to_string(n);
    } else if (fault == "getblock_latency") {
        if (!need_u64("ms", n) || n > kMaxLatencyMs) return control_error(400, "expected ms=N (<= 600000)");
        f.getblock_latency_ms = n;
        change = "getblock_latency_ms=" + std::to_string(n);
    } else if (fault == "method_latency") {
        auto method = params.find("method");
        if (method == params.end() || method->second.empty() || !need_u64("ms", n) || n > kMaxLatencyMs) {
            return control_error(400, "expected method=NAME&ms=N (<= 600000)");
        }
        f.latency_method = method->second;
        f.method_latency_ms = n;
        change = "method_latency " + method->second + "=" + std::to_string(n) + "ms";
    } else if (fault == "wrong_value") {
        auto method = params.find("method");
        if (method == params.end() ||
            (!method->second.empty() && method->second != "getBalance" && method->second != "getAccountInfo")) {
            return control_error(400, "expected method=getBalance|getAccountInfo (empty clears)");
        }
        f.wrong_value_method = method->second;
        change = "wrong_value " + (method->second.empty() ? std::string("off") : method->second);
    } else if (fault == "getblock_failure_rate") {
        auto it = params.find("rate");
        double rate = 0;
        if (it == params.end() || !parse_rate_text(it->second, rate)) return control_error(400, "expected rate=F (0..1)");
        f.getblock_failure_rate = rate;
        change = "getblock_failure_rate=" + it->second;
    } else if (fault == "clear") {
        chain_.clear_faults();
        change = "all faults cleared";
    } else {
        return control_error(404, "unknown fault " + fault);
    }
    log("fault " + change);
    return json_response(200, "{\"ok\":true,\"faults\":" + f.to_json() + ",\"slots\":" + slots_json() + "}");
}

}  // namespace solsim
