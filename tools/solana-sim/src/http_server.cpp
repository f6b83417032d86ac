#include "http_server.h"

#include "websocket.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>
#include <utility>

namespace solsim {

namespace {

constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kMaxBodyBytes = 32 * 1024 * 1024;
// Stop reading (and stop answering pipelined requests) while this much
// response data is still queued in the kernel-bound write queue, so a client
// that does not read cannot make us buffer without bound.
constexpr size_t kWriteHighWater = 8 * 1024 * 1024;
constexpr size_t kReadChunk = 64 * 1024;

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

// True if a comma-separated header value contains token (case-insensitive).
bool has_token(std::string_view value, std::string_view token) {
    size_t pos = 0;
    while (pos <= value.size()) {
        size_t comma = value.find(',', pos);
        if (comma == std::string_view::npos) comma = value.size();
        std::string_view item = value.substr(pos, comma - pos);
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
        if (iequals(item, token)) return true;
        pos = comma + 1;
    }
    return false;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

struct WriteReq {
    uv_write_t req;
    std::string head;
    std::string body;
};

}  // namespace

const char* http_reason(int status) {
    switch (status) {
        case 100: return "Continue";
        case 101: return "Switching Protocols";
        case 200: return "OK";
        case 204: return "No Content";
        case 400: return "Bad Request";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 408: return "Request Timeout";
        case 413: return "Payload Too Large";
        case 429: return "Too Many Requests";
        case 431: return "Request Header Fields Too Large";
        case 500: return "Internal Server Error";
        case 501: return "Not Implemented";
        case 502: return "Bad Gateway";
        case 503: return "Service Unavailable";
        case 504: return "Gateway Timeout";
        default: return "Status";
    }
}

// One accepted TCP connection. Owns a tcp handle and a timer handle and is
// freed when both have been closed. After a WebSocket handshake it carries
// frames for the server's WsHandler instead of requests.
class HttpConnection : public WsSession {
  public:
    explicit HttpConnection(HttpServer* server) : server_(server) {
        tcp_.data = this;
        timer_.data = this;
        uv_tcp_init(server->loop_, &tcp_);
        uv_timer_init(server->loop_, &timer_);
    }

    uv_stream_t* stream() { return reinterpret_cast<uv_stream_t*>(&tcp_); }

    void start() { uv_read_start(stream(), on_alloc, on_read); }

    void close() {
        if (closing_) return;
        closing_ = true;
        if (websocket_) server_->ws_handler_->on_close(this);
        uv_timer_stop(&timer_);
        uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), on_close);
        uv_close(reinterpret_cast<uv_handle_t*>(&timer_), on_close);
    }

    void send_text(std::string_view text) override {
        if (closing_ || shutting_down_) return;
        write_raw(ws_frame(kWsText, text), std::string());
    }

  private:
    enum class Stage { Headers, FixedBody, ChunkSize, ChunkData, ChunkDataEnd, Trailers };
    enum class Step { Incomplete, Complete, Error };

