#include "blocks/commit_handoff.h"

#include <string>
#include <utility>

#include "blocks/block_capture.h"

namespace solgate {

CommitHandoff::CommitHandoff() = default;

CommitHandoff::~CommitHandoff() = default;

void CommitHandoff::Hand(std::unique_ptr<BlockCapture> capture,
                         int64_t wall_ms) {
    std::function<void()> waker;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_.push_back({std::move(capture), wall_ms});
        waker = waker_;
    }
    if (waker) {
        waker();
    } else {
        Run();
    }
}

void CommitHandoff::Run() {
    std::vector<Pending> pending;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pending.swap(pending_);
    }
    for (Pending& p : pending) {
        std::string error;
        p.capture->Finish(p.wall_ms, &error);
        // now: requests waiting for this block find it (or fetch it)
        p.capture.reset();
    }
}

void CommitHandoff::SetWaker(std::function<void()> waker) {
    std::lock_guard<std::mutex> lock(mutex_);
    waker_ = std::move(waker);
}

}  // namespace solgate
