// CurlTransport, the real libcurl-on-libuv transport, against a tiny
// HTTP/1.1 server on 127.0.0.1 (an ephemeral port) that runs on its own
// thread. Loopback only; every wait is bounded by the transport's own
// timeout or by a watchdog on the loop, never a sleep.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <cctype>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/tls_failure.h"
#include "runtime/curl_transport.h"

namespace solgate {
namespace {

// Far beyond any exchange here: reaching it is a failure, not a wait.
constexpr uint64_t kWatchdogMs = 10000;
constexpr uint32_t kTimeoutMs = 5000;   // the transport's, per request

std::string Lower(std::string text) {
    for (char& c : text) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return text;
}

// A libuv loop for one test: runs until something holds, for at most
// kWatchdogMs, and checks at the end that nothing was left on it.
class TestLoop {
public:
    TestLoop() {
        uv_loop_init(&loop_);
        uv_timer_init(&loop_, &watchdog_);
        watchdog_.data = this;
        // Neither keeps the loop alive: only the transport's handles do.
        uv_unref(reinterpret_cast<uv_handle_t*>(&watchdog_));
        uv_async_init(&loop_, &wake_, [](uv_async_t*) {});
        uv_unref(reinterpret_cast<uv_handle_t*>(&wake_));
    }
    ~TestLoop() {
        uv_close(reinterpret_cast<uv_handle_t*>(&watchdog_), nullptr);
        uv_close(reinterpret_cast<uv_handle_t*>(&wake_), nullptr);
        uv_run(&loop_, UV_RUN_DEFAULT);
        EXPECT_EQ(uv_loop_close(&loop_), 0) << "handles left on the loop";
    }
    TestLoop(const TestLoop&) = delete;
    TestLoop& operator=(const TestLoop&) = delete;

    uv_loop_t* get() { return &loop_; }

    // Makes a RunUntil on the loop's thread look at its condition again;
    // from any thread.
    void Wake() { uv_async_send(&wake_); }

    // Runs the loop until held() is true; whether it became true.
    bool RunUntil(const std::function<bool()>& held) {
        StartWatchdog();
        while (!held() && !expired_ && uv_run(&loop_, UV_RUN_ONCE) != 0) {
        }
        uv_timer_stop(&watchdog_);
        return held();
    }

    // Runs the loop until nothing is left on it (the transport's close
    // callbacks included); false when the watchdog had to stop it.
    bool Drain() {
        StartWatchdog();
        uv_run(&loop_, UV_RUN_DEFAULT);
        uv_timer_stop(&watchdog_);
        return !expired_;
    }

private:
    void StartWatchdog() {
        expired_ = false;
        uv_timer_start(
            &watchdog_,
            [](uv_timer_t* timer) {
                auto* self = static_cast<TestLoop*>(timer->data);
                self->expired_ = true;
                uv_stop(&self->loop_);
            },
            kWatchdogMs, 0);
    }

    uv_loop_t loop_;
    uv_timer_t watchdog_;
    uv_async_t wake_;
    bool expired_ = false;
};

// A TCP socket bound to an ephemeral port on 127.0.0.1: its descriptor
// and *port, or -1 (the test has failed then).
int BindLoopback(uint16_t* port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        ADD_FAILURE() << "cannot bind 127.0.0.1";
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    *port = ntohs(addr.sin_port);
    return fd;
}

// An HTTP/1.1 server on 127.0.0.1, one connection at a time: it reads a
// request (head and Content-Length body), answers with what `answer`
// returns and closes the connection. nullopt leaves the connection open
// and unanswered until the server is destroyed.
class TinyHttpServer {
public:
    using Answer =
        std::function<std::optional<std::string>(const std::string& request)>;

    TinyHttpServer(Answer answer, std::function<void()> on_request)
        : answer_(std::move(answer)), on_request_(std::move(on_request)) {
        listen_fd_ = BindLoopback(&port_);
        if (listen_fd_ < 0 || listen(listen_fd_, 16) != 0 ||
            pipe2(stop_, O_CLOEXEC) != 0) {
            ADD_FAILURE() << "cannot listen on 127.0.0.1";
            return;
        }
        thread_ = std::thread([this] { Serve(); });
    }

    ~TinyHttpServer() {
        if (thread_.joinable()) {
            char byte = 0;
            EXPECT_EQ(write(stop_[1], &byte, 1), 1);
            thread_.join();
        }
        for (int fd : held_) {
            close(fd);
        }
        for (int fd : {listen_fd_, stop_[0], stop_[1]}) {
            if (fd >= 0) {
                close(fd);
            }
        }
    }
    TinyHttpServer(const TinyHttpServer&) = delete;
    TinyHttpServer& operator=(const TinyHttpServer&) = delete;

