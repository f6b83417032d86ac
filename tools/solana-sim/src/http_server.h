// Minimal HTTP/1.1 server on a libuv loop: keep-alive, pipelining (answered
// strictly in order), Content-Length and chunked request bodies, Expect:
// 100-continue, delayed responses via timers and write back-pressure.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_set>

namespace solsim {

struct HttpRequest {
    std::string method;
    std::string target;  // as sent
    std::string path;    // target up to '?'
    std::string query;   // after '?', empty if none
    bool http11 = true;
    bool keep_alive = true;
    std::string user_agent;
    std::string body;
    // The connection's first request (tests count new connections by it,
    // to see that keep-alive is used).
    bool first_on_connection = false;
};

struct HttpResponse {
    int status = 200;
    std::string content_type = "application/json; charset=utf-8";
    std::string body;
    // Wait this long (on a timer, never blocking the loop) before acting.
    uint64_t delay_ms = 0;
    // Close the connection without writing anything.
    bool drop_connection = false;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

const char* http_reason(int status);

class HttpConnection;

class HttpServer {
  public:
    HttpServer(uv_loop_t* loop, HttpHandler handler, bool quiet);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    // Binds and listens. Returns 0 or a libuv error code.
    int listen(const std::string& host, int port);
    // Stops accepting and closes every connection (for shutdown).
    void close_all();

  private:
    friend class HttpConnection;
    static void on_connection(uv_stream_t* server, int status);
    void forget(HttpConnection* conn) { connections_.erase(conn); }

    uv_loop_t* loop_;
    HttpHandler handler_;
    bool quiet_;
    uv_tcp_t listener_;
    bool listener_open_ = false;
    std::unordered_set<HttpConnection*> connections_;
};

}  // namespace solsim
