#include "runtime/poller_thread.h"

#include <pthread.h>
#include <signal.h>

#include <exception>
#include <system_error>
#include <utility>

namespace solgate {
namespace {

constexpr char kThreadName[] = "solgate-poller";  // <= 15 chars for Linux

void BlockAllSignals(sigset_t* previous) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, previous);
}

void CloseIfOpen(uv_handle_t* handle, void* /*arg*/) {
    if (!uv_is_closing(handle)) uv_close(handle, nullptr);
}

}  // namespace

std::unique_ptr<PollerThread> PollerThread::Start(LoopJobFactory factory,
                                                  uint64_t interval_ms,
                                                  std::string* error) {
    auto fail = [error](std::string why) {
        if (error != nullptr) *error = std::move(why);
        return std::unique_ptr<PollerThread>();
    };
    if (!factory) return fail("no poller job factory");
    if (interval_ms == 0) return fail("poller tick interval must be > 0");

    std::unique_ptr<PollerThread> poller(new PollerThread());

    // A new thread inherits its creator's mask. Blocking everything around
    // the creation means it is born deaf: no window before its own
    // pthread_sigmask in which a process-directed signal could land there.
    sigset_t caller_mask;
    BlockAllSignals(&caller_mask);
    try {
        poller->thread_ = std::thread(&PollerThread::RunThread, poller.get(),
                                      std::move(factory), interval_ms);
    } catch (const std::exception& e) {
        pthread_sigmask(SIG_SETMASK, &caller_mask, nullptr);
        return fail(std::string("cannot start poller thread: ") + e.what());
    }
    pthread_sigmask(SIG_SETMASK, &caller_mask, nullptr);

    std::unique_lock<std::mutex> lock(poller->startup_mutex_);
    poller->startup_changed_.wait(
        lock, [&] { return poller->startup_ != Startup::kPending; });
    if (poller->startup_ == Startup::kFailed) {
        std::string why = poller->startup_error_;
        lock.unlock();
        // The thread has already torn its loop down; only the join is left.
        poller->thread_.join();
        return fail(std::move(why));
    }
    return poller;
}

PollerThread::~PollerThread() { Stop(); }

void PollerThread::Stop() {
    std::lock_guard<std::mutex> guard(stop_mutex_);
    if (!thread_.joinable()) return;
    // The async handle is closed by the thread right after it fires, so a
    // second send would touch a closed handle.
    if (!stop_signalled_) {
        stop_signalled_ = true;
        uv_async_send(&stop_async_);
    }
    // A thread cannot join itself; its owner's Stop() or destructor will.
    if (thread_.get_id() == std::this_thread::get_id()) return;
    thread_.join();
}

void PollerThread::RunThread(LoopJobFactory factory, uint64_t interval_ms) {
    BlockAllSignals(nullptr);  // already inherited; kept for clarity
    pthread_setname_np(pthread_self(), kThreadName);

    int rc = uv_loop_init(&loop_);
    if (rc != 0) {
        ReportStartup(Startup::kFailed,
                      std::string("uv_loop_init: ") + uv_strerror(rc));
        return;
    }
    rc = uv_async_init(&loop_, &stop_async_, &PollerThread::OnStopRequested);
    if (rc != 0) {
        CloseLoop();
        ReportStartup(Startup::kFailed,
                      std::string("uv_async_init: ") + uv_strerror(rc));
        return;
    }
    stop_async_.data = this;
    uv_timer_init(&loop_, &tick_timer_);
    tick_timer_.data = this;

    std::string error;
    if (!BuildJob(factory, &error)) {
        // Whatever the factory registered before failing goes too.
        CloseLoop();
        ReportStartup(Startup::kFailed, std::move(error));
        return;
    }
    // The first tick runs at once: a freshly started worker wants upstream
    // state now, not one interval later.
    uv_timer_start(&tick_timer_, &PollerThread::OnTick, 0, interval_ms);
    ReportStartup(Startup::kRunning, std::string());

    // A job calling uv_stop() must not end the thread early.
    while (!stopping_) uv_run(&loop_, UV_RUN_DEFAULT);
    CloseLoop();
}

bool PollerThread::BuildJob(const LoopJobFactory& factory, std::string* error) {
    try {
        job_ = factory(&loop_);
    } catch (const std::exception& e) {
        *error = e.what();
        return false;
    } catch (...) {
        *error = "poller job factory threw a non-standard exception";
        return false;
    }
    if (!job_) {
        *error = "poller job factory returned no job";
        return false;
    }
    return true;
}

void PollerThread::ReportStartup(Startup state, std::string error) {
    std::lock_guard<std::mutex> guard(startup_mutex_);
    startup_ = state;
    startup_error_ = std::move(error);
    startup_changed_.notify_all();
}

void PollerThread::OnTick(uv_timer_t* timer) {
    auto* self = static_cast<PollerThread*>(timer->data);
    try {
        self->job_->Tick();
    } catch (...) {
        // One failed tick must not end polling; the next one may succeed.
    }
}

void PollerThread::OnStopRequested(uv_async_t* async) {
    static_cast<PollerThread*>(async->data)->ShutDownOnLoop();
}

void PollerThread::ShutDownOnLoop() {
    stopping_ = true;
    uv_timer_stop(&tick_timer_);
    // On this thread, so the job's transports close their handles on the
    // loop they were created for.
    job_.reset();
    // Ours, and anything a job left open. uv_run then returns once every
    // close callback (the transport's frees included) has run.
    uv_walk(&loop_, &CloseIfOpen, nullptr);
}

void PollerThread::CloseLoop() {
    // Finishes pending closes; loops only if something still holds the loop
    // (e.g. a request a job started), which uv_run waits for.
    for (;;) {
        uv_walk(&loop_, &CloseIfOpen, nullptr);
        uv_run(&loop_, UV_RUN_DEFAULT);
        if (uv_loop_close(&loop_) != UV_EBUSY) return;
    }
}

}  // namespace solgate
