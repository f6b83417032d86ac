// Minimal HTTP/1.1 server on a libuv loop: keep-alive, pipelining (answered
// strictly in order), Content-Length and chunked request bodies, Expect:
// 100-continue, delayed responses via timers and write back-pressure.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
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
    std::string content_type;  // as sent, empty if none
    // Headers a gateway in front adds or strips, as sent: the values of
    // each, joined with ", " when it came more than once, empty if none.
    std::string solgate_peer;  // X-Solgate-Peer
    std::string connection;
    std::string upgrade;
    std::string body;
    // The connection's first request (tests count new connections by it,
    // to see that keep-alive is used).
    bool first_on_connection = false;
    // A WebSocket handshake (GET with Upgrade: websocket, Connection:
    // upgrade, version 13 and a key) on a server that takes them.
    bool websocket = false;
    std::string websocket_key;
};

struct HttpResponse {
    int status = 200;
    std::string content_type = "application/json; charset=utf-8";
    std::string body;
    // Wait this long (on a timer, never blocking the loop) before acting.
    uint64_t delay_ms = 0;
    // Close the connection without writing anything.
    bool drop_connection = false;
    // Say the whole body's length, send half of it, then close.
    bool cut_body = false;
    // For a websocket request: answer 101 and hand the connection to the
    // server's WsHandler (status and body are then unused).
    bool accept_websocket = false;
};

// One client connection in WebSocket mode.
class WsSession {
  public:
    virtual ~WsSession() = default;
    virtual void send_text(std::string_view text) = 0;
};

// What the HTTP server calls for a connection it upgraded.
class WsHandler {
  public:
    virtual ~WsHandler() = default;
    virtual void on_open(WsSession* session) = 0;
    virtual void on_text(WsSession* session, std::string_view text) = 0;
    virtual void on_close(WsSession* session) = 0;
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
    // Upgrade requests go to the handler, which the server must outlive;
    // without one they are plain requests.
    void set_websocket_handler(WsHandler* handler) { ws_handler_ = handler; }
    // Stops accepting and closes every connection (for shutdown).
    void close_all();

  private:
    friend class HttpConnection;
    static void on_connection(uv_stream_t* server, int status);
    void forget(HttpConnection* conn) { connections_.erase(conn); }

    uv_loop_t* loop_;
    HttpHandler handler_;
    WsHandler* ws_handler_ = nullptr;
    bool quiet_;
    uv_tcp_t listener_;
    bool listener_open_ = false;
    std::unordered_set<HttpConnection*> connections_;
};

}  // namespace solsim
