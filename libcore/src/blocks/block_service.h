// Cube Runner, part 1: answers getBlock from the first source that holds
// the block — the region cache, the region's ledger (the network's
// upstreams), another region — with plans, tiers and a per-key rate limit.
//
// One BlockService per `solgate_blocks` block. It is built in the nginx
// master at configuration time; its shared counters and key table live in
// a shm zone (Bind), and every worker opens the LMDB-indexed cache itself
// after fork (OpenStore).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "blocks/block_plans.h"
#include "blocks/block_retention.h"
#include "store/block_store.h"
#include "store/key_ledger.h"
#include "blocks/key_limiter.h"
#include "routing/network.h"
#include "blocks/retrieval_queue.h"
#include "rpc/rpc_request.h"
#include "blocks/slot_ranges.h"

namespace solgate {

class BlockCapture;

enum BlockSource : int {
    kSourceCache = 0,
    kSourceLedger,
    kSourceRegion,
    kSourceLongTerm,
    kSourceCount
};
std::string_view BlockSourceName(int source);

constexpr size_t kMaxBlockPeers = 16;
constexpr size_t kMaxBlockPlans = 32;
// A peer's summary older than this is not trusted: the peer is skipped.
constexpr int64_t kPeerSummaryTtlMs = 30000;
constexpr int64_t kPeerSummaryIntervalMs = 5000;
// Cube Runner's own JSON-RPC error for answers that are not blocks.
constexpr int kBlockNotServed = -32019;
constexpr int kBlockCleanedUp = -32001;
constexpr int kUnauthorized = -32003;
// The shortest peer_token accepted: it is the only thing that tells a
// region from a client.
constexpr size_t kMinPeerTokenBytes = 16;
// The JSON-RPC method a region asks another region's summary with (only
// answered to requests carrying the peer token).
constexpr std::string_view kSummaryMethod = "solgateBlockSummary";
// The header regions send to each other.
constexpr std::string_view kPeerHeader = "X-Solgate-Peer";

struct BlockPeer {
    std::string name;
    std::string url;          // the peer gateway's JSON-RPC endpoint
    bool copy = true;         // copy what it holds in the background
};

struct BlockServiceConf {
    std::string region;
    std::string cache_dir;
    uint64_t max_bytes = 0;
    std::string state_dir;
    // The X-Solgate-Peer value regions send each other; "" (the default):
    // this gateway answers no region and asks none.
    std::string peer_token;
    std::vector<BlockPeer> peers;
    // JSON-RPC endpoints holding every block since genesis, tried in order.
    std::vector<std::string> long_term_urls;
    std::vector<BlockPlan> plans = DefaultBlockPlans();
    RetentionPolicy retention;
};

struct BlocksShared {
    static constexpr uint32_t kMagic = 0x53474243;  // "SGBC"
    static constexpr uint32_t kLayout = 2;

