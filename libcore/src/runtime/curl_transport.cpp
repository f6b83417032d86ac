#include "runtime/curl_transport.h"

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace solgate {
namespace {

// curl_global_init is not thread-safe and must precede every other libcurl
// call; nginx workers may start pollers concurrently with nothing else
// having initialised libcurl. curl_global_cleanup is deliberately never
// called: it is not thread-safe either, and the process exit reclaims all.
CURLcode InitCurlOncePerProcess() {
    static std::once_flag once;
    static CURLcode result = CURLE_OK;
    std::call_once(once, [] { result = curl_global_init(CURL_GLOBAL_DEFAULT); });
    return result;
}

struct SlistFree {
    void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistFree>;

// curl_slist_append returns NULL on failure and leaves the list intact.
bool AppendLine(Slist& list, const std::string& line) {
    curl_slist* head = curl_slist_append(list.get(), line.c_str());
    if (head == nullptr) return false;
    list.release();
    list.reset(head);
    return true;
}

void FreeTimerOnClose(uv_handle_t* handle) {
    delete reinterpret_cast<uv_timer_t*>(handle);
}

void InvokeDropping(std::function<void(HttpResult)>& done, HttpResult result) {
    if (!done) return;
    try {
        done(std::move(result));
    } catch (...) {
        // A caller's bug must not unwind through libuv's C frames.
    }
}

}  // namespace

// One POST: the easy handle and everything it points into, which libcurl
// does not copy (the body, header lists, error buffer).
struct CurlTransport::Transfer {
    CURL* easy = nullptr;
    Slist headers;
    Slist connect_to;
    std::string request_body;
    std::string response_body;
    bool response_too_large = false;
    size_t max_response_bytes = kMaxResponseBytes;  // this request's cap
    char error_buffer[CURL_ERROR_SIZE] = {};
    std::function<void(HttpResult)> done;

    ~Transfer() {
        // Before the lists and buffers it refers to are freed.
        if (easy != nullptr) curl_easy_cleanup(easy);
    }

    CURLcode Configure(const HttpTarget& target, uint32_t timeout_ms);
    CURLcode ConfigureTls(const TlsSettings& tls);
    std::string ErrorText(CURLcode code) const;
};

// The upstream's tls_* options. The PEM texts are copied into the handle
// (CURL_BLOB_COPY), so the target may go; libcurl keeps a connection for
// reuse only by transfers with the same settings.
CURLcode CurlTransport::Transfer::ConfigureTls(const TlsSettings& tls) {
    CURLcode rc = CURLE_OK;
    auto set = [&](CURLoption option, auto value) {
        if (rc == CURLE_OK) rc = curl_easy_setopt(easy, option, value);
    };
    auto set_pem = [&](CURLoption option, const std::string& pem) {
        curl_blob blob{const_cast<char*>(pem.data()), pem.size(),
                       CURL_BLOB_COPY};
        set(option, &blob);
    };
    set(CURLOPT_SSL_VERIFYPEER, tls.verify ? 1L : 0L);
    set(CURLOPT_SSL_VERIFYHOST, tls.verify ? 2L : 0L);
    if (!tls.trusted_pem.empty()) {
        // these CAs alone, as nginx's proxy_ssl_trusted_certificate: not
        // the system's bundle or directory besides
        set_pem(CURLOPT_CAINFO_BLOB, tls.trusted_pem);
        set(CURLOPT_CAINFO, static_cast<const char*>(nullptr));
        set(CURLOPT_CAPATH, static_cast<const char*>(nullptr));
    }
    if (!tls.certificate_pem.empty()) {
        set(CURLOPT_SSLCERTTYPE, "PEM");
        set_pem(CURLOPT_SSLCERT_BLOB, tls.certificate_pem);
        set(CURLOPT_SSLKEYTYPE, "PEM");
        set_pem(CURLOPT_SSLKEY_BLOB, tls.certificate_key_pem);
    }
    return rc;
}

CURLcode CurlTransport::Transfer::Configure(const HttpTarget& target,
                                            uint32_t timeout_ms) {
    easy = curl_easy_init();
    if (easy == nullptr) return CURLE_OUT_OF_MEMORY;

    // "Expect:" stops libcurl from waiting for "100 Continue" before
    // sending larger bodies: a round trip (or a 1 s stall) for nothing.
    if (!AppendLine(headers, "Content-Type: application/json") ||
        !AppendLine(headers, "Expect:") ||
        (!target.host_header.empty() &&
         !AppendLine(headers, "Host: " + target.host_header)) ||
        (!target.connect_to.empty() &&
         !AppendLine(connect_to, target.connect_to))) {
        return CURLE_OUT_OF_MEMORY;
    }
    for (const std::string& line : target.headers) {
        if (!AppendLine(headers, line)) return CURLE_OUT_OF_MEMORY;
    }
    if (target.max_response_bytes != 0) {
        max_response_bytes = target.max_response_bytes;
    }

    // 0 means "no overall limit" to libcurl; the connect phase keeps its cap
    // so a dead upstream still fails fast.
    const long connect_timeout_ms =
        timeout_ms == 0 ? kMaxConnectTimeoutMs
                        : std::min(timeout_ms, kMaxConnectTimeoutMs);

    CURLcode rc = CURLE_OK;
    auto set = [&](CURLoption option, auto value) {
        if (rc == CURLE_OK) rc = curl_easy_setopt(easy, option, value);
    };
    set(CURLOPT_URL, target.url.c_str());
    set(CURLOPT_PROTOCOLS_STR, "http,https");
    set(CURLOPT_POST, 1L);
    set(CURLOPT_POSTFIELDS, request_body.data());
    set(CURLOPT_POSTFIELDSIZE_LARGE,
        static_cast<curl_off_t>(request_body.size()));
    set(CURLOPT_HTTPHEADER, headers.get());
    if (connect_to) set(CURLOPT_CONNECT_TO, connect_to.get());
    if (!target.user_agent.empty()) {
        set(CURLOPT_USERAGENT, target.user_agent.c_str());
    }
    set(CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    set(CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_ms));
    set(CURLOPT_CONNECTTIMEOUT_MS, connect_timeout_ms);
    // Signals belong to nginx; libcurl must not install handlers or alarms.
    set(CURLOPT_NOSIGNAL, 1L);
    // An http_proxy inherited by nginx must not reroute upstream traffic.
    set(CURLOPT_PROXY, "");
    set(CURLOPT_FOLLOWLOCATION, 0L);
    // Fails early when Content-Length already announces too much; the write
    // callback enforces the same cap for chunked answers.
    set(CURLOPT_MAXFILESIZE_LARGE,
        static_cast<curl_off_t>(max_response_bytes));
    set(CURLOPT_WRITEFUNCTION, &CurlTransport::OnBodyBytes);
    set(CURLOPT_WRITEDATA, static_cast<void*>(this));
    set(CURLOPT_ERRORBUFFER, error_buffer);
    if (rc == CURLE_OK) rc = ConfigureTls(target.tls);
    return rc;
}

std::string CurlTransport::Transfer::ErrorText(CURLcode code) const {
    if (response_too_large || code == CURLE_FILESIZE_EXCEEDED) {
        return "response body larger than " +
               std::to_string(max_response_bytes) + " bytes";
    }
    if (error_buffer[0] != '\0') return error_buffer;
    return curl_easy_strerror(code);
}

// A socket libcurl asked us to watch. Freed by its uv close callback.
struct CurlTransport::SocketWatch {
    uv_poll_t poll;
    CurlTransport* owner = nullptr;
    curl_socket_t fd = CURL_SOCKET_BAD;
};

CurlTransport::CurlTransport(uv_loop_t* loop) : loop_(loop) {
    if (loop_ == nullptr) throw std::invalid_argument("CurlTransport: no loop");
    CURLcode init = InitCurlOncePerProcess();
    if (init != CURLE_OK) {
        throw std::runtime_error(std::string("curl_global_init: ") +
                                 curl_easy_strerror(init));
    }
    // Everything that can fail happens before a handle joins the loop, so a
    // throw leaves nothing registered behind.
    auto curl_timer = std::make_unique<uv_timer_t>();
    auto deferred_timer = std::make_unique<uv_timer_t>();
    multi_ = curl_multi_init();
    if (multi_ == nullptr) throw std::runtime_error("curl_multi_init failed");
    CURLMcode rc = CURLM_OK;
    auto set = [&](CURLMoption option, auto value) {
        if (rc == CURLM_OK) rc = curl_multi_setopt(multi_, option, value);
    };
    set(CURLMOPT_SOCKETFUNCTION, &CurlTransport::OnCurlSocket);
    set(CURLMOPT_SOCKETDATA, static_cast<void*>(this));
    set(CURLMOPT_TIMERFUNCTION, &CurlTransport::OnCurlTimer);
    set(CURLMOPT_TIMERDATA, static_cast<void*>(this));
    // libcurl's default cache size is 4 x the handles currently added, which
    // is smallest exactly when staggered answers hand their connections
    // back: with more than a few upstreams, keep-alive connections would be
    // evicted every tick and reopened on the next.
    set(CURLMOPT_MAXCONNECTS, static_cast<long>(kMaxCachedConnections));
    if (rc != CURLM_OK) {
        std::string what = curl_multi_strerror(rc);
        curl_multi_cleanup(multi_);
        throw std::runtime_error("curl_multi_setopt: " + what);
    }

    uv_timer_init(loop_, curl_timer.get());  // cannot fail
    uv_timer_init(loop_, deferred_timer.get());
    curl_timer_ = curl_timer.release();
    deferred_timer_ = deferred_timer.release();
    curl_timer_->data = this;
    deferred_timer_->data = this;
}

CurlTransport::~CurlTransport() {
    // Removing an in-flight transfer closes its connection; libcurl reports
    // that through OnCurlSocket, which still works here.
    for (auto& entry : transfers_) curl_multi_remove_handle(multi_, entry.first);
    transfers_.clear();
    deferred_.clear();  // never reported, as the Transport contract says
    // Closes the cached keep-alive connections.
    curl_multi_cleanup(multi_);
    multi_ = nullptr;

    // Whatever libcurl did not report as removed: its fds are closed by now
    // and the watches only need to leave the loop.
    std::vector<SocketWatch*> leftovers(watches_.begin(), watches_.end());
    for (SocketWatch* watch : leftovers) StopWatching(watch);
    uv_close(reinterpret_cast<uv_handle_t*>(curl_timer_), FreeTimerOnClose);
    uv_close(reinterpret_cast<uv_handle_t*>(deferred_timer_), FreeTimerOnClose);
}

void CurlTransport::Post(const HttpTarget& target, std::string body,
                         uint32_t timeout_ms,
                         std::function<void(HttpResult)> done) {
    auto transfer = std::make_unique<Transfer>();
    transfer->request_body = std::move(body);
    transfer->done = std::move(done);
    CURLcode rc = transfer->Configure(target, timeout_ms);
    if (rc != CURLE_OK) {
        std::string text = transfer->ErrorText(rc);
        FailLater(std::move(transfer->done), rc, std::move(text));
        return;
    }
    CURL* easy = transfer->easy;
    transfers_.emplace(easy, std::move(transfer));
    // Safe from inside a `done` callback: those run after
    // curl_multi_socket_action has returned, never inside libcurl.
    CURLMcode added = curl_multi_add_handle(multi_, easy);
    if (added != CURLM_OK) {
        auto node = transfers_.extract(easy);
        FailLater(std::move(node.mapped()->done), CURLE_FAILED_INIT,
                  std::string("curl_multi_add_handle: ") +
                      curl_multi_strerror(added));
    }
}

// Setup failures are reported from the loop like any other result, so a
// caller never sees its callback run inside its own Post() call.
void CurlTransport::FailLater(std::function<void(HttpResult)> done, int code,
                              std::string text) {
    Completion completion;
    completion.done = std::move(done);
    completion.result.transport_error = code;
    completion.result.error_text = std::move(text);
    deferred_.push_back(std::move(completion));
    uv_timer_start(deferred_timer_, &CurlTransport::OnDeferredTimerExpired, 0, 0);
}

int CurlTransport::OnCurlSocket(CURL* /*easy*/, curl_socket_t fd, int what,
                                void* transport, void* watch) {
    auto* self = static_cast<CurlTransport*>(transport);
    auto* known = static_cast<SocketWatch*>(watch);
    try {
        if (what == CURL_POLL_REMOVE) {
            if (known != nullptr) self->StopWatching(known);
            return 0;
        }
        return self->WatchSocket(fd, what, known);
    } catch (...) {
        // -1 makes libcurl fail the transfers (and, in older versions, is
        // ignored: the transfer then ends at its timeout).
        return -1;
    }
}

int CurlTransport::WatchSocket(curl_socket_t fd, int what, SocketWatch* watch) {
    if (watch == nullptr) {
        auto fresh = std::make_unique<SocketWatch>();
        fresh->owner = this;
        fresh->fd = fd;
        watches_.insert(fresh.get());
        int rc = uv_poll_init_socket(loop_, &fresh->poll, fd);
        if (rc == UV_EEXIST) {
            // libcurl 7.88 sometimes closes a socket before reporting
            // CURL_POLL_REMOVE; if the fd number came back before that
            // report, the old watch still claims it in the loop. libcurl no
            // longer knows that socket (it passed no watch), so retire it.
            RetireStaleWatch(fd, fresh.get());
            rc = uv_poll_init_socket(loop_, &fresh->poll, fd);
        }
        if (rc != 0) {
            // A failed init registers nothing with the loop.
            watches_.erase(fresh.get());
            return -1;
        }
        fresh->poll.data = fresh.get();
        watch = fresh.release();
        curl_multi_assign(multi_, fd, watch);
    }
    int events = 0;
    if (what & CURL_POLL_IN) events |= UV_READABLE;
    if (what & CURL_POLL_OUT) events |= UV_WRITABLE;
    return uv_poll_start(&watch->poll, events, &CurlTransport::OnSocketReady) == 0
               ? 0
               : -1;
}

void CurlTransport::RetireStaleWatch(curl_socket_t fd, SocketWatch* keep) {
    for (SocketWatch* watch : watches_) {
        if (watch != keep && watch->fd == fd) {
            StopWatching(watch);  // invalidates the iteration: stop here
            return;
        }
    }
}

void CurlTransport::StopWatching(SocketWatch* watch) {
    watches_.erase(watch);
    uv_poll_stop(&watch->poll);
    uv_close(reinterpret_cast<uv_handle_t*>(&watch->poll),
             &CurlTransport::FreeWatchOnClose);
}

void CurlTransport::FreeWatchOnClose(uv_handle_t* handle) {
    delete static_cast<SocketWatch*>(handle->data);
}

int CurlTransport::OnCurlTimer(CURLM* /*multi*/, long timeout_ms,
                               void* transport) {
    // libcurl forbids calling curl_multi_socket_action from here, so even a
    // 0 ms timeout goes through the loop.
    auto* self = static_cast<CurlTransport*>(transport);
    if (timeout_ms < 0) {
        uv_timer_stop(self->curl_timer_);
    } else {
        uv_timer_start(self->curl_timer_, &CurlTransport::OnCurlTimerExpired,
                       static_cast<uint64_t>(timeout_ms), 0);
    }
    return 0;
}

void CurlTransport::OnCurlTimerExpired(uv_timer_t* timer) {
    auto* self = static_cast<CurlTransport*>(timer->data);
    try {
        self->DriveCurl(CURL_SOCKET_TIMEOUT, 0);
    } catch (...) {
    }
}

void CurlTransport::OnSocketReady(uv_poll_t* poll, int status, int events) {
    auto* watch = static_cast<SocketWatch*>(poll->data);
    int flags = 0;
    if (status < 0) {
        // libuv stops the poll on error; libcurl learns why from the socket.
        flags = CURL_CSELECT_ERR;
    } else {
        if (events & UV_READABLE) flags |= CURL_CSELECT_IN;
        if (events & UV_WRITABLE) flags |= CURL_CSELECT_OUT;
    }
    try {
        watch->owner->DriveCurl(watch->fd, flags);
    } catch (...) {
    }
}

void CurlTransport::OnDeferredTimerExpired(uv_timer_t* timer) {
    auto* self = static_cast<CurlTransport*>(timer->data);
    try {
        std::vector<Completion> ready;
        ready.swap(self->deferred_);
        self->Deliver(std::move(ready));
    } catch (...) {
    }
}

void CurlTransport::DriveCurl(curl_socket_t fd, int ev_bitmask) {
    int running = 0;
    curl_multi_socket_action(multi_, fd, ev_bitmask, &running);
    std::vector<Completion> finished;
    CollectFinished(&finished);
    Deliver(std::move(finished));
}

void CurlTransport::CollectFinished(std::vector<Completion>* out) {
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi_, &queued)) {
        if (msg->msg != CURLMSG_DONE) continue;
        // The message dies with curl_multi_remove_handle: copy it first.
        CURL* easy = msg->easy_handle;
        CURLcode code = msg->data.result;
        curl_multi_remove_handle(multi_, easy);
        auto node = transfers_.extract(easy);
        if (node.empty()) continue;
        Transfer& transfer = *node.mapped();

        Completion completion;
        completion.done = std::move(transfer.done);
        if (code == CURLE_OK) {
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            completion.result.http_status = status;
            completion.result.body = std::move(transfer.response_body);
        } else {
            completion.result.transport_error = code;
            completion.result.error_text = transfer.ErrorText(code);
        }
        out->push_back(std::move(completion));
        // The easy handle is cleaned up here, before any callback runs; the
        // connection stays in the multi handle's cache for reuse.
    }
}

void CurlTransport::Deliver(std::vector<Completion> completions) {
    std::weak_ptr<char> alive = alive_;
    for (Completion& completion : completions) {
        // A callback may destroy the transport; the ones after it must then
        // not run, exactly as if they had still been in flight.
        if (alive.expired()) return;
        InvokeDropping(completion.done, std::move(completion.result));
    }
}

size_t CurlTransport::OnBodyBytes(char* data, size_t size, size_t count,
                                  void* transfer) {
    auto* self = static_cast<Transfer*>(transfer);
    const size_t bytes = size * count;
    if (bytes > self->max_response_bytes - self->response_body.size()) {
        self->response_too_large = true;
        return 0;  // anything but `bytes` aborts with CURLE_WRITE_ERROR
    }
    try {
        self->response_body.append(data, bytes);
    } catch (...) {
        return 0;
    }
    return bytes;
}

}  // namespace solgate
