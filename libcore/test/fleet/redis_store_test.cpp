// RedisStore over a real loopback socket, without a Redis server: what an
// operator reads when the server is not there.
#include "fleet/redis_store.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <string>
#include <vector>

namespace solgate {
namespace {

// A loopback port nothing listens on (bound, then closed).
uint16_t ClosedPort() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    close(fd);
    return ntohs(a.sin_port);
}

FleetConf LoopbackConf(uint16_t port, uint32_t timeout_ms) {
    FleetConf conf;
    conf.host = "127.0.0.1";
    conf.port = port;
    conf.timeout_ms = timeout_ms;
    conf.host_id = "test";
    return conf;
}

// The store's log lines, into *lines.
LogSink Collect(std::vector<std::string>* lines) {
    return [lines](int, const std::string& l) { lines->push_back(l); };
}

TEST(RedisStore, ARefusedConnectionIsLoggedAsRefused) {
    uv_loop_t loop;
    ASSERT_EQ(uv_loop_init(&loop), 0);
    std::vector<std::string> lines;
    {
        FleetConf conf = LoopbackConf(ClosedPort(), 50);
        RedisStore store(&loop, conf, Collect(&lines));
        int64_t now = 0;
        for (int i = 0; i < 20 && lines.empty(); i++) {
            store.Tick(now);
            uv_run(&loop, UV_RUN_NOWAIT);
            usleep(10000);
            now += 30;
        }
        EXPECT_FALSE(store.Up());
        ASSERT_EQ(lines.size(), 1u);
        EXPECT_NE(lines[0].find("unavailable (Connection refused)"),
                  std::string::npos)
            << lines[0];
        // one line per outage, however many attempts fail
        for (int i = 0; i < 20; i++) {
            store.Tick(now);
            uv_run(&loop, UV_RUN_NOWAIT);
            now += 300;
        }
        EXPECT_EQ(lines.size(), 1u);
    }
    uv_run(&loop, UV_RUN_NOWAIT);   // the closed handles' callbacks
    EXPECT_EQ(uv_loop_close(&loop), 0);
}

// A server that accepts and answers every command NOAUTH, as a Redis
// restarted with a password the host does not have.
class RefusingServer {
public:
    explicit RefusingServer(uint16_t port) {
        fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        int one = 1;
        setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        listening_ = bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
                     listen(fd_, 8) == 0;
    }
    ~RefusingServer() {
        for (int c : clients_) {
            close(c);
        }
        close(fd_);
    }
    bool listening() const { return listening_; }
    // Accepts and answers what arrived (non-blocking).
    void Serve() {
        int c;
        while ((c = accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK)) >= 0) {
            clients_.push_back(c);
        }
        for (int client : clients_) {
            char buf[512];
            if (recv(client, buf, sizeof(buf), 0) > 0) {
                static const char kNoAuth[] =
                    "-NOAUTH Authentication required.\r\n";
                send(client, kNoAuth, sizeof(kNoAuth) - 1, MSG_NOSIGNAL);
            }
        }
    }

private:
    int fd_ = -1;
    bool listening_ = false;
    std::vector<int> clients_;
};

// Down, then back but refusing this host: the new cause is logged once
// more (a warning), so the operator does not look for a server that is
// already up.
TEST(RedisStore, ANewCauseOfTheSameOutageIsLoggedOnce) {
    uv_loop_t loop;
    ASSERT_EQ(uv_loop_init(&loop), 0);
    std::vector<std::string> lines;
    {
        FleetConf conf = LoopbackConf(ClosedPort(), 200);
        RedisStore store(&loop, conf, Collect(&lines));
        int64_t now = 0;
        auto run = [&](RefusingServer* server, size_t until_lines) {
            for (int i = 0; i < 300 && lines.size() < until_lines; i++) {
                store.Tick(now);
                uv_run(&loop, UV_RUN_NOWAIT);
                if (server != nullptr) {
                    server->Serve();
                }
                uv_run(&loop, UV_RUN_NOWAIT);
                usleep(5000);
                now += 50;
            }
        };
        run(nullptr, 1);
        ASSERT_EQ(lines.size(), 1u);
        EXPECT_NE(lines[0].find("unavailable (Connection refused)"),
                  std::string::npos) << lines[0];
        RefusingServer server(conf.port);
        ASSERT_TRUE(server.listening());
        run(&server, 2);
        ASSERT_EQ(lines.size(), 2u);
        EXPECT_NE(lines[1].find("still unavailable, now: it answered NOAUTH"),
                  std::string::npos) << lines[1];
        // the same cause again and again: nothing more
        for (int i = 0; i < 40; i++) {
            store.Tick(now);
            uv_run(&loop, UV_RUN_NOWAIT);
            server.Serve();
            uv_run(&loop, UV_RUN_NOWAIT);
            now += 300;
        }
        EXPECT_EQ(lines.size(), 2u);
        EXPECT_FALSE(store.Up());
    }
    uv_run(&loop, UV_RUN_NOWAIT);   // the closed handles' callbacks
    EXPECT_EQ(uv_loop_close(&loop), 0);
}

}  // namespace
}  // namespace solgate
