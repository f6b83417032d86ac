// One simulated node: routes HTTP requests to the JSON-RPC engine or to the
// /_sim control API, and applies the HTTP-level faults.
#pragma once

#include <memory>
#include <string>

#include "accounts.h"
#include "block.h"
#include "chain.h"
#include "config.h"
#include "http_server.h"
#include "pubsub.h"
#include "rpc.h"

namespace solsim {

class SimNode {
  public:
    explicit SimNode(const SimConfig& cfg);

    HttpResponse handle(const HttpRequest& req);
    // Serves WebSocket subscriptions (the pubsub port) on this loop.
    PubSub& start_pubsub(uv_loop_t* loop);
    void stop_pubsub();

  private:
    HttpResponse handle_rpc(const HttpRequest& req);
    HttpResponse handle_control(const HttpRequest& req);
    HttpResponse handle_account_change(const HttpRequest& req);
    HttpResponse handle_health_get();
    HttpResponse handle_websocket(const HttpRequest& req);
    std::string slots_json() const;
    std::string stats_json() const;
    void log(const std::string& line) const;

    const SimConfig& cfg_;
    Chain chain_;
    BlockGenerator blocks_;
    CallStats stats_;
    AccountChanges accounts_;
    RpcEngine rpc_;
    std::unique_ptr<PubSub> pubsub_;
};

}  // namespace solsim