    uint16_t port() const { return port_; }
    std::string Url(const std::string& path = "/") const {
        return "http://127.0.0.1:" + std::to_string(port_) + path;
    }

    // The requests received so far, head and body as they arrived.
    std::vector<std::string> Requests() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }

private:
    void Serve() {
        for (;;) {
            pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {stop_[0], POLLIN, 0}};
            if (poll(fds, 2, -1) < 0 || fds[1].revents != 0) {
                return;
            }
            int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) {
                continue;
            }
            std::string request;
            if (!ReadRequest(fd, &request)) {
                close(fd);
                continue;
            }
            {
                std::lock_guard<std::mutex> lock(mutex_);
                requests_.push_back(request);
            }
            std::optional<std::string> response = answer_(request);
            on_request_();
            if (!response) {
                held_.push_back(fd);
                continue;
            }
            SendAll(fd, *response);
            close(fd);
        }
    }

    // False when the client went away or the server is stopping first.
    bool ReadRequest(int fd, std::string* request) {
        size_t wanted = std::string::npos;
        while (request->size() < wanted) {
            pollfd fds[2] = {{fd, POLLIN, 0}, {stop_[0], POLLIN, 0}};
            if (poll(fds, 2, -1) < 0 || fds[1].revents != 0) {
                return false;
            }
            char buffer[65536];
            ssize_t n = read(fd, buffer, sizeof buffer);
            if (n <= 0) {
                return false;
            }
            request->append(buffer, static_cast<size_t>(n));
            size_t head_end = request->find("\r\n\r\n");
            if (wanted == std::string::npos && head_end != std::string::npos) {
                wanted = head_end + 4 + ContentLength(*request);
            }
        }
        return true;
    }

    static size_t ContentLength(const std::string& request) {
        std::string head = Lower(request.substr(0, request.find("\r\n\r\n")));
        size_t at = head.find("\r\ncontent-length:");
        return at == std::string::npos
                   ? 0
                   : std::stoul(head.substr(at + 17));
    }

    // MSG_NOSIGNAL: a client that hung up must not raise SIGPIPE.
    static void SendAll(int fd, const std::string& bytes) {
        size_t sent = 0;
        while (sent < bytes.size()) {
            ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent,
                             MSG_NOSIGNAL);
            if (n <= 0) {
                return;
            }
            sent += static_cast<size_t>(n);
        }
    }

    Answer answer_;
    std::function<void()> on_request_;
    int listen_fd_ = -1;
    int stop_[2] = {-1, -1};
    uint16_t port_ = 0;
    std::thread thread_;
    std::vector<int> held_;   // the server thread's, until it has joined
    mutable std::mutex mutex_;
    std::vector<std::string> requests_;
};

std::string Response(int status, const std::string& body,
                     const std::string& reason = "OK") {
    return "HTTP/1.1 " + std::to_string(status) + " " + reason +
           "\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" +
           body;
}

// The body in chunks of `piece` bytes, without a Content-Length.
std::string ChunkedResponse(const std::string& body, size_t piece) {
    std::string out =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
        "Connection: close\r\n\r\n";
    for (size_t at = 0; at < body.size(); at += piece) {
        std::string chunk = body.substr(at, piece);
        char size[32];
        std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
        out += size + chunk + "\r\n";
    }
    return out + "0\r\n\r\n";
}

// A port on 127.0.0.1 that refuses connections: bound, never listening,
// and held for the test so nothing else takes it.
class RefusingPort {
public:
    RefusingPort() : fd_(BindLoopback(&port_)) {}
    ~RefusingPort() {
        if (fd_ >= 0) {
            close(fd_);
        }
    }
    uint16_t port() const { return port_; }

private:
    uint16_t port_ = 0;   // before fd_: BindLoopback sets it
    int fd_ = -1;
};

class CurlTransportTest : public ::testing::Test {
protected:
    void TearDown() override {
        transport_.reset();
        EXPECT_TRUE(loop_.Drain());
    }

    // A server answering every request with `answer(request)`.
    void Serve(TinyHttpServer::Answer answer) {
        server_ = std::make_unique<TinyHttpServer>(std::move(answer),
                                                   [this] { loop_.Wake(); });
    }
    void ServeAlways(const std::string& response) {
        Serve([response](const std::string&) { return response; });
    }

