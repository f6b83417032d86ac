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
//
// Fleet mode (SetRegion): each block the queue hands out is first claimed
// for the region (blocks/region_retrievals.h). Only a retrieval's own
// claim is fetched; the region counted the waiters' allowances in the
// claim, and the host's copy of the counts is brought up to the region's.
// A block another retrieval holds stays "being retrieved" here, claimed
// again every kRegionAskAgainMs (counting the keys that joined) until it
// is done (its waiters then find it in that host's cache, a `peer`) or
// its holder is gone (then this one takes it over);
// one nobody here may have (every allowance spent) leaves the queue. While
// the store does not answer, or the region's rate says wait, the block
// stays handed out and is claimed again later: nothing is fetched that
// the region did not count.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "blocks/block_capture.h"
#include "blocks/long_term_queues.h"
#include "blocks/region_retrievals.h"
#include "base/transport.h"
#include "slots/state_poller.h"

namespace solgate {

constexpr uint64_t kRetrieverTickMs = 10;
constexpr uint32_t kRetrievalTimeoutMs = 30000;
// A retrieval not completed in this time (its worker died) is queued again.
constexpr int64_t kRetrievalStaleMs = 120000;
constexpr size_t kMaxRetrievalBytes = 64u * 1024u * 1024u;
// Fleet mode: how often a block waiting on the region is asked about again
// (another host's retrieval, or a store that did not answer).
constexpr int64_t kRegionAskAgainMs = 250;
// Fleet mode: how often the host's copy of the region's allowance counts
// is brought up to date (by the process that retrieves), so that a key
// whose allowance other hosts spent is refused here within this long.
constexpr int64_t kRegionCountsEveryMs = 2000;

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

    // Fleet mode: claim every block for the region first (outlives this).
    void SetRegion(RegionRetrievals* region) { region_ = region; }
    // Blocks waiting on the region (claims, other hosts' retrievals).
    size_t waiting() const { return waiting_.size(); }

    uint64_t started() const { return started_; }
    uint64_t stored() const { return stored_; }
    uint64_t failed() const { return failed_; }

private:
    struct Job {
        size_t plan;
        Retrieval retrieval;
        size_t endpoint = 0;   // index into long_term_urls
        // fleet mode
        RegionAsk ask;
        int64_t ask_at_ms = 0;    // when to ask the region again
    };

    void Start(size_t plan, Retrieval retrieval, int64_t now_ms);
    void Fetch(std::shared_ptr<Job> job);
    void OnReply(std::shared_ptr<Job> job, const HttpResult& reply);
    // Fleet mode.
    void AskRegion(std::shared_ptr<Job> job);
    void OnClaim(std::shared_ptr<Job> job, const RegionClaim& claim);
    void AskAgainLater(std::shared_ptr<Job> job, int64_t after_ms);
    void AskWaiting(int64_t now_ms);
    void ReadRegionCounts(int64_t now_ms);
    void FinishRegion(RegionAsk ask, bool ok);
    void FinishUnfinished();
    void End(const std::shared_ptr<Job>& job, bool ok, RetrievalEnd end);
    int64_t ClaimTtlMs() const;
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
    RegionRetrievals* region_ = nullptr;
    uint64_t claims_ = 0;   // numbers this process's retrievals (tokens)
    std::vector<std::shared_ptr<Job>> waiting_;
    // Finished retrievals the store did not hear of yet (bounded).
    struct Unfinished {
        RegionAsk ask;
        bool ok;
    };
    static constexpr size_t kMaxUnfinished = 1024;
    std::vector<Unfinished> unfinished_;
    int64_t counts_read_ms_ = INT64_MIN;   // when last asked
    bool reading_counts_ = false;
    std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace solgate
