// Cube Runner: answers getBlock from the first source that holds the
// block (the region cache, the region's ledger, another region, long-term
// storage), with plans, tiers, a per-key rate limit and monthly
// allowances. One BlockService per `solgate_blocks` block.
//
// It decides nothing itself: it builds and holds the parts and hands each
// user the part it needs.
//   BlockDecider     the request path: which source answers (event loop)
//   BlockCache       the region cache and its upkeep; a CaptureSink
//   CommitHandoff    captures committed on the poller thread
//   RequestScores    cache hits waiting to raise retention scores
//   CacheSummary     what this region's cache holds, sent to the others
//   PeerSummaries    what the other regions' caches hold (BlockSync)
//   LongTermQueues   the long-term storage queues (LongTermRetriever)
//   LmdbAllowances   allowances, receipts and repeats (the key ledger)
//   SharedBlocks     the shared state: the stores of keys, leases, queues
//                    and allowances (blocks_stores.h), the host's counters
//   BlocksView       what the state page and the metrics read
//
// Lifetime. Built in the nginx master at configuration time from a frozen
// BlockServiceConf; its zone is bound once nginx has it (Bind), and every
// worker opens the cache and the key ledger itself after fork (OpenStore).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "blocks/block_cache.h"
#include "blocks/block_call.h"
#include "blocks/block_capture.h"
#include "blocks/block_conf.h"
#include "blocks/block_decider.h"
#include "blocks/blocks_shared.h"
#include "blocks/blocks_view.h"
#include "blocks/commit_handoff.h"
#include "blocks/lmdb_allowances.h"
#include "blocks/long_term_queues.h"
#include "blocks/region_summaries.h"
#include "blocks/request_scores.h"
#include "rpc/rpc_request.h"

namespace solgate {

class Network;
struct RegionSyncParts;

// 24 hours of slots at 400 ms (216,000), with room for faster slots.
constexpr uint64_t kReceiptHorizonSlots = 250000;

class BlockService {
public:
    // Serves `network`, which must outlive it (and learns its upstreams'
    // ledger windows from then on).
    BlockService(BlockServiceConf conf, Network& network);
    ~BlockService();   // drops commits still pending (their temp files)

    BlockService(const BlockService&) = delete;
    BlockService& operator=(const BlockService&) = delete;

    const BlockServiceConf& conf() const { return conf_; }

    // The zone nginx gives, BlocksSharedSize(conf()) bytes.
    bool Bind(void* memory, bool fresh, std::string* error);
    bool bound() const { return zone_.bound(); }
    // After Bind: other stores in front of the zone's and the ledger's
    // (SharedBlocks::UseStores).
    void UseStores(const BlocksStores& stores) { zone_.UseStores(stores); }

    // In each process after fork; `reconcile` in the first one only. Once
    // open, the process claims flights (the cache lock) under its id.
    bool OpenStore(bool reconcile, std::string* error);
    // Commits what was handed over, applies the last scores, then closes.
    void CloseStore();

    // --- the request path (nginx's event loop) ------------------------------

    BlockDecision Decide(const RpcRequest& request, std::string_view api_key,
                         std::string_view plan_name,
                         std::string_view peer_token, int64_t now_ms,
                         int64_t wall_ms, BlockCall* call,
                         std::string_view client = {}) {
        return decider_.Decide(request, api_key, plan_name, peer_token,
                               now_ms, wall_ms, call, client);
    }
    BlockDecision AfterSourceFailure(BlockCall* call, int64_t now_ms) {
        return decider_.AfterSourceFailure(call, now_ms);
    }
    BlockDecision AfterWait(BlockCall* call, int64_t now_ms) {
        return decider_.AfterWait(call, now_ms);
    }
    void CountServed(const BlockCall& call, int source, int64_t wall_ms) {
        decider_.CountServed(call, source, wall_ms);
    }
    // A capture of the answer the call's current source sends, or nullptr
    // when it is not worth caching (BlockDecider::WantsCapture) or cannot
    // be made. The call's flight goes with the capture.
    std::unique_ptr<BlockCapture> StartCapture(BlockCall& call,
                                               bool content_encoded,
                                               int64_t now_ms);
    // The capture's answer arrived whole: committed on the poller thread.
    void CommitLater(std::unique_ptr<BlockCapture> capture, int64_t wall_ms) {
        commits_.Hand(std::move(capture), wall_ms);
    }

    // --- the poller thread --------------------------------------------------

    void RunCommits() { commits_.Run(); }
    void SetCommitWaker(std::function<void()> waker) {
        commits_.SetWaker(std::move(waker));
    }
    // About once a second: applies the request scores, flushes the key
    // ledger; with wall_ms != 0 also evicts what is over max_size,
    // rebuilds the summary if the index changed, prunes the ledger hourly.
    void Maintain(int64_t wall_ms);
    // Whether the region cache holds the block or a peer's summary lists
    // it (as of now_ms).
    bool HeldInRegion(uint64_t slot, std::string_view variant,
                      int64_t now_ms) const;
    // Fleet mode: from now on receipts are kept for the region ...
    void KeepRegionReceipts() { cache_.region_receipts().Keep(); }
    // ... and these are the ones noted since the last call that may
    // matter: a receipt makes a long-term retrieval of its block a repeat,
    // so a block the ledger will still hold 24 h from now (at least
    // kReceiptHorizonSlots above the ledger's first slot) needs none.
    std::vector<RegionReceipt> TakeRegionReceipts();

    // --- the parts ----------------------------------------------------------

    const BlockDecider& decider() const { return decider_; }
    BlockCache& cache() { return cache_; }
    const BlockCache& cache() const { return cache_; }
    // Why the key ledger was started over when it was opened ("": it
    // was not).
    const std::string& LedgerDamage() const { return ledger_.damage(); }
    // The allowances in use (the ledger's unless others stand in front).
    AllowanceStore& allowances() { return zone_.allowances(); }
    LongTermQueues& long_term() { return long_term_; }
    SharedBlocks& zone() { return zone_; }
    PeerSummaries& peer_summaries() { return peers_; }
    const CacheSummary& local_summary() const { return local_; }
    RequestScores& request_scores() { return scores_; }
    const BlocksView& view() const { return view_; }
    // What a BlockSync of this service reaches (block_sync.h).
    RegionSyncParts sync_parts();

private:
    void RefreshSummary(int64_t wall_ms);

    // Declared in the order they are built: each part only refers to
    // those above it.
    const BlockServiceConf conf_;
    Network& network_;
    LmdbAllowances ledger_;
    SharedBlocks zone_;
    BlockCache cache_;
    RequestScores scores_;
    CacheSummary local_;
    PeerSummaries peers_;
    LongTermQueues long_term_;
    BlockDecider decider_;
    BlocksView view_;
    // Destroyed first: pending captures go before the cache they were for.
    CommitHandoff commits_;
};

}  // namespace solgate
