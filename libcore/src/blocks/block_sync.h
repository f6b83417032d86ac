// Cube Runner's region-to-region sync, on the poller thread: learns what
// the other regions' caches hold (their summaries), and copies, in the
// background, the blocks this region's cache is missing from theirs.
//
// Summaries. Every kPeerSummaryIntervalMs each configured peer is asked
// for its summary (JSON-RPC kSummaryMethod with the kPeerHeader token), at
// most one request in flight per peer. A good reply is stored in the
// PeerSummaries, which the request path reads; any failure
// (transport, HTTP status, JSON-RPC error, malformed JSON or ranges) marks
// the peer failed, so the request path skips it rather than waiting on
// it. The log gets one WARN when a peer starts failing and one INFO when
// it recovers.
//
// Background copy. Only the process holding the copy lease (kCopyLease)
// copies, and only when it has the cache open. "Each region copies, in
// the background, the blocks it is missing from the caches of the other
// regions, newest first, as far back as its own cache can hold, at a
// bounded rate":
//  - a candidate is the highest slot, over every peer with a fresh summary
//    and every variant, that the peer lists and this region's summary
//    does not (nor this job's own recent copies, nor the index itself:
//    the summary is only refreshed by Maintain, about once a second);
//  - at most one copy is in flight, and copies start at most
//    kCopiesPerSecond per second (a token bucket, burst kCopiesPerSecond);
//  - "as far back as its own cache can hold": nothing is copied while the
//    cache holds kCopyFullPercent % of its max_bytes or more; the copies
//    then never push out what the region's own clients brought in (only
//    a copy's own size above that mark is left to MakeRoom);
//  - a slot that failed to copy from a peer is not asked of that peer
//    again for kCopyRetryMs (other peers may still be asked).
// A copy is the peer's cached answer, recorded through BlockCapture like
// any other source (so only complete, cacheable answers are stored).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "blocks/block_cache.h"
#include "blocks/block_conf.h"
#include "blocks/blocks_shared.h"
#include "blocks/region_summaries.h"
#include "base/transport.h"
#include "slots/state_poller.h"

namespace solgate {

// A peer's solgateBlockSummary reply: result.variants, each a SlotRanges
// text. Any malformed range text rejects the whole reply. Variants this
// gateway cannot ask for (BlockRequestBody refuses them) are left out:
// nothing could be copied or fetched with them.
bool ParseRegionSummary(const HttpResult& r, RegionSummary* out,
                        std::string* why);

constexpr uint32_t kPeerSummaryTimeoutMs = 2000;
constexpr uint32_t kCopyTimeoutMs = 10000;
constexpr size_t kMaxCopyBytes = 64u * 1024u * 1024u;
constexpr double kCopiesPerSecond = 2;
constexpr uint64_t kCopyFullPercent = 90;
constexpr int64_t kCopyRetryMs = 60000;

// A request of Cube Runner's background work (to another region or to
// long-term storage): its User-Agent names it, bodies up to max_bytes.
HttpTarget BlocksHttpTarget(const std::string& url, size_t max_bytes);

// What region sync reaches of its solgate_blocks, and nothing more.
struct RegionSyncParts {
    const BlockServiceConf& conf;  // the peers, peer_token, max_size
    SharedBlocks& zone;            // the copy lease, copies per peer
    PeerSummaries& peers;          // what it learns of the other regions
    const CacheSummary& local;     // what this region's summary lists
    BlockCache& cache;             // what the index holds; copies go there
};

class BlockSync {
public:
    BlockSync(const RegionSyncParts& parts, Transport& transport,
              Clock& clock, LogSink log, uint32_t pid);
    ~BlockSync();  // releases the copy lease; pending replies are dropped

    BlockSync(const BlockSync&) = delete;
    BlockSync& operator=(const BlockSync&) = delete;

    // One tick of the poller thread's ticker (every 400 ms).
    void Tick();

    // For tests and diagnostics.
    uint64_t copies_started() const { return copies_started_; }
    uint64_t copies_stored() const { return copies_stored_; }
    uint64_t copies_failed() const { return copies_failed_; }
    bool copy_in_flight() const { return copy_in_flight_; }

private:
    struct PeerState {
        bool in_flight = false;
        int64_t next_ms = 0;   // the next summary request is due
        bool failing = false;  // the last summary request failed
    };
    struct Candidate {
        size_t peer = 0;
        std::string variant;
        uint64_t slot = 0;
    };

    void PollSummaries(int64_t now);
    void OnSummary(size_t peer, const HttpResult& reply);
    void Copy(int64_t now);
    bool TakeToken(int64_t now);
    bool CacheNearlyFull() const;
    bool PickCandidate(int64_t now, Candidate* out);
    void StartCopy(const Candidate& candidate);
    void OnCopy(const Candidate& candidate, const HttpResult& reply);
    void Forget(int64_t now);
    HttpTarget PeerTarget(size_t peer, size_t max_bytes) const;

    RegionSyncParts parts_;
    Transport& transport_;
    Clock& clock_;
    LogSink log_;
    uint32_t pid_;
    std::vector<PeerState> peers_;

    // Background copy.
    bool copy_in_flight_ = false;
    double tokens_ = kCopiesPerSecond;
    int64_t tokens_ms_ = 0;
    // Slots this job copied (or found in the index) that the local
    // summary may not list yet, per variant.
    std::map<std::string, std::set<uint64_t>> copied_;
    size_t copied_count_ = 0;
    // (peer, variant) -> slot -> when it may be asked again.
    std::map<std::pair<size_t, std::string>, std::map<uint64_t, int64_t>>
        failed_;
    uint64_t copies_started_ = 0;
    uint64_t copies_stored_ = 0;
    uint64_t copies_failed_ = 0;

    // Replies that arrive after this object is gone are ignored.
    std::shared_ptr<char> alive_ = std::make_shared<char>(0);
};

}  // namespace solgate
