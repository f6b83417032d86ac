// The pubsub (WebSocket) side of a simulated node, as agave's RPC pubsub
// service answers it: slotSubscribe / rootSubscribe / accountSubscribe and
// their unsubscribes, with a slotNotification per produced slot, a
// rootNotification per new root and an accountNotification when a change
// recorded by /_sim/account reaches the subscription's commitment.
// Notifications follow the node's own tips, so a stalled or lagging node's
// subscribers see it.
#pragma once

#include <uv.h>
#include <yajl/yajl_tree.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "accounts.h"
#include "chain.h"
#include "config.h"
#include "http_server.h"

namespace solsim {

struct PubSubStats {
    uint64_t sessions = 0;  // open now
    uint64_t opened = 0;
    uint64_t notifications = 0;
};

// What an accountSubscribe watches.
struct AccountWatch {
    std::string pubkey;
    Commitment commitment = Commitment::Finalized;  // agave's default
    std::string encoding;                           // empty: binary, agave's default
    // The newest change this subscription was told of, or saw in force when
    // it subscribed: each change is notified at most once, even when a
    // rollback takes the tips back below it and then past it again.
    uint64_t last_change_id = 0;
};

class PubSub : public WsHandler {
  public:
    // A new slot notifies at most this many slots (after a stall ends).
    static constexpr uint64_t kMaxCatchUp = 32;

    PubSub(uv_loop_t* loop, const SimConfig& cfg, const Chain& chain, const AccountChanges& accounts);
    ~PubSub() override;
    PubSub(const PubSub&) = delete;
    PubSub& operator=(const PubSub&) = delete;

    void on_open(WsSession* session) override;
    void on_text(WsSession* session, std::string_view text) override;
    void on_close(WsSession* session) override;

    // Stops the tick timer (for shutdown).
    void stop();
    // Sends what moved since the last tick; the timer calls it.
    void tick();
    // Sends each account subscription the newest change its commitment now
    // sees, if it was not told of it yet (tick() calls it, and so does a
    // recorded change, so processed subscribers hear of it at once).
    void notify_accounts();
    PubSubStats stats() const;

  private:
    enum class Kind { kSlot, kRoot, kAccount };
    struct Subscription {
        uint64_t id;
        Kind kind;
        AccountWatch account;  // kAccount only
    };
    using Outbox = std::vector<std::pair<WsSession*, std::string>>;

    static void on_timer(uv_timer_t* timer);
    std::string answer(std::string_view text, WsSession* session);
    std::string subscribe_account(yajl_val params, yajl_val id, std::vector<Subscription>& subs);
    std::string unsubscribe(Kind kind, yajl_val params, yajl_val id, std::vector<Subscription>& subs);
    void notify(Kind kind, const std::string& method, const std::string& result);
    void send_all(const Outbox& out);

    const Chain& chain_;
    const AccountChanges& accounts_;
    uv_timer_t timer_;
    bool timer_open_ = false;
    // the sessions open, and those with subscriptions, which are all a
    // tick walks: thousands of idle sessions cost a notification nothing
    std::unordered_set<WsSession*> sessions_;
    std::unordered_map<WsSession*, std::vector<Subscription>> subscribed_;
    uint64_t next_id_ = 0;
    uint64_t last_slot_ = 0;
    uint64_t last_root_ = 0;
    uint64_t opened_ = 0;
    uint64_t notifications_ = 0;
};

}  // namespace solsim