    uint32_t magic;
    uint32_t layout;
    uint32_t queues;     // long-term storage queues placed after this
    std::atomic<uint64_t> served[kSourceCount];
    std::atomic<uint64_t> tier_answers;
    std::atomic<uint64_t> unauthorized;
    std::atomic<uint64_t> peer_requests;     // answered for other regions
    std::atomic<uint64_t> stored;            // entries written
    std::atomic<uint64_t> store_failures;
    std::atomic<uint64_t> rate_limited[kMaxBlockPlans];
    std::atomic<uint64_t> peer_fetches[kMaxBlockPeers];
    std::atomic<uint64_t> peer_failures[kMaxBlockPeers];
    std::atomic<uint64_t> peer_copies[kMaxBlockPeers];
    std::atomic<uint64_t> copy_lease;        // background copy: one process
    // Long-term storage, per plan: who retrieves (one process per host),
    // calls refused for a spent allowance, retrievals counted per key.
    std::atomic<uint64_t> retrieval_lease[kMaxBlockPlans];
    std::atomic<uint64_t> allowance_refusals[kMaxBlockPlans];
    std::atomic<uint64_t> allowance_counted[kMaxBlockPlans];
    std::atomic<uint64_t> repeats_counted[kMaxBlockPlans];
    KeyTable keys;
};

// The shared zone of a solgate_blocks: BlocksShared, then one
// RetrievalQueueShared per plan with long-term storage (each ~3.3 MB).
size_t BlocksSharedSize(const BlockServiceConf& conf);
// Whether plan p gets a queue: an archive plan, with storage configured.
bool HasQueue(const BlockServiceConf& conf, size_t p);
size_t QueuedPlans(const BlockServiceConf& conf);
RetrievalQueueShared* QueueAt(void* zone, size_t i);

// One client call Cube Runner handles, from the access phase to the end of
// the response.
struct BlockCall {
    uint64_t slot = 0;
    std::string variant;     // empty: not cacheable
    std::string id_raw;
    std::string api_key;
    int64_t wall_ms = 0;     // when the call arrived (UTC ms)
    size_t plan = 0;
    KeyEntry* key = nullptr;
    bool peer_request = false;
    int source = -1;         // the source of the current attempt
    size_t next_peer = 0;    // peers before this index were asked
    size_t peer = 0;         // the peer of the current attempt
};

struct BlockDecision {
    enum Kind { kPass, kAnswer, kCache, kLedger, kPeer };
    Kind kind = kPass;
    // kAnswer
    unsigned http_status = 200;
    unsigned retry_after_s = 0;
    std::string body;
    // kCache: serve the file with the client's id spliced in
    std::string path;
    BlockRecord record;
    // kPeer
    size_t peer = 0;
};

// What another region's summary says it holds, kept per process (written
// by the poller thread, read by the event thread).
class PeerSummaries {
public:
    PeerSummaries() : peers_(kMaxBlockPeers) {}
    void Store(size_t peer, int64_t now_ms,
               std::vector<std::pair<std::string, SlotRanges>> variants);
    void MarkFailed(size_t peer);
    bool Holds(size_t peer, std::string_view variant, uint64_t slot,
               int64_t now_ms) const;
    // Copy of a fresh summary (empty when stale or absent).
    std::vector<std::pair<std::string, SlotRanges>> Fresh(
        size_t peer, int64_t now_ms) const;

private:
    struct Peer {
        int64_t fetched_ms = 0;
        std::vector<std::pair<std::string, SlotRanges>> variants;
    };
    mutable std::mutex mutex_;
    std::vector<Peer> peers_;
};

class BlockService {
public:
    explicit BlockService(BlockServiceConf conf);
    ~BlockService();   // drops commits still pending (their temp files)
    // Serves `network` (which outlives this): once, before Bind.
    void Attach(Network& network);

    const BlockServiceConf& conf() const { return conf_; }
    // At configuration time only (peers, plans), before Bind.
    BlockServiceConf& mutable_conf() { return conf_; }
    const Network& network() const { return *network_; }

    bool Bind(void* memory, bool fresh, std::string* error);
    BlocksShared& shared() const { return *shared_; }
    bool bound() const { return shared_ != nullptr; }

    // In each process after fork; `reconcile` in the first one only.
    bool OpenStore(bool reconcile, std::string* error);
    void CloseStore();
    BlockStore* store() const { return store_.get(); }

    // The access phase's decision for a request: kPass for anything that
    // is not a single getBlock/getConfirmedBlock/getFirstAvailableBlock.
    // `peer_token` is the request's X-Solgate-Peer header ("" if none).
    BlockDecision Decide(const RpcRequest& request, std::string_view api_key,
                         std::string_view plan_name,
                         std::string_view peer_token, int64_t now_ms,
                         int64_t wall_ms, BlockCall* call);
    // The peer of the current attempt failed or did not hold the block (or,
    // for a request from another region, the cached file went away).
    BlockDecision AfterPeerFailure(BlockCall* call, int64_t now_ms);
    // A source answered the call (counted per source and per key; a cache
    // hit is also recorded as the key's receipt of the block).
    void CountServed(const BlockCall& call, int source, int64_t wall_ms);