    static void on_alloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
        // Data is copied into in_ inside on_read, so one buffer per
        // connection is enough.
        auto* self = static_cast<HttpConnection*>(h->data);
        buf->base = self->read_buf_;
        buf->len = sizeof(self->read_buf_);
    }

    static void on_read(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
        auto* self = static_cast<HttpConnection*>(s->data);
        if (nread > 0) {
            self->in_.append(buf->base, static_cast<size_t>(nread));
            self->process_input();
        } else if (nread < 0) {
            if (nread != UV_EOF) {
                self->close();
                return;
            }
            // Peer finished sending: answer what is complete, then close.
            self->peer_eof_ = true;
            uv_read_stop(s);
            self->process_input();
            self->maybe_finish_after_eof();
        }
    }

    static void on_close(uv_handle_t* h) {
        auto* self = static_cast<HttpConnection*>(h->data);
        if (--self->open_handles_ == 0) {
            self->server_->forget(self);
            delete self;
        }
    }

    static void on_timer(uv_timer_t* t) {
        auto* self = static_cast<HttpConnection*>(t->data);
        self->busy_ = false;
        HttpResponse resp = std::move(self->pending_);
        self->pending_ = HttpResponse();
        self->finish(std::move(resp), self->pending_keep_alive_);
        if (self->closing_) return;
        self->process_input();
        self->maybe_finish_after_eof();
    }

    static void on_write(uv_write_t* req, int status) {
        auto* w = reinterpret_cast<WriteReq*>(req);
        auto* self = static_cast<HttpConnection*>(req->handle->data);
        delete w;
        if (status < 0) {
            self->close();  // also reached with UV_ECANCELED while closing
            return;
        }
        if (self->closing_) return;
        if (self->read_paused_ && !self->write_backlogged()) {
            self->read_paused_ = false;
            if (!self->peer_eof_) uv_read_start(self->stream(), on_alloc, on_read);
            self->process_input();
            self->maybe_finish_after_eof();
        }
    }

    static void on_shutdown(uv_shutdown_t* req, int) {
        auto* self = static_cast<HttpConnection*>(req->handle->data);
        delete req;
        self->close();
    }

    bool write_backlogged() const { return tcp_.write_queue_size > kWriteHighWater; }

    void shutdown_then_close() {
        if (closing_ || shutting_down_) return;
        shutting_down_ = true;
        uv_read_stop(stream());
        auto* req = new uv_shutdown_t;
        if (uv_shutdown(req, stream(), on_shutdown) != 0) {
            delete req;
            close();
        }
    }

    void maybe_finish_after_eof() {
        if (peer_eof_ && !busy_ && !closing_) shutdown_then_close();
    }

    void write_raw(std::string head, std::string body) {
        auto* w = new WriteReq;
        w->head = std::move(head);
        w->body = std::move(body);
        uv_buf_t bufs[2];
        unsigned nbufs = 0;
        bufs[nbufs++] = uv_buf_init(w->head.data(), static_cast<unsigned>(w->head.size()));
        if (!w->body.empty()) bufs[nbufs++] = uv_buf_init(w->body.data(), static_cast<unsigned>(w->body.size()));
        if (uv_write(&w->req, stream(), bufs, nbufs, on_write) != 0) {
            delete w;
            close();
        }
    }

    void send(HttpResponse&& resp, bool keep_alive) {
        std::string head = "HTTP/1.1 ";
        head += std::to_string(resp.status);
        head += ' ';
        head += http_reason(resp.status);
        head += "\r\nContent-Type: ";
        head += resp.content_type;
        head += "\r\nContent-Length: ";
        head += std::to_string(resp.body.size());
        if (resp.cut_body) {
            keep_alive = false;
            resp.body.resize(resp.body.size() / 2);
        }
        head += keep_alive ? "\r\nConnection: keep-alive\r\n\r\n" : "\r\nConnection: close\r\n\r\n";
        write_raw(std::move(head), std::move(resp.body));
        if (!keep_alive) shutdown_then_close();  // shutdown waits for the write
    }

    void finish(HttpResponse&& resp, bool keep_alive) {
        if (resp.drop_connection) {
            close();
            return;
        }
        send(std::move(resp), keep_alive);
    }

    void fail(int status, const char* message) {
        HttpResponse resp;
        resp.status = status;
        resp.body = std::string("{\"error\":\"") + message + "\"}";
        send(std::move(resp), false);
    }

    void process_input() {
        if (websocket_) {
            process_frames();
            return;
        }
        while (!busy_ && !closing_ && !shutting_down_) {
            if (write_backlogged()) {
                if (!read_paused_) {
                    read_paused_ = true;
                    uv_read_stop(stream());
                }
                return;
            }
            Step step = parse_step();
            if (step == Step::Incomplete) return;
            if (step == Step::Error) return;  // fail() already answered and closes
            dispatch();
        }
    }

    void dispatch() {
        HttpRequest req = std::move(req_);
        req.first_on_connection = requests_ == 0;
        ++requests_;
        req_ = HttpRequest();
        stage_ = Stage::Headers;
        scan_from_ = 0;
        sent_continue_ = false;

        HttpResponse resp;
        try {
            resp = server_->handler_(req);
        } catch (const std::exception& e) {
            // Never let an exception unwind through libuv's C frames.
            resp = HttpResponse();
            resp.status = 500;
            resp.body = "{\"error\":\"internal error\"}";
            if (!server_->quiet_) std::fprintf(stderr, "solana-sim: handler failed: %s\n", e.what());
        }
        if (req.websocket && resp.accept_websocket && !resp.drop_connection) {
            start_websocket(req.websocket_key);
            return;
        }
        if (resp.delay_ms > 0) {
            busy_ = true;
            pending_ = std::move(resp);
            pending_keep_alive_ = req.keep_alive;
            uv_timer_start(&timer_, on_timer, pending_.delay_ms, 0);
            return;
        }
        finish(std::move(resp), req.keep_alive);
    }

    void start_websocket(const std::string& key) {
        write_raw("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Accept: " + ws_accept_key(key) + "\r\n\r\n",
                  std::string());
        websocket_ = true;
        server_->ws_handler_->on_open(this);
        process_frames();  // bytes that came with the handshake
    }

    // Hands whole messages to the WsHandler; answers pings and closes.
    void process_frames() {
        if (closing_ || shutting_down_) return;
        frames_.Feed(in_.data(), in_.size());
        in_.clear();
        WsMessage msg;
        while (!closing_ && !shutting_down_ && frames_.Next(msg)) {
            switch (msg.opcode) {
                case kWsText:
                    server_->ws_handler_->on_text(this, msg.payload);
                    break;
                case kWsPing:
                    write_raw(ws_frame(kWsPong, msg.payload), std::string());
                    break;
                case kWsClose: {
                    // Echo the client's code, then close (RFC 6455 5.5.1).
                    const uint16_t code = msg.payload.size() >= 2
                        ? static_cast<uint16_t>((static_cast<uint8_t>(msg.payload[0]) << 8) |
                                                static_cast<uint8_t>(msg.payload[1]))
                        : 1000;
                    write_raw(ws_close_frame(code, ""), std::string());
                    shutdown_then_close();
                    return;
                }
                case kWsBinary:
                    write_raw(ws_close_frame(1003, "binary messages are not supported"), std::string());
                    shutdown_then_close();
                    return;
                default:
                    break;  // pong
            }
        }
        if (frames_.error() != nullptr) {
            write_raw(ws_close_frame(frames_.error_code(), frames_.error()), std::string());
            shutdown_then_close();
        }
    }

    // Advances the request parser over in_. Consumed bytes are erased once a
    // request completes; header scanning resumes where it stopped.
    Step parse_step() {
        for (;;) {
            switch (stage_) {
                case Stage::Headers: {
                    // Tolerate stray CRLFs between pipelined requests (RFC 9112 2.2).
                    while (in_.size() >= 2 && in_[0] == '\r' && in_[1] == '\n') in_.erase(0, 2);
                    size_t end = in_.find("\r\n\r\n", scan_from_);
                    if (end == std::string::npos) {
                        if (in_.size() > kMaxHeaderBytes) {
                            fail(431, "request headers too large");
                            return Step::Error;
                        }
                        scan_from_ = in_.size() > 3 ? in_.size() - 3 : 0;
                        return Step::Incomplete;
                    }
                    if (!parse_headers(std::string_view(in_).substr(0, end + 2))) return Step::Error;
                    pos_ = end + 4;
                    if (chunked_) {
                        stage_ = Stage::ChunkSize;
                    } else if (content_length_ > 0) {
                        stage_ = Stage::FixedBody;
                    } else {
                        in_.erase(0, pos_);
                        return Step::Complete;
                    }
                    send_continue_if_expected();
                    break;
                }
                case Stage::FixedBody: {
                    if (in_.size() - pos_ < content_length_) return Step::Incomplete;
                    req_.body.assign(in_, pos_, content_length_);
                    in_.erase(0, pos_ + content_length_);
                    return Step::Complete;
                }
                case Stage::ChunkSize: {
                    size_t eol = in_.find("\r\n", pos_);
                    if (eol == std::string::npos) {
                        if (in_.size() - pos_ > 1024) {
                            fail(400, "bad chunk header");
                            return Step::Error;
                        }
                        return Step::Incomplete;
                    }
                    std::string_view line = std::string_view(in_).substr(pos_, eol - pos_);
                    size_t semi = line.find(';');  // chunk extensions are ignored
                    if (semi != std::string_view::npos) line = line.substr(0, semi);
                    line = trim(line);
                    uint64_t size = 0;
                    if (line.empty() || line.size() > 8) {
                        fail(400, "bad chunk size");
                        return Step::Error;
                    }
                    for (char c : line) {
                        int d;
                        if (c >= '0' && c <= '9') d = c - '0';
                        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
                        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
                        else {
                            fail(400, "bad chunk size");
                            return Step::Error;
                        }
                        size = size * 16 + static_cast<uint64_t>(d);
                    }
                    pos_ = eol + 2;
                    if (size == 0) {
                        stage_ = Stage::Trailers;
                    } else {
                        if (req_.body.size() + size > kMaxBodyBytes) {
                            fail(413, "request body too large");
                            return Step::Error;
                        }
                        chunk_left_ = size;
                        stage_ = Stage::ChunkData;
                    }
                    break;
                }
                case Stage::ChunkData: {
                    size_t avail = in_.size() - pos_;
                    size_t take = avail < chunk_left_ ? avail : static_cast<size_t>(chunk_left_);
                    req_.body.append(in_, pos_, take);
                    pos_ += take;
                    chunk_left_ -= take;
                    if (chunk_left_ > 0) {
                        // Drop what has been copied so in_ does not hold the
                        // whole body twice.
                        in_.erase(0, pos_);
                        pos_ = 0;
                        return Step::Incomplete;
                    }
                    stage_ = Stage::ChunkDataEnd;
                    break;
                }
                case Stage::ChunkDataEnd: {
                    if (in_.size() - pos_ < 2) return Step::Incomplete;
                    if (in_.compare(pos_, 2, "\r\n") != 0) {
                        fail(400, "bad chunk terminator");
                        return Step::Error;
                    }
                    pos_ += 2;
                    stage_ = Stage::ChunkSize;
                    break;
                }
                case Stage::Trailers: {
                    size_t eol = in_.find("\r\n", pos_);
                    if (eol == std::string::npos) return Step::Incomplete;
                    bool last = eol == pos_;
                    pos_ = eol + 2;
                    if (last) {
                        in_.erase(0, pos_);
                        return Step::Complete;
                    }
                    break;  // trailer field: ignored
                }
            }
        }
    }

    void send_continue_if_expected() {
        // Only worth it when the client is actually holding the body back.
        if (expect_continue_ && !sent_continue_ && req_.http11 && in_.size() == pos_) {
            sent_continue_ = true;
            write_raw("HTTP/1.1 100 Continue\r\n\r\n", std::string());
        }
    }

    // A header's value added to what the same header said before.
    static void append_value(std::string& to, std::string_view value) {
        if (!to.empty()) to += ", ";
        to += value;
    }

    // Parses the request line and header fields (text ends with CRLF).
    bool parse_headers(std::string_view text) {
        content_length_ = 0;
        chunked_ = false;
        expect_continue_ = false;
        req_.user_agent.clear();
        req_.content_type.clear();
        req_.solgate_peer.clear();
        req_.connection.clear();
        req_.upgrade.clear();
        bool upgrade_websocket = false;
        bool connection_upgrade = false;
        bool version_13 = false;

        size_t eol = text.find("\r\n");
        std::string_view line = text.substr(0, eol);
        size_t sp1 = line.find(' ');
        size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
        if (sp1 == std::string_view::npos || sp2 == std::string_view::npos || sp1 == 0 || sp2 == sp1 + 1) {
            fail(400, "malformed request line");
            return false;
        }
        std::string_view version = line.substr(sp2 + 1);
        if (version == "HTTP/1.1") {
            req_.http11 = true;
        } else if (version == "HTTP/1.0") {
            req_.http11 = false;
        } else {
            fail(400, "unsupported HTTP version");
            return false;
        }
        req_.method = std::string(line.substr(0, sp1));
        req_.target = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
        size_t q = req_.target.find('?');
        req_.path = req_.target.substr(0, q);
        req_.query = q == std::string::npos ? std::string() : req_.target.substr(q + 1);
        req_.keep_alive = req_.http11;

        bool have_length = false;
        size_t pos = eol + 2;
        while (pos < text.size()) {
            size_t next = text.find("\r\n", pos);
            if (next == std::string_view::npos) next = text.size();
            std::string_view field = text.substr(pos, next - pos);
            pos = next + 2;
            size_t colon = field.find(':');
            if (colon == std::string_view::npos) {
                fail(400, "malformed header");
                return false;
            }
            std::string_view name = trim(field.substr(0, colon));
            std::string_view value = trim(field.substr(colon + 1));
            if (iequals(name, "content-length")) {
                uint64_t n = 0;
                if (value.empty() || value.size() > 12) {
                    fail(400, "bad content-length");
                    return false;
                }
                for (char c : value) {
                    if (c < '0' || c > '9') {
                        fail(400, "bad content-length");
                        return false;
                    }
                    n = n * 10 + static_cast<uint64_t>(c - '0');
                }
                if (have_length && n != content_length_) {
                    fail(400, "conflicting content-length");
                    return false;
                }
                have_length = true;
                content_length_ = n;
            } else if (iequals(name, "transfer-encoding")) {
                if (has_token(value, "chunked")) {
                    chunked_ = true;
                } else if (!value.empty() && !iequals(value, "identity")) {
                    fail(501, "unsupported transfer-encoding");
                    return false;
                }
            } else if (iequals(name, "user-agent")) {
                req_.user_agent = std::string(value);
            } else if (iequals(name, "content-type")) {
                req_.content_type = std::string(value);
            } else if (iequals(name, "x-solgate-peer")) {
                append_value(req_.solgate_peer, value);
            } else if (iequals(name, "connection")) {
                append_value(req_.connection, value);
                if (has_token(value, "close")) req_.keep_alive = false;
                else if (has_token(value, "keep-alive")) req_.keep_alive = true;
                connection_upgrade = has_token(value, "upgrade");
            } else if (iequals(name, "expect")) {
                expect_continue_ = iequals(value, "100-continue");
            } else if (iequals(name, "upgrade")) {
                append_value(req_.upgrade, value);
                upgrade_websocket = has_token(value, "websocket");
            } else if (iequals(name, "sec-websocket-version")) {
                version_13 = value == "13";
            } else if (iequals(name, "sec-websocket-key")) {
                req_.websocket_key = std::string(value);
            }
        }
        if (chunked_) content_length_ = 0;  // Transfer-Encoding wins (RFC 9112)
        req_.websocket = server_->ws_handler_ != nullptr && req_.method == "GET" && upgrade_websocket &&
                         connection_upgrade && version_13 && !req_.websocket_key.empty();
        if (content_length_ > kMaxBodyBytes) {
            fail(413, "request body too large");
            return false;
        }
        return true;
    }

    HttpServer* server_;
    uv_tcp_t tcp_;
    uv_timer_t timer_;
    int open_handles_ = 2;
    char read_buf_[kReadChunk];

    std::string in_;
    Stage stage_ = Stage::Headers;
    size_t scan_from_ = 0;
    size_t pos_ = 0;
    uint64_t content_length_ = 0;
    uint64_t chunk_left_ = 0;
    bool chunked_ = false;
    bool expect_continue_ = false;
    bool sent_continue_ = false;
    HttpRequest req_;
    uint64_t requests_ = 0;  // dispatched on this connection

    bool busy_ = false;  // a delayed response is pending; later requests wait
    HttpResponse pending_;
    bool pending_keep_alive_ = true;
    bool closing_ = false;
    bool shutting_down_ = false;
    bool read_paused_ = false;
    bool peer_eof_ = false;
    bool websocket_ = false;
    WsReader frames_;
};

