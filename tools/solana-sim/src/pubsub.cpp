#include "pubsub.h"

#include <algorithm>

#include "codec.h"
#include "json.h"
#include "rpc.h"

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

std::string u64_text(uint64_t v) {
    std::string out;
    json_append_u64(out, v);
    return out;
}

std::string notification_text(const char* method, const std::string& result, uint64_t subscription) {
    std::string text = "{\"jsonrpc\":\"2.0\",\"method\":\"";
    text += method;
    text += "\",\"params\":{\"result\":" + result + ",\"subscription\":";
    json_append_u64(text, subscription);
    text += "}}";
    return text;
}

// The params of accountSubscribe, their shape only: [pubkey] or
// [pubkey, config | null], the config's commitment and encoding known ones.
// dataSlice and minContextSlot are accepted and ignored: agave ignores
// minContextSlot here, and a slice of the (empty) data is empty.
bool parse_account_params(yajl_val params, AccountWatch& watch) {
    if (params == nullptr || !YAJL_IS_ARRAY(params)) return false;
    const size_t count = params->u.array.len;
    if (count < 1 || count > 2 || !YAJL_IS_STRING(params->u.array.values[0])) return false;
    watch.pubkey = params->u.array.values[0]->u.string;
    const yajl_val config = count == 2 ? params->u.array.values[1] : nullptr;
    if (config == nullptr || YAJL_IS_NULL(config)) return true;
    if (!YAJL_IS_OBJECT(config)) return false;
    const yajl_val commitment = json_get(config, "commitment");
    if (commitment != nullptr && !YAJL_IS_NULL(commitment) &&
        !(YAJL_IS_STRING(commitment) && parse_commitment(commitment->u.string, watch.commitment))) {
        return false;
    }
    const yajl_val encoding = json_get(config, "encoding");
    if (encoding != nullptr && !YAJL_IS_NULL(encoding)) {
        if (!YAJL_IS_STRING(encoding) || account_data_json(encoding->u.string) == nullptr) return false;
        watch.encoding = encoding->u.string;
    }
    return true;
}

// {"context":{"slot":S},"value":ACCOUNT}: a notification's context has no
// apiVersion in agave. An account changed to zero lamports was deleted, and
// agave then sends the default account (rentEpoch 0) rather than null.
std::string account_result(const AccountWatch& watch, uint64_t context_slot, const AccountChange& change) {
    std::string out = "{\"context\":{\"slot\":";
    json_append_u64(out, context_slot);
    out += "},\"value\":";
    const uint64_t rent_epoch = change.lamports > 0 ? kRentExemptEpoch : 0;
    append_account_object(out, account_data_json(watch.encoding), change.lamports, rent_epoch);
    out += "}";
    return out;
}

// Ticks often enough that a notification leaves within a fraction of a
// slot of the slot's start.
uint64_t tick_ms(const SimConfig& cfg) { return std::clamp<uint64_t>(cfg.slot_ms / 4, 10, 100); }

}  // namespace

PubSub::PubSub(uv_loop_t* loop, const SimConfig& cfg, const Chain& chain, const AccountChanges& accounts)
    : chain_(chain), accounts_(accounts) {
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
    sessions_.insert(session);
    ++opened_;
}

void PubSub::on_close(WsSession* session) {
    sessions_.erase(session);
    subscribed_.erase(session);
}

void PubSub::on_text(WsSession* session, std::string_view text) {
    session->send_text(answer(text, session));
    auto it = subscribed_.find(session);
    if (it != subscribed_.end() && it->second.empty()) subscribed_.erase(it);
}

