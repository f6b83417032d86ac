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

TEST(RedisStore, ARefusedConnectionIsLoggedAsRefused) {
    uv_loop_t loop;
    ASSERT_EQ(uv_loop_init(&loop), 0);
    std::vector<std::string> lines;
    {
        FleetConf conf;
        conf.host = "127.0.0.1";
        conf.port = ClosedPort();
        conf.timeout_ms = 50;
        conf.host_id = "test";
        RedisStore store(&loop, conf, [&lines](int, const std::string& l) {
            lines.push_back(l);
        });
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

}  // namespace
}  // namespace solgate