HttpServer::HttpServer(uv_loop_t* loop, HttpHandler handler, bool quiet)
    : loop_(loop), handler_(std::move(handler)), quiet_(quiet) {}

HttpServer::~HttpServer() = default;

int HttpServer::listen(const std::string& host, int port) {
    struct sockaddr_storage addr;
    std::memset(&addr, 0, sizeof(addr));
    int rc = uv_ip4_addr(host.c_str(), port, reinterpret_cast<struct sockaddr_in*>(&addr));
    if (rc != 0) rc = uv_ip6_addr(host.c_str(), port, reinterpret_cast<struct sockaddr_in6*>(&addr));
    if (rc != 0) return rc;
    uv_tcp_init(loop_, &listener_);
    listener_.data = this;
    listener_open_ = true;
    rc = uv_tcp_bind(&listener_, reinterpret_cast<const struct sockaddr*>(&addr), 0);
    if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), 1024, on_connection);
    return rc;
}

void HttpServer::on_connection(uv_stream_t* listener, int status) {
    auto* self = static_cast<HttpServer*>(listener->data);
    if (status < 0) {
        if (!self->quiet_) std::fprintf(stderr, "solana-sim: accept error: %s\n", uv_strerror(status));
        return;
    }
    auto* conn = new HttpConnection(self);
    if (uv_accept(listener, conn->stream()) != 0) {
        conn->close();  // on_close frees it; forget() of an unknown pointer is harmless
        return;
    }
    uv_tcp_nodelay(reinterpret_cast<uv_tcp_t*>(conn->stream()), 1);
    self->connections_.insert(conn);
    conn->start();
}

void HttpServer::close_all() {
    if (listener_open_) {
        listener_open_ = false;
        uv_close(reinterpret_cast<uv_handle_t*>(&listener_), nullptr);
    }
    // close() only schedules; connections leave the set in their callbacks.
    std::unordered_set<HttpConnection*> snapshot = connections_;
    for (HttpConnection* c : snapshot) c->close();
}

}  // namespace solsim
