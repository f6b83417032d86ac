// PollerThread: start-up, the immediate first tick, which thread owns the
// job, and tear-down. No sockets; waits are bounded condition waits.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <uv.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "runtime/loop_job.h"
#include "runtime/poller_thread.h"

namespace solgate {
namespace {

using std::chrono::milliseconds;

constexpr uint64_t kLongInterval = 60000;  // only the immediate tick fires
constexpr milliseconds kWaitBound{2000};

// What the fake job saw, shared with the test because the job itself is
// destroyed on the poller thread.
struct JobRecord {
    std::mutex mutex;
    std::condition_variable changed;
    int ticks = 0;
    int throw_on_first_ticks = 0;
    bool destroyed = false;
    uv_loop_t* loop = nullptr;
    std::thread::id built_on;
    std::thread::id ticked_on;
    std::thread::id destroyed_on;
    std::string thread_name;
    bool all_signals_blocked = false;

    bool WaitFor(int wanted_ticks) {
        std::unique_lock<std::mutex> lock(mutex);
        return changed.wait_for(lock, kWaitBound,
                                [&] { return ticks >= wanted_ticks; });
    }
};

bool AllSignalsBlockedHere() {
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
                    SIGCHLD, SIGALRM, SIGPIPE, SIGWINCH, SIGIO}) {
        if (!sigismember(&mask, sig)) return false;
    }
    return true;
}

class CountingJob : public LoopJob {
public:
    explicit CountingJob(std::shared_ptr<JobRecord> record)
        : record_(std::move(record)) {}

    ~CountingJob() override {
        std::lock_guard<std::mutex> lock(record_->mutex);
        record_->destroyed = true;
        record_->destroyed_on = std::this_thread::get_id();
    }

    void Tick() override {
        bool throw_now;
        {
            std::lock_guard<std::mutex> lock(record_->mutex);
            ++record_->ticks;
            record_->ticked_on = std::this_thread::get_id();
            throw_now = record_->ticks <= record_->throw_on_first_ticks;
        }
        record_->changed.notify_all();
        if (throw_now) throw std::runtime_error("tick failed");
    }

private:
    std::shared_ptr<JobRecord> record_;
};

LoopJobFactory CountingFactory(std::shared_ptr<JobRecord> record) {
    return [record](uv_loop_t* loop) -> std::unique_ptr<LoopJob> {
        std::lock_guard<std::mutex> lock(record->mutex);
        record->loop = loop;
        record->built_on = std::this_thread::get_id();
        char name[32] = {};
        pthread_getname_np(pthread_self(), name, sizeof name);
        record->thread_name = name;
        record->all_signals_blocked = AllSignalsBlockedHere();
        return std::make_unique<CountingJob>(record);
    };
}

TEST(PollerThread, TicksOnceImmediatelyOnItsOwnThread) {
    auto record = std::make_shared<JobRecord>();
    std::string error;
    auto poller = PollerThread::Start(CountingFactory(record), kLongInterval,
                                      &error);
    ASSERT_NE(poller, nullptr) << error;
    ASSERT_TRUE(record->WaitFor(1)) << "no immediate first tick";
    poller->Stop();

    EXPECT_EQ(record->ticks, 1);
    EXPECT_NE(record->loop, nullptr);
    EXPECT_NE(record->built_on, std::this_thread::get_id());
    EXPECT_EQ(record->ticked_on, record->built_on);
}

TEST(PollerThread, JobIsBuiltAndDestroyedOnThePollerThread) {
    auto record = std::make_shared<JobRecord>();
    std::string error;
    auto poller = PollerThread::Start(CountingFactory(record), kLongInterval,
                                      &error);
    ASSERT_NE(poller, nullptr) << error;
    {
        // Start() returns only once the job exists.
        std::lock_guard<std::mutex> lock(record->mutex);
        EXPECT_NE(record->built_on, std::thread::id());
        EXPECT_FALSE(record->destroyed);
    }
    poller->Stop();
    EXPECT_TRUE(record->destroyed);
    EXPECT_EQ(record->destroyed_on, record->built_on);
    EXPECT_NE(record->destroyed_on, std::this_thread::get_id());
}

