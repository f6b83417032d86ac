// Cube Runner, part 2, on the poller thread: retrieves queued blocks from
// long-term storage.  For each plan with a queue, only the process that
// holds the plan's retrieval lease retrieves (one per host, so all workers
// share one queue and nothing is fetched twice); it takes blocks from the
// queue at the plan's retrieval_rate (the queue's token bucket), asks the
// long_term_storage endpoints in order (the next one after a failure), and
// stores what comes back in the region cache, where the waiting clients
// find it on their next request.  A block storage did not return is marked
// failed in the queue; the next request queues it again.
//
// Tick() is meant to run often (every kRetrieverTickMs): the queue hands
// out at most one block per 1/rate seconds, so a 400 ms tick would cap
// every plan at 2.5 retrievals per second.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "blocks/block_capture.h"
#include "blocks/long_term_queues.h"
#include "base/transport.h"
#include "slots/state_poller.h"

namespace solgate {

constexpr uint64_t kRetrieverTickMs = 10;
constexpr uint32_t kRetrievalTimeoutMs = 30000;
// A retrieval not completed in this time (its worker died) is queued again.
constexpr int64_t kRetrievalStaleMs = 120000;
constexpr size_t kMaxRetrievalBytes = 64u * 1024u * 1024u;

class LongTermRetriever {
public:
    // Takes blocks out of `queues` and stores what storage returns into
    // `sink` (the region cache).
    LongTermRetriever(LongTermQueues& queues, CaptureSink& sink,
                      Transport& transport, Clock& clock, LogSink log,
                      uint32_t pid);
    ~LongTermRetriever();  // releases the leases; late replies are dropped

    LongTermRetriever(const LongTermRetriever&) = delete;
    LongTermRetriever& operator=(const LongTermRetriever&) = delete;

    void Tick();

    uint64_t started() const { return started_; }
    uint64_t stored() const { return stored_; }
    uint64_t failed() const { return failed_; }

private:
    struct Job {
        size_t plan;
        Retrieval retrieval;
        size_t endpoint = 0;   // index into long_term_urls
    };

    void Fetch(std::shared_ptr<Job> job);
    void OnReply(std::shared_ptr<Job> job, const HttpResult& reply);
    // At most this many in flight per plan: enough to keep up with the
    // rate when storage is slow (rate x timeout), at least one.
    uint32_t MaxInFlight(size_t plan) const;

    LongTermQueues& queues_;
    CaptureSink& sink_;
    Transport& transport_;
    Clock& clock_;
    LogSink log_;
    uint32_t pid_;
    uint64_t started_ = 0;
    uint64_t stored_ = 0;
    uint64_t failed_ = 0;
    std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace solgate
