#include "blocks/block_sync.h"

#include <yajl/yajl_tree.h>

#include <algorithm>
#include <optional>
#include <type_traits>

#include "blocks/block_capture.h"
#include "blocks/block_variant.h"
#include "slots/poll_reply.h"

namespace solgate {
namespace {

struct TreeDeleter {
    void operator()(yajl_val v) const { yajl_tree_free(v); }
};
using Tree = std::unique_ptr<std::remove_pointer_t<yajl_val>, TreeDeleter>;

yajl_val Member(yajl_val object, const char* key) {
    const char* path[] = {key, nullptr};
    return yajl_tree_get(object, path, yajl_t_any);
}


using Summary = RegionSummary;


// Bounds the memory of slots copied but not yet in the local summary (it
// only grows when Maintain does not run in this process).
constexpr size_t kMaxRememberedCopies = 100000;
// How many slots a candidate search may skip per (peer, variant) because
// this job already copied them or they failed recently.
constexpr size_t kMaxSkippedPerSearch = 4096;
// Candidates found already indexed (the summary lags) before giving up
// for this tick.
constexpr int kMaxIndexedPerTick = 8;

}  // namespace

bool ParseRegionSummary(const HttpResult& r, RegionSummary* out,
                        std::string* why) {
    *why = HttpFailure(r);
    if (!why->empty()) {
        return false;
    }
    char errbuf[256] = {};
    Tree tree(yajl_tree_parse(r.body.c_str(), errbuf, sizeof(errbuf)));
    if (!tree) {
        std::string text = errbuf;
        for (char& c : text) {
            if (static_cast<unsigned char>(c) < 0x20) c = ' ';
        }
        *why = "bad JSON: " + text;
        return false;
    }
    if (!YAJL_IS_OBJECT(tree.get())) {
        *why = "not a JSON-RPC reply: " + Excerpt(r.body);
        return false;
    }
    if (yajl_val error = Member(tree.get(), "error")) {
        yajl_val message = Member(error, "message");
        *why = "JSON-RPC error: " +
               (message != nullptr && YAJL_IS_STRING(message)
                    ? std::string(YAJL_GET_STRING(message))
                    : Excerpt(r.body));
        return false;
    }
    yajl_val result = Member(tree.get(), "result");
    yajl_val variants =
        result != nullptr && YAJL_IS_OBJECT(result) ? Member(result, "variants")
                                                    : nullptr;
    if (variants == nullptr || !YAJL_IS_OBJECT(variants)) {
        *why = "no result.variants object: " + Excerpt(r.body);
        return false;
    }
    RegionSummary summary;
    for (size_t i = 0; i < variants->u.object.len; i++) {
        std::string name = variants->u.object.keys[i];
        yajl_val text = variants->u.object.values[i];
        if (!YAJL_IS_STRING(text)) {
            *why = "variant \"" + name + "\": ranges are not a string";
            return false;
        }
        std::optional<SlotRanges> ranges =
            SlotRanges::Parse(YAJL_GET_STRING(text));
        if (!ranges) {
            *why = "variant \"" + name + "\": malformed ranges";
            return false;
        }
        if (!BlockRequestBody(0, name, "1")) {
            continue;
        }
        summary.emplace_back(std::move(name), std::move(*ranges));
    }
    *out = std::move(summary);
    return true;
}

BlockSync::BlockSync(const RegionSyncParts& parts, Transport& transport,
                     Clock& clock, LogSink log, uint32_t pid)
    : parts_(parts),
      transport_(transport),
      clock_(clock),
      log_(std::move(log)),
      pid_(pid),
      peers_(parts.conf.peers().size()) {}

BlockSync::~BlockSync() {
    if (parts_.zone.bound()) {
        parts_.zone.leases().ReleaseLease(kCopyLease, pid_);
    }
}

void BlockSync::Tick() {
    if (!parts_.zone.bound()) {
        return;
    }
    int64_t now = clock_.MonotonicMs();
    PollSummaries(now);
    Copy(now);
}

HttpTarget BlocksHttpTarget(const std::string& url, size_t max_bytes) {
    HttpTarget target;
    target.url = url;
    target.user_agent = std::string("solgate-blocks/") + sg_version();
    target.max_response_bytes = max_bytes;
    return target;
}

HttpTarget BlockSync::PeerTarget(size_t peer, size_t max_bytes) const {
    HttpTarget target =
        BlocksHttpTarget(parts_.conf.peers()[peer].url, max_bytes);
    target.connect_to = parts_.conf.peers()[peer].connect_to;
    target.headers.push_back(std::string(kPeerHeader) + ": " +
                             parts_.conf.peer_token());
    return target;
}

// --- summaries ----------------------------------------------------------------

void BlockSync::PollSummaries(int64_t now) {
    for (size_t p = 0; p < peers_.size(); p++) {
        PeerState& state = peers_[p];
        if (state.in_flight || now < state.next_ms) {
            continue;
        }
        state.in_flight = true;
        state.next_ms = now + kPeerSummaryIntervalMs;
        std::weak_ptr<char> alive = alive_;
        transport_.Post(PeerTarget(p, 0), RequestBody(kSummaryMethod),
                        kPeerSummaryTimeoutMs,
                        [this, alive, p](HttpResult reply) {
                            if (!alive.expired()) {
                                OnSummary(p, reply);
                            }
                        });
    }
}

void BlockSync::OnSummary(size_t peer, const HttpResult& reply) {
    PeerState& state = peers_[peer];
    state.in_flight = false;
    const std::string& name = parts_.conf.peers()[peer].name;
    Summary summary;
    std::string why;
    if (!ParseRegionSummary(reply, &summary, &why)) {
        parts_.peers.MarkFailed(peer);
        if (!state.failing) {
            state.failing = true;
            log_(kLogWarn, "blocks: peer \"" + name +
                               "\" summary failed: " + why);
        }
        return;
    }
    parts_.peers.Store(peer, clock_.MonotonicMs(), std::move(summary));
    if (state.failing) {
        state.failing = false;
        log_(kLogInfo, "blocks: peer \"" + name +
                           "\" summary recovered");
    }
}

// --- background copy ----------------------------------------------------------

void BlockSync::Copy(int64_t now) {
    if (!parts_.cache.Open() || peers_.empty()) {
        return;
    }
    // Renewed on every tick, also while a copy is in flight, so it does not
    // pass to another process in the middle of one.
    if (!parts_.zone.leases().ClaimLease(kCopyLease, pid_, now,
                                         kLeaseTtlMs)) {
        return;
    }
    Forget(now);
    if (copy_in_flight_ || CacheNearlyFull()) {
        return;
    }
    // Refill first; a token is only spent on a copy actually started.
    if (tokens_ms_ == 0) {
        tokens_ms_ = now;
    }
    tokens_ = std::min(kCopiesPerSecond,
                       tokens_ + static_cast<double>(now - tokens_ms_) *
                                     kCopiesPerSecond / 1000.0);
    tokens_ms_ = now;
    if (tokens_ < 1) {
        return;
    }
    Candidate candidate;
    if (!PickCandidate(now, &candidate)) {
        return;
    }
    tokens_ -= 1;
    StartCopy(candidate);
}

// "As far back as its own cache can hold": not at or above the mark.
bool BlockSync::CacheNearlyFull() const {
    uint64_t max_bytes = parts_.conf.max_bytes();
    if (max_bytes == 0) {
        return false;
    }
    std::optional<BlockStore::Totals> totals = parts_.cache.Totals();
    uint64_t bytes = totals ? totals->bytes : 0;
    // In 128 bits: bytes * 100 must not wrap.
    return static_cast<unsigned __int128>(bytes) * 100 >=
           static_cast<unsigned __int128>(max_bytes) * kCopyFullPercent;
}

void BlockSync::Forget(int64_t now) {
    for (auto it = failed_.begin(); it != failed_.end();) {
        auto& slots = it->second;
        for (auto s = slots.begin(); s != slots.end();) {
            s = s->second <= now ? slots.erase(s) : std::next(s);
        }
        it = slots.empty() ? failed_.erase(it) : std::next(it);
    }
    if (copied_count_ > kMaxRememberedCopies) {
        copied_.clear();   // a copy twice is wasteful, never wrong
        copied_count_ = 0;
    }
}

bool BlockSync::PickCandidate(int64_t now, Candidate* out) {
    Summary local = parts_.local.Ranges();
    static const SlotRanges kNothing;
    auto local_of = [&local](const std::string& variant) -> const SlotRanges& {
        for (const auto& [name, ranges] : local) {
            if (name == variant) return ranges;
        }
        return kNothing;
    };
    // What the summary lists now need not be remembered any more.
    for (auto it = copied_.begin(); it != copied_.end();) {
        const SlotRanges& have = local_of(it->first);
        for (auto s = it->second.begin(); s != it->second.end();) {
            if (have.Contains(*s)) {
                s = it->second.erase(s);
                copied_count_--;
            } else {
                ++s;
            }
        }
        it = it->second.empty() ? copied_.erase(it) : std::next(it);
    }

    std::vector<Summary> fresh(peers_.size());
    for (size_t p = 0; p < peers_.size(); p++) {
        if (parts_.conf.peers()[p].copy) {   // copy=off: asked, not copied
            fresh[p] = parts_.peers.Fresh(p, now);
        }
    }
    static const std::set<uint64_t> kNone;
    static const std::map<uint64_t, int64_t> kNoFailures;
    for (int attempt = 0; attempt < kMaxIndexedPerTick; attempt++) {
        bool found = false;
        for (size_t p = 0; p < peers_.size(); p++) {
            for (const auto& [variant, ranges] : fresh[p]) {
                auto c = copied_.find(variant);
                const std::set<uint64_t>& copied =
                    c == copied_.end() ? kNone : c->second;
                auto f = failed_.find({p, variant});
                const std::map<uint64_t, int64_t>& failed =
                    f == failed_.end() ? kNoFailures : f->second;
                size_t limit = std::min(copied.size() + failed.size(),
                                        kMaxSkippedPerSearch) + 1;
                // Only a slot above the best so far can win.
                uint64_t floor = found ? out->slot + 1 : 0;
                if (found && out->slot == UINT64_MAX) {
                    continue;
                }
                for (uint64_t slot :
                     ranges.MissingFrom(local_of(variant), floor, limit)) {
                    if (copied.count(slot) == 0 && failed.count(slot) == 0) {
                        found = true;
                        out->peer = p;
                        out->variant = variant;
                        out->slot = slot;
                        break;
                    }
                }
            }
        }
        if (!found) {
            return false;
        }
        // The summary lags the index by up to a Maintain period (and by
        // what other processes stored since).
        BlockRecord record;
        if (!parts_.cache.Lookup(out->slot, out->variant, &record)) {
            return true;
        }
        if (copied_[out->variant].insert(out->slot).second) {
            copied_count_++;
        }
    }
    return false;
}

void BlockSync::StartCopy(const Candidate& candidate) {
    std::optional<std::string> body =
        BlockRequestBody(candidate.slot, candidate.variant, "1");
    if (!body) {
        return;   // ParseRegionSummary keeps only variants it can ask for
    }
    copy_in_flight_ = true;
    copies_started_++;
    std::weak_ptr<char> alive = alive_;
    transport_.Post(PeerTarget(candidate.peer, kMaxCopyBytes),
                    std::move(*body), kCopyTimeoutMs,
                    [this, alive, candidate](HttpResult reply) {
                        if (!alive.expired()) {
                            OnCopy(candidate, reply);
                        }
                    });
}

void BlockSync::OnCopy(const Candidate& candidate, const HttpResult& reply) {
    copy_in_flight_ = false;
    std::string why = HttpFailure(reply);
    if (why.empty()) {
        BlockCall call;
        call.slot = candidate.slot;
        call.variant = candidate.variant;
        call.source = kSourceRegion;
        call.peer = candidate.peer;
        if (StoreAnswer(parts_.cache, call, reply.body, clock_.WallMs(),
                        &why)) {
            copies_stored_++;
            if (candidate.peer < kMaxBlockPeers) {
                parts_.zone.counters().peer_copies[candidate.peer].fetch_add(
                    1, std::memory_order_relaxed);
            }
            if (copied_[candidate.variant].insert(candidate.slot).second) {
                copied_count_++;
            }
            return;
        }
    }
    copies_failed_++;
    failed_[{candidate.peer, candidate.variant}][candidate.slot] =
        clock_.MonotonicMs() + kCopyRetryMs;
    log_(kLogDebug, "blocks: copying slot " +
                        std::to_string(candidate.slot) + " " +
                        candidate.variant + " from peer \"" +
                        parts_.conf.peers()[candidate.peer].name +
                        "\" failed: " + why);
}

}  // namespace solgate