    // Posts and runs the loop until the answer is in.
    HttpResult Exchange(const HttpTarget& target,
                        const std::string& body = kBody,
                        uint32_t timeout_ms = kTimeoutMs) {
        std::optional<HttpResult> result;
        transport_->Post(target, body, timeout_ms,
                         [&](HttpResult r) { result = std::move(r); });
        EXPECT_TRUE(loop_.RunUntil([&] { return result.has_value(); }));
        return result.value_or(HttpResult{});
    }

    HttpTarget Target(const std::string& path = "/") const {
        HttpTarget target;
        target.url = server_->Url(path);
        return target;
    }

    std::string OnlyRequest() const {
        std::vector<std::string> requests = server_->Requests();
        EXPECT_EQ(requests.size(), 1u);
        return requests.empty() ? "" : requests[0];
    }

    static constexpr const char* kBody =
        R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})";

    TestLoop loop_;   // destroyed last: the transport's handles close on it
    std::unique_ptr<TinyHttpServer> server_;
    std::unique_ptr<CurlTransport> transport_ =
        std::make_unique<CurlTransport>(loop_.get());
};

TEST_F(CurlTransportTest, PostsJsonAndDeliversTheAnswer) {
    std::string answer = R"({"jsonrpc":"2.0","result":312,"id":1})";
    ServeAlways(Response(200, answer));
    std::thread::id loop_thread = std::this_thread::get_id();
    std::optional<HttpResult> result;
    std::thread::id ran_on;
    transport_->Post(Target("/rpc"), kBody, kTimeoutMs, [&](HttpResult r) {
        ran_on = std::this_thread::get_id();
        result = std::move(r);
    });
    EXPECT_FALSE(result);   // never from inside Post
    EXPECT_EQ(transport_->InFlight(), 1u);
    ASSERT_TRUE(loop_.RunUntil([&] { return result.has_value(); }));
    EXPECT_EQ(ran_on, loop_thread);
    EXPECT_EQ(result->transport_error, 0);
    EXPECT_EQ(result->error_text, "");
    EXPECT_EQ(result->http_status, 200);
    EXPECT_EQ(result->body, answer);
    EXPECT_EQ(transport_->InFlight(), 0u);

    std::string request = OnlyRequest();
    EXPECT_EQ(request.rfind("POST /rpc HTTP/1.1\r\n", 0), 0u) << request;
    std::string head = Lower(request);
    EXPECT_NE(head.find("\r\ncontent-type: application/json\r\n"),
              std::string::npos);
    EXPECT_NE(head.find("\r\ncontent-length: " +
                        std::to_string(std::string(kBody).size()) + "\r\n"),
              std::string::npos);
    EXPECT_EQ(request.substr(request.size() - std::string(kBody).size()),
              kBody);
}

TEST_F(CurlTransportTest, ALargeBodyGoesWithoutWaitingFor100Continue) {
    ServeAlways(Response(200, "{}"));
    // libcurl would ask for "100 Continue" above 1 MiB.
    std::string big = R"({"jsonrpc":"2.0","id":1,"method":"x","params":[")" +
                      std::string(1100 * 1024, 'p') + R"("]})";
    HttpResult result = Exchange(Target(), big);
    EXPECT_EQ(result.http_status, 200);
    std::string request = OnlyRequest();
    EXPECT_EQ(Lower(request).find("\r\nexpect:"), std::string::npos);
    EXPECT_EQ(request.substr(request.find("\r\n\r\n") + 4), big);
}

TEST_F(CurlTransportTest, ALargeAnswerArrivesWhole) {
    std::string answer = R"({"jsonrpc":"2.0","result":")" +
                         std::string(300 * 1024, 'r') + R"(","id":1})";
    ServeAlways(Response(200, answer));
    HttpResult result = Exchange(Target());
    EXPECT_EQ(result.transport_error, 0) << result.error_text;
    EXPECT_EQ(result.body, answer);
}

TEST_F(CurlTransportTest, AnHttpErrorIsAnAnswerWithItsBody) {
    ServeAlways(Response(503, "overloaded", "Service Unavailable"));
    HttpResult result = Exchange(Target());
    EXPECT_EQ(result.transport_error, 0);
    EXPECT_EQ(result.http_status, 503);
    EXPECT_EQ(result.body, "overloaded");
}

