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
//
// The region's fair order: each plan's queue is led by one host of the
// region (RegionRetrievals::Lead). The leader takes the other hosts'
// forwarded asks into its own queue every kRegionTakeEveryMs and claims
// and fetches as above, so the spec's turns, popularity and newest-first
// order hold across the region. A host that does not lead hands its
// queued blocks out at once and forwards each with its waiters to the
// leader; then it watches the block's claim every kRegionPeekEveryMs:
//  - no claim yet: forwarded again when keys joined here, the leadership
//    changed, or kRegionForwardAgainMs passed (a new leader starts with an
//    empty queue; the leader drops a block nobody asked for in 150 s);
//  - being retrieved: claimed as above, which counts the keys that joined
//    here and takes the block over should its holder die;
//  - done: it leaves the queue (its waiters find it on the holder, a
//    peer).
// The queue positions a follower tells its clients are its own queue's,
// an estimate of the region's. Until the leadership is known nothing is
// handed out; a host that becomes the leader claims what it had
// forwarded.
#pragma once

#include <climits>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
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
// Fleet mode: how often the leadership of a plan's region queue is claimed
// or renewed (its lease lives kRegionLeadTtlMs, so a dead leader is
// replaced within it), how often the leader takes forwarded asks, how
// often a follower looks at the claims of what it forwarded (in batches
// of kRegionPeekMax) and forwards again while no claim shows a block.
constexpr int64_t kRegionLeadEveryMs = 1000;
constexpr int64_t kRegionLeadTtlMs = 3000;
constexpr int64_t kRegionTakeEveryMs = 250;
constexpr size_t kRegionTakeMax = 256;
constexpr int64_t kRegionPeekEveryMs = 1000;
constexpr size_t kRegionPeekMax = 256;
constexpr int64_t kRegionForwardAgainMs = 30000;
// A peer's summary lists its new block within kPeerSummaryIntervalMs.
constexpr int64_t kRegionPeerWaitMs = 10000;
// A follower hands out at most this many blocks per tick to forward.
constexpr int kRegionForwardsPerTick = 64;
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
    // Fleet mode: whether this host's cache or a peer's summary holds the
    // block. A block another host retrieved stays "being retrieved" here
    // until one does (at most kRegionPeerWaitMs), so that its waiters are
    // told to ask again, not refused for an allowance it was just counted
    // in, while the summaries catch up; the leader does not queue again a
    // block forwarded to it that the region holds.
    void SetHeldInRegion(
        std::function<bool(uint64_t slot, const std::string& variant)> fn) {
        held_in_region_ = std::move(fn);
    }
    // Blocks waiting on the region (claims, other hosts' retrievals).
    size_t waiting() const { return waiting_.size(); }

    uint64_t started() const { return started_; }
    uint64_t stored() const { return stored_; }
    uint64_t failed() const { return failed_; }

private:
    struct Job {
        size_t plan;
        Retrieval retrieval;
        size_t endpoint = 0;   // index into the conf's long_term()
        // fleet mode
        RegionAsk ask;
        int64_t ask_at_ms = 0;    // when to ask the region again
        // forwarded to the leader: watched, not claimed
        bool forwarded = false;
        int64_t forwarded_ms = 0;
        size_t forwarded_keys = 0;
        uint64_t forwarded_lead = 0;   // the leadership's epoch then
        // retrieved by another host: since when (0: not)
        int64_t done_elsewhere_ms = 0;
    };

    // Fleet mode: a call to the store made at most every_ms, one at a time.
    struct StoreCall {
        bool busy = false;
        int64_t last_ms = INT64_MIN;
        // Whether the call may start now; if so it is under way.
        bool Start(int64_t now_ms, int64_t every_ms) {
            if (busy ||
                (last_ms != INT64_MIN && now_ms - last_ms < every_ms)) {
                return false;
            }
            busy = true;
            last_ms = now_ms;
            return true;
        }
        void Done() { busy = false; }
    };

    // Fleet mode: who leads each plan's region queue, as last heard.
    enum class Lead { kUnknown, kThis, kOther };
    struct PlanLead {
        Lead lead = Lead::kUnknown;
        std::string leader;   // its host
        uint64_t epoch = 0;   // changes with lead and leader
        StoreCall asking;   // the lease
        StoreCall taking;   // the intake
    };

    void Start(size_t plan, Retrieval retrieval, int64_t now_ms,
               bool forward);
    void StartPlan(size_t plan, int64_t now_ms);
    void AskLead(size_t plan, int64_t now_ms);
    Lead LeadOf(size_t plan) const;
    void TakeForwarded(size_t plan, int64_t now_ms);
    void Forward(const std::shared_ptr<Job>& job, int64_t now_ms);
    void PeekForwarded(std::vector<std::shared_ptr<Job>> jobs);
    void OnPeek(std::shared_ptr<Job> job,
                const std::optional<std::string>& state);
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
    // A retrieval made for the region: a repeat for each key that had
    // received the block on any host within 24 h.
    void CountRepeats(const RegionAsk& ask);
    void DoneElsewhere(std::shared_ptr<Job> job);
    bool HeldInRegion(uint64_t slot, const std::string& variant) const;
    // A block this host had forwarded before it became the leader: back
    // into its queue, which orders and paces it.
    void Requeue(const std::shared_ptr<Job>& job);
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
    std::function<bool(uint64_t, const std::string&)> held_in_region_;
    uint64_t claims_ = 0;   // numbers this process's retrievals (tokens)
    std::vector<PlanLead> leads_;
    std::vector<std::shared_ptr<Job>> waiting_;
    // Finished retrievals the store did not hear of yet (bounded).
    struct Unfinished {
        RegionAsk ask;
        bool ok;
    };
    static constexpr size_t kMaxUnfinished = 1024;
    std::vector<Unfinished> unfinished_;
    StoreCall reading_counts_;
    std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace solgate