std::string PubSub::answer(std::string_view text, WsSession* session) {
    JsonDoc doc;
    if (!doc.parse(std::string(text))) return error_reply(-32700, "Parse error", nullptr);
    const yajl_val id = json_get(doc.root(), "id");
    const yajl_val method = json_get(doc.root(), "method");
    if (id == nullptr || method == nullptr || !YAJL_IS_STRING(method)) {
        return error_reply(-32600, "Invalid request", nullptr);
    }
    const std::string name = method->u.string;
    const yajl_val params = json_get(doc.root(), "params");
    std::vector<Subscription>& subs = subscribed_[session];

    if (name == "slotSubscribe" || name == "rootSubscribe") {
        const uint64_t sub = next_id_++;
        subs.push_back({sub, name == "slotSubscribe" ? Kind::kSlot : Kind::kRoot, AccountWatch()});
        return result_reply(u64_text(sub), id);
    }
    if (name == "accountSubscribe") return subscribe_account(params, id, subs);
    if (name == "slotUnsubscribe") return unsubscribe(Kind::kSlot, params, id, subs);
    if (name == "rootUnsubscribe") return unsubscribe(Kind::kRoot, params, id, subs);
    if (name == "accountUnsubscribe") return unsubscribe(Kind::kAccount, params, id, subs);
    return error_reply(-32601, "Method not found", id);
}

// As agave: the params' shape is checked first ("Invalid params"), then the
// pubkey, with agave's wording. The change in force at the commitment now
// counts as told, so only later changes notify (agave's
// initial_last_notified_slot).
std::string PubSub::subscribe_account(yajl_val params, yajl_val id, std::vector<Subscription>& subs) {
    AccountWatch watch;
    if (!parse_account_params(params, watch)) return error_reply(-32602, "Invalid params", id);
    if (!base58_decodes_to(watch.pubkey, 32)) {
        return error_reply(-32602, "Invalid Request: Invalid pubkey provided", id);
    }
    const AccountChange* in_force = accounts_.visible_at(watch.pubkey, chain_.tips_now().at(watch.commitment));
    watch.last_change_id = in_force != nullptr ? in_force->id : 0;
    const uint64_t sub = next_id_++;
    subs.push_back({sub, Kind::kAccount, std::move(watch)});
    return result_reply(u64_text(sub), id);
}

std::string PubSub::unsubscribe(Kind kind, yajl_val params, yajl_val id, std::vector<Subscription>& subs) {
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

// Sent after the walk that built them: a failed write closes its session,
// and closing takes it out of subscribed_.
void PubSub::send_all(const Outbox& out) {
    for (const auto& [session, text] : out) {
        session->send_text(text);
        ++notifications_;
    }
}

void PubSub::notify(Kind kind, const std::string& method, const std::string& result) {
    Outbox out;
    for (auto& [session, subs] : subscribed_) {
        for (const Subscription& s : subs) {
            if (s.kind == kind) out.emplace_back(session, notification_text(method.c_str(), result, s.id));
        }
    }
    send_all(out);
}

// Only the newest visible change is sent: changes that reach a commitment
// together (two in one slot, or a finalized tip that jumps) make one
// notification of the account as it is at that slot, as agave notifies the
// state of the bank it checks.
void PubSub::notify_accounts() {
    if (accounts_.accounts_changed() == 0) return;
    const Tips tips = chain_.tips_now();
    Outbox out;
    for (auto& [session, subs] : subscribed_) {
        for (Subscription& s : subs) {
            if (s.kind != Kind::kAccount) continue;
            AccountWatch& watch = s.account;
            const uint64_t slot = tips.at(watch.commitment);
            const AccountChange* change = accounts_.visible_at(watch.pubkey, slot);
            if (change == nullptr || change->id <= watch.last_change_id) continue;
            watch.last_change_id = change->id;
            const std::string result = account_result(watch, slot, *change);
            out.emplace_back(session, notification_text("accountNotification", result, s.id));
        }
    }
    send_all(out);
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
            notify(Kind::kRoot, "rootNotification", u64_text(slot));
        }
    }
    last_root_ = t.finalized;
    notify_accounts();
}

PubSubStats PubSub::stats() const {
    PubSubStats s;
    s.sessions = sessions_.size();
    s.opened = opened_;
    s.notifications = notifications_;
    return s;
}

}  // namespace solsim
