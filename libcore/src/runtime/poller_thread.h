// A dedicated thread running one libuv loop that ticks a LoopJob.
//
// nginx workers are single-threaded event loops and must not block on
// upstream I/O; the poller does its HTTP work here instead. The thread
// blocks every signal so nginx's signals reach the worker's main thread.
//
// Start it after fork (in the worker), and Stop it (or destroy it) from the
// thread that started it, never from inside the job.
#pragma once

#include <uv.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "runtime/loop_job.h"

namespace solgate {

class PollerThread {
public:
    // Creates the loop on a new thread, builds the job there with
    // factory(loop) and ticks it now and then every interval_ms. Returns once
    // the job is built; on failure (a throwing factory, a null job, a zero
    // interval, no thread) returns nullptr with the reason in *error, and
    // leaves no thread behind.
    static std::unique_ptr<PollerThread> Start(LoopJobFactory factory,
                                               uint64_t interval_ms,
                                               std::string* error);

    // Stop() and join.
    ~PollerThread();

    PollerThread(const PollerThread&) = delete;
    PollerThread& operator=(const PollerThread&) = delete;

    // Destroys the job on its own thread, closes every handle left on the
    // loop, closes the loop and joins the thread. Idempotent. Takes as long
    // as a Tick() in progress and the job's destructor take (see
    // curl_transport.h on name lookups in flight).
    void Stop();

private:
    enum class Startup { kPending, kRunning, kFailed };

    PollerThread() = default;

    void RunThread(LoopJobFactory factory, uint64_t interval_ms);
    bool BuildJob(const LoopJobFactory& factory, std::string* error);
    void ReportStartup(Startup state, std::string error);
    void ShutDownOnLoop();
    void CloseLoop();

    static void OnTick(uv_timer_t* timer);
    static void OnStopRequested(uv_async_t* async);

    std::thread thread_;

    // Start() waits here until the thread has built the job or failed.
    std::mutex startup_mutex_;
    std::condition_variable startup_changed_;
    Startup startup_ = Startup::kPending;
    std::string startup_error_;

    // Serialises Stop() callers; the async handle is signalled only once.
    std::mutex stop_mutex_;
    bool stop_signalled_ = false;

    // Touched only by the poller thread, except stop_async_, whose
    // uv_async_send is libuv's one thread-safe call.
    uv_loop_t loop_{};
    uv_timer_t tick_timer_{};
    uv_async_t stop_async_{};
    std::unique_ptr<LoopJob> job_;
    bool stopping_ = false;
};

}  // namespace solgate