TEST(PollerThread, ThreadIsNamedAndDeafToSignals) {
    sigset_t before, after;
    pthread_sigmask(SIG_BLOCK, nullptr, &before);

    auto record = std::make_shared<JobRecord>();
    std::string error;
    auto poller = PollerThread::Start(CountingFactory(record), kLongInterval,
                                      &error);
    ASSERT_NE(poller, nullptr) << error;
    pthread_sigmask(SIG_BLOCK, nullptr, &after);
    poller->Stop();

    EXPECT_EQ(record->thread_name, "solgate-poller");
    EXPECT_TRUE(record->all_signals_blocked);
    // The caller's own mask is left as it was.
    for (int sig = 1; sig < NSIG; ++sig) {
        EXPECT_EQ(sigismember(&before, sig), sigismember(&after, sig))
            << "signal " << sig;
    }
}

TEST(PollerThread, StopIsIdempotentAndPrompt) {
    auto record = std::make_shared<JobRecord>();
    std::string error;
    auto poller = PollerThread::Start(CountingFactory(record), kLongInterval,
                                      &error);
    ASSERT_NE(poller, nullptr) << error;
    ASSERT_TRUE(record->WaitFor(1));

    // The 60 s tick timer must not hold the stop up: Stop() returns within
    // the wait bound (a bound, not a measurement; tools/bench/core_bench
    // measures it: poller_stop).
    auto stopped = std::async(std::launch::async, [&] { poller->Stop(); });
    EXPECT_EQ(stopped.wait_for(kWaitBound), std::future_status::ready)
        << "Stop() waits for the tick timer";
    stopped.get();
    poller->Stop();
    poller.reset();  // the destructor stops a third time
    EXPECT_TRUE(record->destroyed);
    EXPECT_EQ(record->ticks, 1);
}

TEST(PollerThread, DestructorStopsARunningPoller) {
    auto record = std::make_shared<JobRecord>();
    std::string error;
    auto poller = PollerThread::Start(CountingFactory(record), kLongInterval,
                                      &error);
    ASSERT_NE(poller, nullptr) << error;
    poller.reset();
    EXPECT_TRUE(record->destroyed);
}

TEST(PollerThread, TickExceptionsAreDroppedAndTickingGoesOn) {
    auto record = std::make_shared<JobRecord>();
    record->throw_on_first_ticks = 2;
    std::string error;
    // A 1 ms interval so the follow-up ticks come quickly; no sleeping.
    auto poller = PollerThread::Start(CountingFactory(record), 1, &error);
    ASSERT_NE(poller, nullptr) << error;
    EXPECT_TRUE(record->WaitFor(3));
    poller->Stop();
}

TEST(PollerThread, ThrowingFactoryFailsStartWithItsMessage) {
    std::string error;
    auto poller = PollerThread::Start(
        [](uv_loop_t*) -> std::unique_ptr<LoopJob> {
            throw std::runtime_error("no upstreams configured");
        },
        kLongInterval, &error);
    EXPECT_EQ(poller, nullptr);
    EXPECT_EQ(error, "no upstreams configured");
}

TEST(PollerThread, FactoryLeavingAHandleOpenStillFailsCleanly) {
    std::string error;
    auto poller = PollerThread::Start(
        [](uv_loop_t* loop) -> std::unique_ptr<LoopJob> {
            // Registered on the loop, then abandoned by the throw: Start must
            // still close the loop (uv_loop_close would fail otherwise, and
            // the thread would never finish).
            static uv_idle_t idle;
            uv_idle_init(loop, &idle);
            throw std::runtime_error("half built");
        },
        kLongInterval, &error);
    EXPECT_EQ(poller, nullptr);
    EXPECT_EQ(error, "half built");
}

TEST(PollerThread, RejectsNullJobZeroIntervalAndMissingFactory) {
    std::string error;
    EXPECT_EQ(PollerThread::Start(
                  [](uv_loop_t*) { return std::unique_ptr<LoopJob>(); },
                  kLongInterval, &error),
              nullptr);
    EXPECT_NE(error.find("no job"), std::string::npos) << error;

    auto record = std::make_shared<JobRecord>();
    error.clear();
    EXPECT_EQ(PollerThread::Start(CountingFactory(record), 0, &error), nullptr);
    EXPECT_FALSE(error.empty());
    EXPECT_EQ(record->built_on, std::thread::id());

    error.clear();
    EXPECT_EQ(PollerThread::Start(LoopJobFactory(), kLongInterval, &error),
              nullptr);
    EXPECT_FALSE(error.empty());
}

}  // namespace
}  // namespace solgate
