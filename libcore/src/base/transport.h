// How the poller talks to upstreams and reads time. Both are injected: the
// real ones are libcurl on libuv and the monotonic clock; unit tests use
// fakes (no sockets, no sleeps).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace solgate {

// How an https:// target's TLS is checked, and what this side presents:
// an upstream's tls_* options, with its files read when nginx read the
// configuration (conf/upstream_tls.h).
struct TlsSettings {
    bool verify = true;  // the certificate chain and the name in the URL
    // PEM: the CAs trusted instead of the system's store; empty: the
    // system's store (libcurl's default bundle)
    std::string trusted_pem;
    // PEM: the client certificate (chain) and its unencrypted key; empty:
    // none is presented
    std::string certificate_pem;
    std::string certificate_key_pem;
};

// Where one upstream is reached from the poller thread.
struct HttpTarget {
    std::string url;          // "http://sim_a/" or "https://rpc.example/v1/KEY"
    std::string host_header;  // sent as Host when not empty
    // curl CONNECT_TO entry ("HOST:PORT:ADDR:PORT") when the URL's host is
    // an nginx upstream block name rather than a resolvable host.
    std::string connect_to;
    // Lets operators (and the simulated nodes) tell polling from traffic.
    std::string user_agent;
    // Extra request header lines ("Name: value"), sent as they are.
    // (Each member has a default initializer, so brace-initialising only
    // the first ones stays warning-free.)
    std::vector<std::string> headers{};
    // The largest response body accepted; 0: the transport's default cap.
    size_t max_response_bytes = 0;
    // For https:// URLs. The name checked and sent as SNI is the URL's
    // host (with connect_to saying where to connect when it is not).
    TlsSettings tls{};
};

struct HttpResult {
    // 0: an HTTP response arrived; else libcurl's CURLcode (the fakes of
    // the unit tests use the same numbers), which base/tls_failure.h reads
    int transport_error = 0;
    std::string error_text;   // set when transport_error != 0
    long http_status = 0;
    std::string body;
};

class Transport {
public:
    virtual ~Transport() = default;

    // Sends body as a JSON-RPC POST. `done` runs exactly once, on the
    // caller's loop thread, unless the transport is destroyed first (then
    // it never runs).
    virtual void Post(const HttpTarget& target, std::string body,
                      uint32_t timeout_ms,
                      std::function<void(HttpResult)> done) = 0;
};

class Clock {
public:
    virtual ~Clock() = default;
    // Monotonic milliseconds, comparable across processes (CLOCK_MONOTONIC):
    // leases, debounce windows and freshness use it.
    virtual int64_t MonotonicMs() = 0;
    // Wall-clock milliseconds since the epoch, for "since" timestamps.
    virtual int64_t WallMs() = 0;
};

}  // namespace solgate
