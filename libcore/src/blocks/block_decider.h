// Cube Runner's request path: for one getBlock, which source answers it —
// the region cache, the region's ledger (the network's upstreams),
// another region, long-term storage — or what Cube Runner answers itself
// (keys, plans, the per-key rate limit, tiers). Also answers
// getFirstAvailableBlock and another region's summary request, counts what
// was served, and says which answers are worth capturing into the cache.
//
// Runs on nginx's event loop: it reads the cache index and the regions'
// summaries, and reaches shared state only for the key's rate bucket and
// figures (the KeyStore), the long-term queue and the host's counters; it
// never writes the cache (scores are noted for the upkeep, captures are
// started by the caller).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "blocks/block_call.h"
#include "blocks/block_conf.h"
#include "rpc/rpc_request.h"

namespace solgate {

class BlockCache;
class CacheSummary;
class LongTermQueues;
class Network;
class PeerSummaries;
class RequestScores;
class SharedBlocks;

class BlockDecider {
public:
    BlockDecider(const BlockServiceConf& conf, const Network& network,
                 SharedBlocks& zone, BlockCache& cache,
                 const CacheSummary& local, const PeerSummaries& peers,
                 LongTermQueues& long_term, RequestScores& scores);

    BlockDecider(const BlockDecider&) = delete;
    BlockDecider& operator=(const BlockDecider&) = delete;

    // The decision for a request: kPass for anything that is not a single
    // getBlock/getConfirmedBlock/getFirstAvailableBlock (or before the
    // zone is bound). `peer_token` is the request's X-Solgate-Peer header
    // ("" if none); `client` the client's address, the key of a call
    // without one when keyless_plan is set.
    BlockDecision Decide(const RpcRequest& request, std::string_view api_key,
                         std::string_view plan_name,
                         std::string_view peer_token, int64_t now_ms,
                         int64_t wall_ms, BlockCall* call,
                         std::string_view client = {});
    // The current attempt's source failed: a peer that failed or did not
    // hold the block, or a cache entry whose file is gone or is not the
    // one the index describes (dropped, and the call goes on to the next
    // source; another region's request is told the block is not here).
    BlockDecision AfterSourceFailure(BlockCall* call, int64_t now_ms);
    // After a kWait: the cache if the block is there now, kWait again
    // while the other fetch goes on (until cache_lock_timeout), else the
    // next source.
    BlockDecision AfterWait(BlockCall* call, int64_t now_ms);
    // The process flights are claimed for (set after fork); 0: none are.
    void SetProcess(uint32_t pid) { pid_ = pid; }
    // A source answered the call (counted per source and per key; a cache
    // hit is also recorded as the key's receipt of the block).
    void CountServed(const BlockCall& call, int source, int64_t wall_ms);

    // Whether the answer of the call's current source goes into the cache:
    // another region's always (it held it in its cache), the ledger's once
    // the slot is finalized (never changes again); never a body sent with a
    // Content-Encoding (not the JSON the cache holds).
    bool WantsCapture(const BlockCall& call, bool content_encoded,
                      int64_t now_ms) const;
    // Whether `slot` is finalized on the network (safe to cache).
    bool Finalized(uint64_t slot, int64_t now_ms) const;
    // The first slot from which every block can be served here: the
    // ledger's window extended down by what the cache holds next to it.
    std::optional<uint64_t> FirstAvailableBlock() const;
    // The lowest first slot of the ledger nodes not cordoned; nullopt
    // while none knows its window.
    std::optional<uint64_t> LedgerFirst() const;

private:
    // What goes to the ledger or a peer: the call as Solgate parsed it.
    static std::string ForwardBody(const BlockCall& call);
    BlockDecision ForPeer(BlockCall* call);
    bool CacheHit(const BlockCall& call, BlockDecision* hit) const;
    // A cache hit the call is served by (its source and the entry's score
    // noted).
    bool ServeFromCache(BlockCall* call, BlockDecision* hit);
    BlockDecision NextSource(BlockCall* call, int64_t now_ms);
    // WantsCapture's rule for an identity-encoded answer from `source`.
    bool WillCapture(int source, uint64_t slot, int64_t now_ms) const;
    // Before fetching from `source`: claim the block's flight, or wait for
    // another request's (block_decider.cpp).
    std::optional<BlockDecision> JoinFlight(BlockCall* call, int source,
                                            int64_t now_ms);
    BlockDecision WaitStep(BlockCall* call, int64_t now_ms);
    bool FetchedElsewhere(const BlockCall& call, int64_t now_ms) const;
    BlockDecision NoSource(const BlockCall& call, int64_t now_ms);
    BlockDecision TierAnswerFor(const BlockCall& call);

    const BlockServiceConf& conf_;
    const Network& network_;
    SharedBlocks& zone_;
    BlockCache& cache_;
    const CacheSummary& local_;
    const PeerSummaries& peers_;
    LongTermQueues& long_term_;
    RequestScores& scores_;
    uint32_t pid_ = 0;
};

}  // namespace solgate
