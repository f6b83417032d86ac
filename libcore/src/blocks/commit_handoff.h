// Disk work off nginx's event loop: a capture whose answer arrived whole
// is handed over here and committed (fsync, rename, index) by Run on the
// poller thread, which the waker wakes. Without a waker (no poller thread,
// or while it stops) it is committed at once, on the caller's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace solgate {

class BlockCapture;

class CommitHandoff {
public:
    CommitHandoff();
    ~CommitHandoff();   // drops commits still pending (their temp files)

    CommitHandoff(const CommitHandoff&) = delete;
    CommitHandoff& operator=(const CommitHandoff&) = delete;

    // Safe from any thread; the waker is called outside the lock.
    void Hand(std::unique_ptr<BlockCapture> capture, int64_t wall_ms);
    // Commits what was handed over so far (what is not cacheable is
    // dropped).
    void Run();
    void SetWaker(std::function<void()> waker);

private:
    struct Pending {
        std::unique_ptr<BlockCapture> capture;
        int64_t wall_ms;
    };
    std::mutex mutex_;
    std::vector<Pending> pending_;
    std::function<void()> waker_;
};

}  // namespace solgate