TEST_F(CurlTransportTest, SendsTheHostUserAgentAndExtraHeaders) {
    ServeAlways(Response(200, "{}"));
    HttpTarget target = Target();
    target.host_header = "sim_a";
    target.user_agent = "solgate-poller/test";
    target.headers = {"X-Api-Key: secret-1", "X-Solgate-Poll: 1"};
    EXPECT_EQ(Exchange(target).http_status, 200);
    std::string request = OnlyRequest();
    EXPECT_NE(request.find("\r\nHost: sim_a\r\n"), std::string::npos)
        << request;
    EXPECT_EQ(request.find("Host: 127.0.0.1"), std::string::npos);
    EXPECT_NE(request.find("\r\nUser-Agent: solgate-poller/test\r\n"),
              std::string::npos);
    EXPECT_NE(request.find("\r\nX-Api-Key: secret-1\r\n"), std::string::npos);
    EXPECT_NE(request.find("\r\nX-Solgate-Poll: 1\r\n"), std::string::npos);
}

TEST_F(CurlTransportTest, ConnectToReachesAnUpstreamByItsBlockName) {
    ServeAlways(Response(200, "{}"));
    HttpTarget target;
    target.url = "http://sim_a:8899/v1";
    target.connect_to =
        "sim_a:8899:127.0.0.1:" + std::to_string(server_->port());
    HttpResult result = Exchange(target);
    EXPECT_EQ(result.transport_error, 0) << result.error_text;
    EXPECT_EQ(result.http_status, 200);
    std::string request = OnlyRequest();
    EXPECT_EQ(request.rfind("POST /v1 HTTP/1.1\r\n", 0), 0u) << request;
    EXPECT_NE(request.find("\r\nHost: sim_a:8899\r\n"), std::string::npos);
}

// The tls_* settings reach libcurl: PEM texts it cannot load fail before
// any byte of TLS is sent, each as the TLS failure it is (t/135-tls.t
// runs real handshakes with a test CA).
TEST_F(CurlTransportTest, TheTrustedCertificatesAreTheUpstreamsOwn) {
    ServeAlways(Response(200, "{}"));
    HttpTarget target;
    target.url = "https://127.0.0.1:" + std::to_string(server_->port()) + "/";
    target.tls.trusted_pem = "-----BEGIN CERTIFICATE-----\nnot base64\n";
    HttpResult result = Exchange(target);
    EXPECT_EQ(result.transport_error, CURLE_SSL_CACERT_BADFILE)
        << result.error_text;
    EXPECT_EQ(TlsProblemOf(result), TlsProblem::kOther);
    EXPECT_EQ(TlsFailureText(result), "TLS: " + result.error_text);
}

TEST_F(CurlTransportTest, TheClientCertificateIsPresentedFromItsText) {
    ServeAlways(Response(200, "{}"));
    HttpTarget target;
    target.url = "https://127.0.0.1:" + std::to_string(server_->port()) + "/";
    target.tls.verify = false;
    target.tls.certificate_pem = "-----BEGIN CERTIFICATE-----\nnot base64\n";
    target.tls.certificate_key_pem = "-----BEGIN PRIVATE KEY-----\nno\n";
    HttpResult result = Exchange(target);
    EXPECT_EQ(result.transport_error, CURLE_SSL_CERTPROBLEM)
        << result.error_text;
    EXPECT_EQ(TlsProblemOf(result), TlsProblem::kClientCertificate);
    EXPECT_TRUE(server_->Requests().empty());
}

TEST_F(CurlTransportTest, ASilentServerTimesOut) {
    Serve([](const std::string&) { return std::nullopt; });
    HttpResult result = Exchange(Target(), kBody, 200);
    EXPECT_EQ(result.transport_error, CURLE_OPERATION_TIMEDOUT);
    EXPECT_NE(result.error_text, "");
    EXPECT_EQ(result.http_status, 0);
    EXPECT_EQ(transport_->InFlight(), 0u);
}

TEST_F(CurlTransportTest, AnAnnouncedAnswerOverTheCapFails) {
    ServeAlways(Response(200, std::string(1000, 'x')));
    HttpTarget target = Target();
    target.max_response_bytes = 100;
    HttpResult result = Exchange(target);
    EXPECT_EQ(result.transport_error, CURLE_FILESIZE_EXCEEDED);
    EXPECT_EQ(result.error_text, "response body larger than 100 bytes");
    EXPECT_EQ(result.body, "");
}

TEST_F(CurlTransportTest, AChunkedAnswerOverTheCapFails) {
    ServeAlways(ChunkedResponse(std::string(1000, 'x'), 64));
    HttpTarget target = Target();
    target.max_response_bytes = 100;
    HttpResult result = Exchange(target);
    // libcurl may catch it itself or leave it to the body callback.
    EXPECT_TRUE(result.transport_error == CURLE_WRITE_ERROR ||
                result.transport_error == CURLE_FILESIZE_EXCEEDED)
        << result.transport_error;
    EXPECT_EQ(result.error_text, "response body larger than 100 bytes");
}

