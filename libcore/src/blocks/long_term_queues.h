// Cube Runner, part 2: the long-term storage queue of each archive plan,
// seen from both ends. In the request path a block that no cache, ledger
// or region holds is admitted (Admit) within the key's monthly allowance;
// on the poller thread the retriever (long_term_retriever.h) takes blocks
// out by the plan's rate (Next) and reports what storage did (Complete),
// which counts the retrieval for every key that waited for it.
//
// The queues, the retrieval leases, the keys and their allowances are
// reached through the stores SharedBlocks hands out (blocks_stores.h);
// this class is the one place that joins them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blocks/block_call.h"
#include "blocks/block_conf.h"
#include "blocks/queue_store.h"

namespace solgate {

class SharedBlocks;

// Where a retrieval was counted and fetched (fleet mode has three ends).
enum class RetrievalEnd {
    kHere,           // fetched and counted here (one host)
    kCountedRegion,  // fetched here, the allowances counted by the region
    kOtherHost,      // another host of the region fetched it (or nobody
                     // could have it): it leaves the queue, neither
                     // retrieved nor failed here, nothing counted or served
};

// Why a block was or was not queued.
struct LongTermVerdict {
    enum Kind {
        kQueue,           // the queue decided: see `queue`
        kTooManyKeys,     // the key table is full: the queue cannot tell
                          // this key apart
        kAllowanceSpent,  // the plan's monthly allowance is used up
    };
    Kind kind = kQueue;
    QueueAnswer queue;
};

class LongTermQueues {
public:
    LongTermQueues(const BlockServiceConf& conf, SharedBlocks& zone);

    LongTermQueues(const LongTermQueues&) = delete;
    LongTermQueues& operator=(const LongTermQueues&) = delete;

    const BlockServiceConf& conf() const { return conf_; }
    // The zone is bound (before that there are no queues).
    bool bound() const;
    // Whether the plan has a queue (and the zone is bound).
    bool HasQueue(size_t plan) const;

    // --- the request path ---------------------------------------------------

    // A call for a block no other source holds, from a key of an archive
    // plan with a queue (call.plan, call.key, call.api_key, call.slot,
    // call.variant set). kQueue with QueueOutcome::kUnavailable when the
    // plan has no queue.
    LongTermVerdict Admit(const BlockCall& call, int64_t now_ms,
                          int64_t wall_ms);

    // --- the poller thread --------------------------------------------------

    // Only the holder of a plan's lease retrieves for it (one process
    // wherever the lease store is shared); renewed by claiming again.
    bool ClaimRetrievals(size_t plan, uint32_t pid, int64_t now_ms,
                         int64_t ttl_ms);
    void ReleaseRetrievals(size_t plan, uint32_t pid);
    // The next block to fetch for the plan (at the plan's retrieval_rate,
    // with the keys' repeat counts as of wall_ms).
    std::optional<Retrieval> Next(size_t plan, int64_t now_ms,
                                  int64_t wall_ms, uint32_t max_in_flight,
                                  int64_t stale_ms);
    // Fleet mode, a host that does not lead the plan's queue: the next
    // block to forward to the leader, at once (no pacing; the leader's
    // queue orders and paces the region's).
    std::optional<Retrieval> NextToForward(size_t plan, int64_t now_ms,
                                           int64_t wall_ms,
                                           int64_t stale_ms);
    // Fleet mode, the leader: another host's waiters for a block, into
    // this host's queue, each on the plan's terms (allowance, queue
    // limit) as if it had asked here.
    void AdmitForwarded(size_t plan, uint64_t slot,
                        const std::string& variant,
                        const std::vector<std::string>& keys, int64_t now_ms,
                        int64_t wall_ms);
    // Whether every key has spent the plan's allowance, as this host's copy
    // of the region's counts says.
    bool AllSpent(size_t plan, const std::vector<std::string>& keys,
                  int64_t wall_ms) const;
    // A retrieval ended: on success every waiting key's allowance and
    // receipt is counted (a repeat when it had received the block within
    // 24 h) and it is served from long-term storage; the queue entry is
    // freed or marked failed.
    void Complete(size_t plan, const Retrieval& retrieval, bool ok,
                  int64_t now_ms, int64_t wall_ms,
                  RetrievalEnd end = RetrievalEnd::kHere);

    // Fleet mode. The API keys a retrieval counts for now (its stored
    // waiters).
    std::vector<std::string> WaiterKeys(size_t plan,
                                        const Retrieval& retrieval);
    // The region's allowance counts (key, count) replace the host's copy,
    // which the request path reads.
    void TakeRegionCounts(
        const std::vector<std::pair<std::string, uint64_t>>& used,
        int64_t wall_ms);
    // The region counted a retrieval of the plan for `keys` keys.
    void CountedInRegion(size_t plan, size_t keys);
    // The region's claim holds the count of these waiters of a retrieval
    // (after their counts were taken): the queue charges them no more for
    // it, so a key's allowance is not spent twice on one block.
    void MarkCountedInRegion(size_t plan, const Retrieval& retrieval,
                             const std::vector<std::string>& keys);
    // A retrieval of `slot` this host made for the region (kCountedRegion)
    // is a repeat for each key that received the block within 24 h, on any
    // host (`region_received`, per key; empty when the region's store did
    // not answer) or on this one. Returns how many were repeats.
    size_t CountRepeatsInRegion(size_t plan,
                                const std::vector<std::string>& keys,
                                const std::vector<bool>& region_received,
                                uint64_t slot, int64_t wall_ms);

    // --- status -------------------------------------------------------------

    std::optional<QueueStats> Stats(size_t plan, int64_t now_ms) const;

private:
    // The plan's next hand-out at `rate` (infinite: not paced).
    std::optional<Retrieval> HandOut(size_t plan, int64_t now_ms,
                                     int64_t wall_ms, double rate,
                                     uint32_t max_in_flight,
                                     int64_t stale_ms);
    // The API keys of key ids (those the key store knows).
    std::vector<std::string> KeysOf(const std::vector<KeyId>& ids) const;
    // Counts a retrieval of `slot` against the waiters' allowances.
    void CountFor(size_t plan, const std::vector<KeyId>& waiters,
                  uint64_t slot, int64_t wall_ms);
    // What the queue asks for what is left of a call's allowance.
    struct AllowanceLookup {
        const LongTermQueues* queues;
        const BlockCall* call;
        int64_t wall_ms;
    };
    static uint32_t AllowanceLeftOf(KeyId key, void* lookup);
    // What the queue asks for a key's repeat count, as of wall_ms.
    struct RepeatLookup {
        const LongTermQueues* queues;
        int64_t wall_ms;
    };
    static uint32_t RepeatCountOf(KeyId key, void* lookup);
    QueueStore* QueueOf(size_t plan) const;

    const BlockServiceConf& conf_;
    SharedBlocks& zone_;
};

}  // namespace solgate
