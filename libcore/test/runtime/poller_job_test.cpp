// The poller job as a worker runs it: the real thread, libcurl transport
// and clocks over a bound network. Its one upstream listens nowhere
// (127.0.0.1:1), so the poll fails fast and says so in the log; the test
// waits for that line (bounded), not for a time.
#include <gtest/gtest.h>

#include <time.h>

#include <chrono>
#include <cstdlib>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/poller_job.h"
#include "support/fakes.h"

namespace solgate {
namespace {

// Far beyond one refused poll: reaching it fails the test.
constexpr auto kBound = std::chrono::seconds(20);

class LogLines {
public:
    LogSink Sink() {
        return [this](int level, const std::string& line) {
            std::lock_guard<std::mutex> lock(mutex_);
            lines_.push_back({level, line});
            changed_.notify_all();
        };
    }

    bool WaitFor(const std::string& text) {
        std::unique_lock<std::mutex> lock(mutex_);
        return changed_.wait_for(lock, kBound, [&] {
            for (const auto& [level, line] : lines_) {
                if (line.find(text) != std::string::npos) return true;
            }
            return false;
        });
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<std::pair<int, std::string>> lines_;
};

TEST(PollerJob, PollsTheLeasedUpstreamsAndGivesTheLeasesBack) {
    auto shared = std::make_unique<NetworkShared>();
    Network network("mainnet", {});
    network.AddUpstream({"nowhere", {"http://127.0.0.1:1/", "", "", ""}});
    std::string error;
    ASSERT_TRUE(network.Bind(shared.get(), true, 0, &error)) << error;

    LogLines log;
    auto poller = StartPoller({&network}, 4242, nullptr, log.Sink(), &error);
    ASSERT_NE(poller, nullptr) << error;
    ASSERT_TRUE(log.WaitFor("svm state poller: getHealth failed: "
                            "network=mainnet upstream=nowhere"));
    EXPECT_EQ(network.leases().LeaseHolder(0).pid, 4242u);
    EXPECT_GE(network.record(0).host.polls[kPollGetHealth].load(), 1u);
    EXPECT_GE(network.record(0).host.poll_errors[kPollGetHealth].load(), 1u);
    EXPECT_EQ(network.slots().Health(0), HealthOutcome::kFailed);
    poller->Stop();
    EXPECT_EQ(network.leases().LeaseHolder(0).pid, 0u);
}

TEST(PollerJob, StartsWithNothingToPoll) {
    std::string error;
    auto poller = StartPoller({}, 1, nullptr, [](int, const std::string&) {}, &error);
    ASSERT_NE(poller, nullptr) << error;
    poller->Stop();
    poller->Stop();   // twice is harmless
}

TEST(SystemClock, MonotonicAndWallMs) {
    SystemClock clock;
    int64_t a = clock.MonotonicMs();
    int64_t b = clock.MonotonicMs();
    EXPECT_LE(a, b);
    int64_t wall = clock.WallMs();
    int64_t now_s = static_cast<int64_t>(time(nullptr));
    EXPECT_LE(std::abs(wall / 1000 - now_s), 1);
}

}  // namespace
}  // namespace solgate
