// The pubsub (WebSocket) side of a simulated node, as agave's RPC pubsub
// service answers it: slotSubscribe / rootSubscribe and their
// unsubscribes, with a slotNotification per produced slot and a
// rootNotification per new root. Notifications follow the node's own tips,
// so a stalled or lagging node's subscribers see it.
#pragma once

#include <uv.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "chain.h"
#include "config.h"
#include "http_server.h"

namespace solsim {

struct PubSubStats {
    uint64_t sessions = 0;  // open now
    uint64_t opened = 0;
    uint64_t notifications = 0;
};

class PubSub : public WsHandler {
  public:
    // A new slot notifies at most this many slots (after a stall ends).
    static constexpr uint64_t kMaxCatchUp = 32;

    PubSub(uv_loop_t* loop, const SimConfig& cfg, const Chain& chain);
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
    PubSubStats stats() const;

  private:
    enum class Kind { kSlot, kRoot };
    struct Subscription {
        uint64_t id;
        Kind kind;
    };

    static void on_timer(uv_timer_t* timer);
    std::string answer(std::string_view text, WsSession* session);
    void notify(Kind kind, const std::string& method, const std::string& result);

    const Chain& chain_;
    uv_timer_t timer_;
    bool timer_open_ = false;
    std::unordered_map<WsSession*, std::vector<Subscription>> sessions_;
    uint64_t next_id_ = 0;
    uint64_t last_slot_ = 0;
    uint64_t last_root_ = 0;
    uint64_t opened_ = 0;
    uint64_t notifications_ = 0;
};

}  // namespace solsim
