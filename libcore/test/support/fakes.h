// Test doubles for the poller: a clock the test moves, and a transport that
// holds every request until the test answers it.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "routing/network.h"
#include "rpc/rpc_request.h"
#include "slots/shared_state.h"
#include "base/transport.h"

namespace solgate::testing {

// Parses a request the way the module does, from text that outlives the
// routing (a batch's calls point into it): every text is kept.
inline RpcRequest ParseKept(const std::string& body) {
    static std::deque<std::string> kept;
    kept.push_back(body);
    return ParseRpcRequest(kept.back().data(), kept.back().size());
}

class FakeClock : public Clock {
public:
    int64_t MonotonicMs() override { return mono; }
    int64_t WallMs() override { return 1700000000000 + mono; }
    void Advance(int64_t ms) { mono += ms; }

    int64_t mono = 1000000;
};

class FakeTransport : public Transport {
public:
    struct Pending {
        std::string url;
        std::string body;
        std::function<void(HttpResult)> done;
        HttpTarget target{};      // the whole target (headers, caps)
        uint32_t timeout_ms = 0;
    };

    void Post(const HttpTarget& target, std::string body, uint32_t timeout_ms,
              std::function<void(HttpResult)> done) override {
        pending.push_back(
            {target.url, std::move(body), std::move(done), target, timeout_ms});
    }

    // The poll method a request body asks for: getHealth, getSlot_processed,
    // getSlot_finalized, getMaxShredInsertSlot, getGenesisHash.
    static std::string Kind(const std::string& body) {
        if (body.find("\"getSlot\"") != std::string::npos) {
            return body.find("processed") != std::string::npos
                       ? "getSlot_processed" : "getSlot_finalized";
        }
        for (const char* m : {"getHealth", "getMaxShredInsertSlot",
                              "getGenesisHash", "getFirstAvailableBlock"}) {
            if (body.find(m) != std::string::npos) return m;
        }
        return "?";
    }

    // Answers every pending request; `replies` maps a Kind to a reply body
    // (a missing kind gets a transport error).
    void AnswerAll(const std::map<std::string, std::string>& replies) {
        std::deque<Pending> batch;
        batch.swap(pending);
        for (auto& p : batch) {
            HttpResult r;
            auto it = replies.find(Kind(p.body));
            if (it == replies.end()) {
                r.transport_error = 7;
                r.error_text = "connection refused";
            } else {
                r.http_status = 200;
                r.body = it->second;
            }
            p.done(r);
        }
    }

    // Answers every request pending now with `reply(request)`; requests
    // the callbacks post meanwhile stay pending.
    void AnswerEach(const std::function<HttpResult(const Pending&)>& reply) {
        std::deque<Pending> batch;
        batch.swap(pending);
        for (auto& p : batch) {
            p.done(reply(p));
        }
    }

    std::map<std::string, int> CountKinds() const {
        std::map<std::string, int> n;
        for (const auto& p : pending) n[Kind(p.body)]++;
        return n;
    }

    std::deque<Pending> pending;
};

inline std::string Result(const std::string& raw) {
    return "{\"jsonrpc\":\"2.0\",\"result\":" + raw + ",\"id\":1}";
}

inline std::string Error(int code) {
    return "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":" + std::to_string(code) +
           ",\"message\":\"x\"},\"id\":1}";
}

// A network of `n` upstreams bound to its own zeroed shared table.
struct TestNetwork {
    explicit TestNetwork(size_t n, NetworkSettings settings = {})
        : shared(std::make_unique<NetworkShared>()),
          network("mainnet", settings) {
        for (size_t i = 0; i < n; i++) {
            network.AddUpstream({"up-" + std::to_string(i),
                                 {"http://10.0.0." + std::to_string(i) + "/",
                                  "", "", ""}});
        }
        std::string error;
        network.Bind(shared.get(), true, 0, &error);
    }

    std::unique_ptr<NetworkShared> shared;
    Network network;
};

// A bound network "mainnet" of up-0 .. up-(n-1); those in `with_ws` have
// a pubsub endpoint (ws=, as http://10.0.0.I:8900/).
struct PubsubTestNetwork {
    PubsubTestNetwork(size_t n, std::vector<size_t> with_ws,
                      NetworkSettings settings = {})
        : shared(std::make_unique<NetworkShared>()),
          network("mainnet", settings) {
        for (size_t i = 0; i < n; i++) {
            UpstreamConf u("up-" + std::to_string(i));
            for (size_t w : with_ws) {
                if (w == i) {
                    u.pubsub.url =
                        "http://10.0.0." + std::to_string(i) + ":8900/";
                }
            }
            network.AddUpstream(u);
        }
        std::string error;
        network.Bind(shared.get(), true, 0, &error);
    }

    std::unique_ptr<NetworkShared> shared;
    Network network;
};

}  // namespace solgate::testing