TEST_F(CurlTransportTest, AnAnswerOfExactlyTheCapPasses) {
    std::string body(100, 'x');
    ServeAlways(ChunkedResponse(body, 30));
    HttpTarget target = Target();
    target.max_response_bytes = 100;
    HttpResult result = Exchange(target);
    EXPECT_EQ(result.transport_error, 0) << result.error_text;
    EXPECT_EQ(result.body, body);
}

TEST_F(CurlTransportTest, ARefusedConnectionIsATransportError) {
    RefusingPort refusing;
    HttpTarget target;
    target.url = "http://127.0.0.1:" + std::to_string(refusing.port()) + "/";
    HttpResult result = Exchange(target);
    EXPECT_EQ(result.transport_error, CURLE_COULDNT_CONNECT);
    EXPECT_NE(result.error_text, "");
    EXPECT_EQ(result.http_status, 0);
}

TEST_F(CurlTransportTest, OnlyHttpAndHttpsAreSpoken) {
    ServeAlways(Response(200, "{}"));
    HttpTarget target;
    target.url = "ftp://127.0.0.1:" + std::to_string(server_->port()) + "/";
    HttpResult result = Exchange(target);
    EXPECT_EQ(result.transport_error, CURLE_UNSUPPORTED_PROTOCOL);
    EXPECT_TRUE(server_->Requests().empty());
}

TEST_F(CurlTransportTest, ASetupFailureIsReportedFromTheLoop) {
    HttpTarget target;
    // libcurl refuses option strings longer than 8,000,000 bytes.
    target.url = "http://127.0.0.1/" + std::string(8000000, 'a');
    std::optional<HttpResult> result;
    transport_->Post(target, kBody, kTimeoutMs,
                     [&](HttpResult r) { result = std::move(r); });
    EXPECT_FALSE(result);
    ASSERT_TRUE(loop_.RunUntil([&] { return result.has_value(); }));
    EXPECT_EQ(result->transport_error, CURLE_BAD_FUNCTION_ARGUMENT);
    EXPECT_NE(result->error_text, "");
}

TEST_F(CurlTransportTest, APostFromInsideACallbackIsSafe) {
    ServeAlways(Response(200, "{}"));
    std::vector<long> statuses;
    HttpTarget target = Target();
    transport_->Post(target, kBody, kTimeoutMs, [&](HttpResult first) {
        statuses.push_back(first.http_status);
        transport_->Post(target, kBody, kTimeoutMs, [&](HttpResult second) {
            statuses.push_back(second.http_status);
        });
    });
    ASSERT_TRUE(loop_.RunUntil([&] { return statuses.size() == 2; }));
    EXPECT_EQ(statuses, (std::vector<long>{200, 200}));
    EXPECT_EQ(server_->Requests().size(), 2u);
}

TEST_F(CurlTransportTest, ACallbackMayDestroyTheTransport) {
    ServeAlways(Response(200, "{}"));
    bool ran = false;
    transport_->Post(Target(), kBody, kTimeoutMs, [&](HttpResult) {
        ran = true;
        transport_.reset();
    });
    ASSERT_TRUE(loop_.RunUntil([&] { return ran; }));
    EXPECT_EQ(transport_, nullptr);
}

TEST_F(CurlTransportTest, NoCallbackRunsAfterTheTransportIsDestroyed) {
    Serve([](const std::string&) { return std::nullopt; });
    RefusingPort refusing;
    HttpTarget refused;
    refused.url = "http://127.0.0.1:" + std::to_string(refusing.port()) + "/";
    HttpTarget bad;
    bad.url = "http://127.0.0.1/" + std::string(8000000, 'a');
    int callbacks = 0;
    auto count = [&](HttpResult) { callbacks++; };
    transport_->Post(Target(), kBody, 0, count);
    transport_->Post(Target(), kBody, 0, count);
    // Both requests are at the server, waiting for answers that never come.
    ASSERT_TRUE(loop_.RunUntil([&] { return server_->Requests().size() == 2; }));
    transport_->Post(refused, kBody, 0, count);   // not connected yet
    transport_->Post(bad, kBody, 0, count);       // failure not reported yet
    EXPECT_EQ(transport_->InFlight(), 4u);
    transport_.reset();
    EXPECT_TRUE(loop_.Drain());
    EXPECT_EQ(callbacks, 0);
}

}  // namespace
}  // namespace solgate
