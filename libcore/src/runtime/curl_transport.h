// The real Transport: libcurl's multi interface driven by a libuv loop.
//
// Threading: construct, call Post() and destroy on the loop's thread only;
// every `done` callback also runs there. Nothing here is thread-safe, by
// design: the poller thread owns the loop and everything on it.
//
// Shutdown contract for the owner of the loop: the destructor uv_close()s
// the handles it created, and their memory is freed by close callbacks. Run
// the loop (UV_RUN_DEFAULT) once more after destroying the transport so
// those callbacks complete, and only then call uv_loop_close().
// PollerThread does this.
//
// Name resolution: a URL whose host is a name (not an address, and not
// mapped to an address by connect_to) is resolved by libcurl on a helper
// thread. Destroying the transport while such a lookup is in flight waits
// for that thread, i.e. up to the system resolver's timeout.
#pragma once

#include <curl/curl.h>
#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/transport.h"

namespace solgate {

class CurlTransport : public Transport {
public:
    // Upstream answers larger than this fail with a transport error, so a
    // misbehaving upstream cannot make a worker buffer without bound. A
    // request may set its own cap (HttpTarget::max_response_bytes).
    static constexpr size_t kMaxResponseBytes = 8u * 1024u * 1024u;
    // A dead host should be noticed well before a long request timeout.
    static constexpr uint32_t kMaxConnectTimeoutMs = 3000;
    // Idle keep-alive connections kept for reuse: comfortably more than the
    // upstreams one worker polls.
    static constexpr long kMaxCachedConnections = 64;

    // Throws std::runtime_error when libcurl or libuv cannot be set up.
    explicit CurlTransport(uv_loop_t* loop);
    ~CurlTransport() override;

    CurlTransport(const CurlTransport&) = delete;
    CurlTransport& operator=(const CurlTransport&) = delete;

    // timeout_ms bounds the whole exchange; 0 means no overall limit (the
    // connect phase is still limited to kMaxConnectTimeoutMs). Never calls
    // `done` before returning, so it is safe to call from inside a `done`.
    // If it throws (allocation failure only), `done` never runs.
    void Post(const HttpTarget& target, std::string body, uint32_t timeout_ms,
              std::function<void(HttpResult)> done) override;

    // Transfers started and not yet reported; for tests and diagnostics.
    size_t InFlight() const { return transfers_.size() + deferred_.size(); }

private:
    struct Transfer;
    struct SocketWatch;
    struct Completion {
        std::function<void(HttpResult)> done;
        HttpResult result;
    };

    // libcurl -> us (C callbacks, must not throw).
    static int OnCurlSocket(CURL* easy, curl_socket_t fd, int what,
                            void* transport, void* watch);
    static int OnCurlTimer(CURLM* multi, long timeout_ms, void* transport);
    static size_t OnBodyBytes(char* data, size_t size, size_t count,
                              void* transfer);
    // libuv -> us (C callbacks, must not throw).
    static void OnSocketReady(uv_poll_t* poll, int status, int events);
    static void OnCurlTimerExpired(uv_timer_t* timer);
    static void OnDeferredTimerExpired(uv_timer_t* timer);
    static void FreeWatchOnClose(uv_handle_t* handle);

    int WatchSocket(curl_socket_t fd, int what, SocketWatch* watch);
    void RetireStaleWatch(curl_socket_t fd, SocketWatch* keep);
    void StopWatching(SocketWatch* watch);
    void DriveCurl(curl_socket_t fd, int ev_bitmask);
    void CollectFinished(std::vector<Completion>* out);
    void DeliverDeferred();
    // Runs callbacks; `this` may be destroyed by one of them, so callers
    // must not touch members after it returns.
    void Deliver(std::vector<Completion> completions);
    void FailLater(std::function<void(HttpResult)> done, int code,
                   std::string text);

    uv_loop_t* loop_;
    CURLM* multi_ = nullptr;
    uv_timer_t* curl_timer_ = nullptr;      // the one timer libcurl asks for
    uv_timer_t* deferred_timer_ = nullptr;  // reports setup failures later
    std::unordered_map<CURL*, std::unique_ptr<Transfer>> transfers_;
    // Owned raw: each one is freed by its uv close callback, which may run
    // after this object is gone.
    std::unordered_set<SocketWatch*> watches_;
    std::vector<Completion> deferred_;
    // Expires with the object: lets Deliver() notice that a callback
    // destroyed the transport.
    std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace solgate