    // Long-term storage (block_long_term.cpp). The queue of a plan, or
    // nullptr when the plan has none (not archive, or no storage).
    RetrievalQueueShared* Queue(size_t plan) const;
    KeyLedger* ledger() const { return ledger_.get(); }
    // The key text of a key table index (for the ledger).
    std::string KeyText(uint32_t key_index) const;
    // A repeat-count lookup for the queue at wall_ms (see RepeatFn).
    struct RepeatLookup {
        const BlockService* service;
        int64_t wall_ms;
    };
    static uint32_t RepeatCountOf(uint32_t key_index, void* lookup);
    // A retrieval ended: on success every waiting key's allowance and
    // receipt is counted (a repeat when it had received the block within
    // 24 h); the queue entry is freed or marked failed.
    void CompleteLongTerm(size_t plan, const Retrieval& retrieval, bool ok,
                          int64_t now_ms, int64_t wall_ms);

    // The first slot from which every block can be served here: the
    // ledger's window extended down by what the cache holds next to it.
    std::optional<uint64_t> FirstAvailableBlock() const;
    // Whether `slot` is finalized on the network (safe to cache).
    bool Finalized(uint64_t slot, int64_t now_ms) const;

    // Cache hits and writes feed the retention score; applied in batches
    // by Maintain (call it about once a second), which also evicts when
    // the cache is over max_size and refreshes the summary.
    void NoteRequest(uint64_t slot, const std::string& variant,
                     int64_t wall_ms);
    void Maintain(int64_t wall_ms);
    // Makes room for `incoming` bytes; false when it cannot.
    bool MakeRoom(uint64_t incoming, int64_t wall_ms);

    // Disk work off nginx's event loop: a capture whose answer arrived
    // whole is handed over here and committed (fsync, rename, index) by
    // RunCommits on the poller thread, which the waker wakes. Without a
    // waker (no poller thread) it is committed at once.
    void CommitLater(std::unique_ptr<BlockCapture> capture, int64_t wall_ms);
    void RunCommits();
    void SetCommitWaker(std::function<void()> waker);

    // This region's cache summary: {"region":..,"variants":{v:"a-b,c"}}.
    std::string RenderSummary(int64_t wall_ms) const;
    // The same, as ranges per variant (as of the last Maintain).
    std::vector<std::pair<std::string, SlotRanges>> LocalSummary() const;
    PeerSummaries& peer_summaries() { return summaries_; }

private:
    BlockDecision Answer(const BlockCall& call, unsigned status, int code,
                         const std::string& message,
                         const std::string& data_raw,
                         unsigned retry_after = 0) const;
    BlockDecision NextSource(BlockCall* call, int64_t now_ms);
    BlockDecision TierAnswer(const BlockCall& call);
    BlockDecision NotHeldHere(const BlockCall& call) const;
    BlockDecision LongTermAnswer(const BlockCall& call, int64_t now_ms,
                                 int64_t wall_ms);
    BlockDecision NotServed(const BlockCall& call, const std::string& message,
                            std::string_view reason, unsigned retry_after);
    std::vector<unsigned char> LedgerHolders(uint64_t slot) const;
    std::optional<uint64_t> LedgerFirst() const;

    Network* network_ = nullptr;
    BlockServiceConf conf_;
    BlocksShared* shared_ = nullptr;
    std::unique_ptr<BlockStore> store_;
    std::unique_ptr<KeyLedger> ledger_;
    std::vector<RetrievalQueueShared*> queues_;   // by plan; nullptr: none
    int64_t last_prune_ms_ = 0;
    PeerSummaries summaries_;

    void RefreshSummary(int64_t wall_ms);

    struct PendingRequest {
        uint64_t slot;
        std::string variant;
        int64_t wall_ms;
    };
    std::mutex scores_mutex_;
    std::vector<PendingRequest> pending_requests_;

    struct PendingCommit {
        std::unique_ptr<BlockCapture> capture;
        int64_t wall_ms;
    };
    std::mutex commits_mutex_;
    std::vector<PendingCommit> commits_;
    std::function<void()> commit_waker_;

    // What this process's view of the cache holds, per variant; rebuilt by
    // Maintain when entries were added or evicted.
    mutable std::mutex summary_mutex_;
    std::vector<std::pair<std::string, SlotRanges>> summary_;
    uint64_t summary_version_ = 0;
    int64_t summary_ms_ = 0;
};

}  // namespace solgate
