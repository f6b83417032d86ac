#include "pubsub.h"

#include <algorithm>

#include "json.h"

namespace solsim {

namespace {

std::string error_reply(int code, const char* message, yajl_val id) {
    std::string out = "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":";
    json_append_i64(out, code);
    out += ",\"message\":";
    json_append_string(out, message);
    out += "},\"id\":";
    if (id != nullptr) {
        json_append_value(out, id);
    } else {
        out += "null";
    }
    out += "}";
    return out;
}

std::string result_reply(const std::string& result, yajl_val id) {
    std::string out = "{\"jsonrpc\":\"2.0\",\"result\":" + result + ",\"id\":";
    json_append_value(out, id);
    out += "}";
    return out;
}

// Ticks often enough that a notification leaves within a fraction of a
// slot of the slot's start.
uint64_t tick_ms(const SimConfig& cfg) { return std::clamp<uint64_t>(cfg.slot_ms / 4, 10, 100); }

}  // namespace

PubSub::PubSub(uv_loop_t* loop, const SimConfig& cfg, const Chain& chain) : chain_(chain) {
    const Tips t = chain_.tips_now();
    last_slot_ = t.processed;
    last_root_ = t.finalized;
    uv_timer_init(loop, &timer_);
    timer_.data = this;
    timer_open_ = true;
    uv_timer_start(&timer_, on_timer, tick_ms(cfg), tick_ms(cfg));
}

PubSub::~PubSub() { stop(); }

void PubSub::stop() {
    if (!timer_open_) return;
    timer_open_ = false;
    uv_timer_stop(&timer_);
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
}

void PubSub::on_timer(uv_timer_t* timer) { static_cast<PubSub*>(timer->data)->tick(); }

void PubSub::on_open(WsSession* session) {
    sessions_[session];
    ++opened_;
}

void PubSub::on_close(WsSession* session) { sessions_.erase(session); }

void PubSub::on_text(WsSession* session, std::string_view text) { session->send_text(answer(text, session)); }

std::string PubSub::answer(std::string_view text, WsSession* session) {
    JsonDoc doc;
    if (!doc.parse(std::string(text))) return error_reply(-32700, "Parse error", nullptr);
    const yajl_val id = json_get(doc.root(), "id");
    const yajl_val method = json_get(doc.root(), "method");
    if (id == nullptr || method == nullptr || !YAJL_IS_STRING(method)) {
        return error_reply(-32600, "Invalid request", nullptr);
    }
    const std::string name = method->u.string;
    std::vector<Subscription>& subs = sessions_[session];

    if (name == "slotSubscribe" || name == "rootSubscribe") {
        const uint64_t sub = next_id_++;
        subs.push_back({sub, name == "slotSubscribe" ? Kind::kSlot : Kind::kRoot});
        std::string result;
        json_append_u64(result, sub);
        return result_reply(result, id);
    }
    if (name == "slotUnsubscribe" || name == "rootUnsubscribe") {
        const Kind kind = name == "slotUnsubscribe" ? Kind::kSlot : Kind::kRoot;
        const yajl_val params = json_get(doc.root(), "params");
        uint64_t sub = 0;
        if (params == nullptr || !YAJL_IS_ARRAY(params) || params->u.array.len != 1 ||
            !json_as_u64(params->u.array.values[0], sub)) {
            return error_reply(-32602, "Invalid params", id);
        }
        auto it = std::find_if(subs.begin(), subs.end(),
                               [&](const Subscription& s) { return s.id == sub && s.kind == kind; });
        if (it == subs.end()) return error_reply(-32602, "Invalid subscription id.", id);
        subs.erase(it);
        return result_reply("true", id);
    }
    return error_reply(-32601, "Method not found", id);
}

void PubSub::notify(Kind kind, const std::string& method, const std::string& result) {
    // Sent after the walk: a failed write closes its session, and closing
    // takes it out of sessions_.
    std::vector<std::pair<WsSession*, std::string>> out;
    for (auto& [session, subs] : sessions_) {
        for (const Subscription& s : subs) {
            if (s.kind != kind) continue;
            std::string text = "{\"jsonrpc\":\"2.0\",\"method\":\"" + method + "\",\"params\":{\"result\":" + result +
                               ",\"subscription\":";
            json_append_u64(text, s.id);
            text += "}}";
            out.emplace_back(session, std::move(text));
        }
    }
    for (auto& [session, text] : out) {
        session->send_text(text);
        ++notifications_;
    }
}

void PubSub::tick() {
    const Tips t = chain_.tips_now();
    if (t.processed > last_slot_) {
        const uint64_t from = std::max(last_slot_ + 1, t.processed - std::min(t.processed, kMaxCatchUp - 1));
        for (uint64_t slot = from; slot <= t.processed; ++slot) {
            if (chain_.is_skipped(slot)) continue;
            std::string result = "{\"parent\":";
            json_append_u64(result, chain_.parent_slot(slot));
            result += ",\"root\":";
            json_append_u64(result, t.finalized);
            result += ",\"slot\":";
            json_append_u64(result, slot);
            result += "}";
            notify(Kind::kSlot, "slotNotification", result);
        }
    }
    // A rollback fault moves the tips back: notify again from there.
    last_slot_ = t.processed;
    if (t.finalized > last_root_) {
        const uint64_t from = std::max(last_root_ + 1, t.finalized - std::min(t.finalized, kMaxCatchUp - 1));
        for (uint64_t slot = from; slot <= t.finalized; ++slot) {
            if (chain_.is_skipped(slot)) continue;
            std::string result;
            json_append_u64(result, slot);
            notify(Kind::kRoot, "rootNotification", result);
        }
    }
    last_root_ = t.finalized;
}

PubSubStats PubSub::stats() const {
    PubSubStats s;
    s.sessions = sessions_.size();
    s.opened = opened_;
    s.notifications = notifications_;
    return s;
}

}  // namespace solsim
