// Work run on the poller thread's libuv loop.
#pragma once

#include <functional>
#include <memory>

struct uv_loop_s;

namespace solgate {

class LoopJob {
public:
    virtual ~LoopJob() = default;
    // Called on every tick of the fixed ticker, on the loop thread.
    virtual void Tick() = 0;
};

// Builds the job on the loop thread, with that thread's loop.
using LoopJobFactory =
    std::function<std::unique_ptr<LoopJob>(struct uv_loop_s* loop)>;

}  // namespace solgate
