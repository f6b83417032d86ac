#include "blocks/block_service.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "blocks/block_capture.h"
#include "blocks/block_variant.h"
#include "json/json_writer.h"
#include "routing/router.h"

namespace solgate {
namespace {

// Cache coverage that getFirstAvailableBlock extends the ledger's window
// with: the variants of a plain getBlock(slot), with or without
// maxSupportedTransactionVersion 0.
constexpr std::string_view kPlainVariants = "getBlock/json/full/r1/";
// Scores and evictions are applied at most this often per process.
constexpr int64_t kLedgerPruneMs = 3600 * 1000;

unsigned RetryAfterSeconds(int64_t ms) {
    int64_t s = (ms + 999) / 1000;
    return static_cast<unsigned>(std::clamp<int64_t>(s, 1, 60));
}

// Compares without stopping at the first difference, so the time taken
// does not tell how much of a guessed token was right.
bool SameToken(std::string_view a, std::string_view b) {
    if (a.size() != b.size() || a.empty()) {
        return false;
    }
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); i++) {
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    }
    return diff == 0;
}

bool IsCubeRunnerMethod(std::string_view method) {
    return IsBlockMethod(method) || method == "getFirstAvailableBlock" ||
           method == kSummaryMethod;
}

// A batch holding a Cube Runner call: keys, plans and limits apply per
// call, so such calls must come alone.
bool BatchWithBlockCalls(const RpcRequest& request) {
    if (request.shape != RpcRequest::Shape::kBatch) {
        return false;
    }
    for (const RpcCall& call : request.calls) {
        if (IsCubeRunnerMethod(call.method)) {
            return true;
        }
    }
    return false;
}

const RpcCall* SingleCall(const RpcRequest& request) {
    if (request.shape != RpcRequest::Shape::kSingle ||
        request.calls.size() != 1 || request.calls[0].error) {
        return nullptr;
    }
    return &request.calls[0];
}

}  // namespace

std::string_view BlockSourceName(int source) {
    switch (source) {
    case kSourceCache:    return "cache";
    case kSourceLedger:   return "ledger";
    case kSourceRegion:   return "region";
    case kSourceLongTerm: return "long_term";
    default:              return "";
    }
}

// --- PeerSummaries ---------------------------------------------------------

void PeerSummaries::Store(
    size_t peer, int64_t now_ms,
    std::vector<std::pair<std::string, SlotRanges>> variants) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (peer < peers_.size()) {
        peers_[peer].fetched_ms = now_ms;
        peers_[peer].variants = std::move(variants);
    }
}

void PeerSummaries::MarkFailed(size_t peer) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (peer < peers_.size()) {
        peers_[peer].fetched_ms = 0;
        peers_[peer].variants.clear();
    }
}

bool PeerSummaries::Holds(size_t peer, std::string_view variant,
                          uint64_t slot, int64_t now_ms) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (peer >= peers_.size() || peers_[peer].fetched_ms == 0 ||
        now_ms - peers_[peer].fetched_ms > kPeerSummaryTtlMs) {
        return false;
    }
    for (const auto& [name, ranges] : peers_[peer].variants) {
        if (name == variant) {
            return ranges.Contains(slot);
        }
    }
    return false;
}

std::vector<std::pair<std::string, SlotRanges>> PeerSummaries::Fresh(
    size_t peer, int64_t now_ms) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (peer >= peers_.size() || peers_[peer].fetched_ms == 0 ||
        now_ms - peers_[peer].fetched_ms > kPeerSummaryTtlMs) {
        return {};
    }
    return peers_[peer].variants;
}

// --- BlockService ----------------------------------------------------------

BlockService::BlockService(BlockServiceConf conf) : conf_(std::move(conf)) {}

BlockService::~BlockService() = default;

void BlockService::Attach(Network& network) {
    network_ = &network;
    network.TrackLedgerWindow();
    network.set_blocks(this);
}

bool BlockService::Bind(void* memory, bool fresh, std::string* error) {
    if (network_ == nullptr) {
        *error = "not attached to a network";
        return false;
    }
    if (conf_.plans.size() > kMaxBlockPlans ||
        conf_.peers.size() > kMaxBlockPeers) {
        *error = "too many plans or peers";
        return false;
    }
    auto* shared = static_cast<BlocksShared*>(memory);
    uint32_t queues = static_cast<uint32_t>(QueuedPlans(conf_));
    if (fresh || shared->magic != BlocksShared::kMagic ||
        shared->layout != BlocksShared::kLayout || shared->queues != queues) {
        std::memset(memory, 0, BlocksSharedSize(conf_));
        shared->magic = BlocksShared::kMagic;
        shared->layout = BlocksShared::kLayout;
        shared->queues = queues;
        InitKeyTable(&shared->keys);
        for (uint32_t i = 0; i < queues; i++) {
            if (!InitRetrievalQueue(QueueAt(memory, i))) {
                *error = "cannot set up a long-term storage queue's mutex";
                return false;
            }
        }
    }
    queues_.assign(conf_.plans.size(), nullptr);
    uint32_t next = 0;
    for (size_t p = 0; p < conf_.plans.size(); p++) {
        if (HasQueue(conf_, p)) {
            queues_[p] = QueueAt(memory, next++);
        }
    }
    shared_ = shared;
    return true;
}

bool BlockService::OpenStore(bool reconcile, std::string* error) {
    BlockStoreOptions options;
    options.cache_dir = conf_.cache_dir;
    options.state_dir = conf_.state_dir;
    store_ = BlockStore::Open(options, reconcile, error);
    if (store_ == nullptr) {
        return false;
    }
    KeyLedgerOptions ledger;
    ledger.state_dir = conf_.state_dir;
    ledger.recover = reconcile;
    ledger_ = KeyLedger::Open(ledger, error);
    if (ledger_ == nullptr) {
        *error = "key ledger: " + *error;
        store_.reset();
        return false;
    }
    return true;
}

void BlockService::CloseStore() {
    RunCommits();
    Maintain(0);
    ledger_.reset();
    store_.reset();
}

BlockDecision BlockService::Answer(const BlockCall& call, unsigned status,
                                   int code, const std::string& message,
                                   const std::string& data_raw,
                                   unsigned retry_after) const {
    BlockDecision d;
    d.kind = BlockDecision::kAnswer;
    d.http_status = status;
    d.retry_after_s = retry_after;
    AppendErrorEnvelope(d.body, call.id_raw, code, message, data_raw);
    return d;
}

BlockDecision BlockService::Decide(const RpcRequest& request,
                                   std::string_view api_key,
                                   std::string_view plan_name,
                                   std::string_view peer_token,
                                   int64_t now_ms, int64_t wall_ms,
                                   BlockCall* call) {
    if (bound() && BatchWithBlockCalls(request)) {
        BlockDecision d;
        d.kind = BlockDecision::kAnswer;
        d.body = FailRequest(request, kInvalidRequest,
                             "Invalid request: getBlock, getConfirmedBlock "
                             "and getFirstAvailableBlock must be sent alone, "
                             "not in a batch");
        return d;
    }
    const RpcCall* rpc = SingleCall(request);
    if (rpc == nullptr || !bound() || !IsCubeRunnerMethod(rpc->method)) {
        return {};
    }
    call->id_raw = rpc->id_raw;
    call->slot = rpc->first_param_u64.value_or(0);
    call->variant = BlockVariant(*rpc).value_or("");
    bool from_peer = SameToken(peer_token, conf_.peer_token);

    if (rpc->method == kSummaryMethod) {
        if (!from_peer) {
            return {};   // not ours to answer: the ledger says "no method"
        }
        BlockDecision d;
        d.kind = BlockDecision::kAnswer;
        AppendResultEnvelope(d.body, call->id_raw, RenderSummary(wall_ms));
        return d;
    }

    // Another region asking for what this region's cache holds.
    if (from_peer && IsBlockMethod(rpc->method)) {
        call->peer_request = true;
        BlockRecord record;
        if (!call->variant.empty() && store_ &&
            store_->Lookup(call->slot, call->variant, &record)) {
            shared_->peer_requests.fetch_add(1, std::memory_order_relaxed);
            BlockDecision d;
            d.kind = BlockDecision::kCache;
            d.path = store_->PathFor(call->slot, call->variant);
            d.record = record;
            return d;
        }
        return NotHeldHere(*call);
    }

    if (api_key.empty()) {
        shared_->unauthorized.fetch_add(1, std::memory_order_relaxed);
        return Answer(*call, 401, kUnauthorized,
                      "Unauthorized: " + rpc->method +
                          " needs an API key",
                      "");
    }
    const BlockPlan* plan = FindPlan(conf_.plans, plan_name);
    if (plan == nullptr) {
        shared_->unauthorized.fetch_add(1, std::memory_order_relaxed);
        return Answer(*call, 401, kUnauthorized,
                      "Unauthorized: the API key has no valid plan", "");
    }
    call->plan = static_cast<size_t>(plan - conf_.plans.data());
    call->api_key.assign(api_key);
    call->wall_ms = wall_ms;

    if (rpc->method == "getFirstAvailableBlock") {
        auto first = FirstAvailableBlock();
        if (!first) {
            return {};   // not known yet: the ledger answers
        }
        BlockDecision d;
        d.kind = BlockDecision::kAnswer;
        AppendResultEnvelope(d.body, call->id_raw, std::to_string(*first));
        return d;
    }

    call->key = FindOrAddKey(&shared_->keys, api_key,
                             static_cast<uint32_t>(call->plan), wall_ms);
    if (call->key != nullptr) {
        LimitVerdict verdict =
            CheckRate(call->key, plan->getblock_rate, now_ms * 1000);
        if (!verdict.allowed) {
            shared_->rate_limited[call->plan].fetch_add(
                1, std::memory_order_relaxed);
            unsigned retry = RetryAfterSeconds(verdict.retry_after_ms);
            std::string data = "{\"slot\":" + std::to_string(call->slot) +
                               ",\"retryAfterSecs\":" +
                               std::to_string(retry) +
                               ",\"reason\":\"rate_limit\"}";
            return Answer(*call, 429, kBlockNotServed,
                          "Rate limit of plan " + plan->name +
                              " exceeded; retry in " + std::to_string(retry) +
                              " seconds",
                          data, retry);
        }
    }

    if (!rpc->first_param_u64) {
        return {};   // the router answers the invalid params
    }
    BlockRecord record;
    if (!call->variant.empty() && store_ &&
        store_->Lookup(call->slot, call->variant, &record)) {
        call->source = kSourceCache;
        NoteRequest(call->slot, call->variant, wall_ms);
        BlockDecision d;
        d.kind = BlockDecision::kCache;
        d.path = store_->PathFor(call->slot, call->variant);
        d.record = record;
        return d;
    }
    return NextSource(call, now_ms);
}

// The ledger when one of its nodes holds the slot (or none knows its window
// yet), else the first other region whose summary lists it, else the tier
// answer.
BlockDecision BlockService::NextSource(BlockCall* call, int64_t now_ms) {
    if (call->source < kSourceLedger) {
        std::optional<uint64_t> first = LedgerFirst();
        if (!first || call->slot >= *first) {
            call->source = kSourceLedger;
            BlockDecision d;
            d.kind = BlockDecision::kLedger;
            return d;
        }
    }
    if (!call->variant.empty()) {
        for (size_t p = call->next_peer; p < conf_.peers.size(); p++) {
            if (summaries_.Holds(p, call->variant, call->slot, now_ms)) {
                call->source = kSourceRegion;
                call->peer = p;
                call->next_peer = p + 1;
                shared_->peer_fetches[p].fetch_add(1,
                                                   std::memory_order_relaxed);
                BlockDecision d;
                d.kind = BlockDecision::kPeer;
                d.peer = p;
                return d;
            }
        }
    }
    call->next_peer = conf_.peers.size();
    if (Queue(call->plan) != nullptr && !call->variant.empty()) {
        return LongTermAnswer(*call, now_ms, call->wall_ms);
    }
    return TierAnswer(*call);
}

// 503: the asking region's failover moves on to its next source.
BlockDecision BlockService::NotHeldHere(const BlockCall& call) const {
    return Answer(call, 503, kBlockCleanedUp,
                  "Block " + std::to_string(call.slot) +
                      " is not held in region " + conf_.region,
                  "");
}

BlockDecision BlockService::AfterPeerFailure(BlockCall* call,
                                             int64_t now_ms) {
    if (call->peer_request) {
        return NotHeldHere(*call);   // another region gets the cache only
    }
    if (call->source == kSourceRegion && call->peer < kMaxBlockPeers) {
        shared_->peer_failures[call->peer].fetch_add(
            1, std::memory_order_relaxed);
    }
    return NextSource(call, now_ms);
}

// No source holds the block. Archive plans get it from long-term storage
// (Cube Runner part 2); until that is configured they get the same answer.
BlockDecision BlockService::TierAnswer(const BlockCall& call) {
    shared_->tier_answers.fetch_add(1, std::memory_order_relaxed);
    uint64_t first = FirstAvailableBlock().value_or(0);
    const BlockPlan& plan = conf_.plans[call.plan];
    bool archive = plan.HasLongTermStorage();
    std::string slot = std::to_string(call.slot);
    std::string data = "{\"slot\":" + slot +
                       ",\"firstAvailableBlock\":" + std::to_string(first) +
                       ",\"reason\":\"" +
                       (archive ? "no_long_term_storage" : "tier") + "\"}";
    return Answer(call, 200, kBlockCleanedUp,
                  "Block " + slot + " not available on this tier. " +
                      "First available block: " + std::to_string(first),
                  data);
}

void BlockService::CountServed(const BlockCall& call, int source,
                               int64_t wall_ms) {
    if (source < 0 || source >= kSourceCount) {
        return;
    }
    shared_->served[source].fetch_add(1, std::memory_order_relaxed);
    if (call.key != nullptr) {
        solgate::CountServed(call.key, source);
    }
    // A cache hit is a block delivered; a ledger or region answer may be
    // an error, so its receipt waits for its capture (BlockCapture::Finish).
    if (source == kSourceCache && ledger_ && !call.api_key.empty()) {
        ledger_->NoteReceipt(call.api_key, call.slot, wall_ms);
    }
}

std::optional<uint64_t> BlockService::LedgerFirst() const {
    std::optional<uint64_t> first;
    for (size_t i = 0; i < network_->size(); i++) {
        std::optional<uint64_t> window = network_->slots().FirstAvailable(i);
        if (window && !network_->Cordoned(i)) {
            first = std::min(first.value_or(UINT64_MAX), *window);
        }
    }
    return first;
}

std::optional<uint64_t> BlockService::FirstAvailableBlock() const {
    std::optional<uint64_t> first = LedgerFirst();
    if (!first || *first == 0) {
        return first;
    }
    uint64_t lowest = *first;
    std::lock_guard<std::mutex> lock(summary_mutex_);
    for (const auto& [variant, ranges] : summary_) {
        if (variant.rfind(kPlainVariants, 0) == 0) {
            if (auto low = ranges.ContiguousDownFrom(*first - 1)) {
                lowest = std::min(lowest, *low);
            }
        }
    }
    return lowest;
}

bool BlockService::Finalized(uint64_t slot, int64_t) const {
    return network_->bound() && slot <= network_->CurrentTips().finalized;
}

// --- retention -------------------------------------------------------------

void BlockService::NoteRequest(uint64_t slot, const std::string& variant,
                               int64_t wall_ms) {
    std::lock_guard<std::mutex> lock(scores_mutex_);
    if (pending_requests_.size() < 65536) {
        pending_requests_.push_back({slot, variant, wall_ms});
    }
}

void BlockService::Maintain(int64_t wall_ms) {
    if (!store_) {
        return;
    }
    std::vector<PendingRequest> requests;
    {
        std::lock_guard<std::mutex> lock(scores_mutex_);
        requests.swap(pending_requests_);
    }
    std::string error;
    if (!requests.empty()) {
        // Several requests for one entry in this batch add up: one index
        // read and one write per entry, however many requests it had.
        std::map<std::pair<uint64_t, std::string>, BlockStore::ScoreUpdate>
            latest;
        for (const PendingRequest& r : requests) {
            auto key = std::make_pair(r.slot, r.variant);
            auto it = latest.find(key);
            if (it == latest.end()) {
                BlockRecord rec;
                if (!store_->Lookup(r.slot, r.variant, &rec)) {
                    continue;
                }
                it = latest.emplace(key, BlockStore::ScoreUpdate{
                                             r.slot, r.variant, rec.score,
                                             rec.score_ms})
                         .first;
            }
            BlockStore::ScoreUpdate& u = it->second;
            u.score = ScoreAfterRequest(u.score, u.score_ms, r.wall_ms,
                                        conf_.retention);
            u.score_ms = std::max(u.score_ms, r.wall_ms);
        }
        std::vector<BlockStore::ScoreUpdate> updates;
        updates.reserve(latest.size());
        for (auto& [key, update] : latest) {
            updates.push_back(std::move(update));
        }
        store_->UpdateScores(updates, &error);
    }
    if (ledger_) {
        ledger_->Flush(&error);
    }
    if (wall_ms != 0) {
        MakeRoom(0, wall_ms);
        RefreshSummary(wall_ms);
        if (ledger_ && wall_ms - last_prune_ms_ >= kLedgerPruneMs) {
            last_prune_ms_ = wall_ms;
            ledger_->Prune(wall_ms, &error);
        }
    }
}

bool BlockService::MakeRoom(uint64_t incoming, int64_t wall_ms) {
    if (!store_ || conf_.max_bytes == 0) {
        return true;
    }
    BlockStore::Totals totals = store_->GetTotals();
    if (totals.bytes + incoming <= conf_.max_bytes) {
        return true;
    }
    std::vector<BlockStore::Entry> entries;
    std::string error;
    if (!store_->List(&entries, &error)) {
        return false;
    }
    std::vector<CachedBlockStat> stats;
    stats.reserve(entries.size());
    for (const auto& e : entries) {
        stats.push_back({e.slot, e.rec.bytes, e.rec.stored_ms, e.rec.score,
                         e.rec.score_ms});
    }
    EvictionPlan plan = PlanEvictions(stats, totals.bytes, incoming,
                                      conf_.max_bytes, wall_ms,
                                      conf_.retention);
    if (!plan.evict.empty()) {
        std::vector<std::pair<uint64_t, std::string>> keys;
        for (size_t i : plan.evict) {
            keys.push_back({entries[i].slot, entries[i].variant});
        }
        store_->Remove(keys, &error);
    }
    return plan.fits;
}

// --- commits off the event loop --------------------------------------------

void BlockService::CommitLater(std::unique_ptr<BlockCapture> capture,
                               int64_t wall_ms) {
    std::function<void()> waker;
    {
        std::lock_guard<std::mutex> lock(commits_mutex_);
        commits_.push_back({std::move(capture), wall_ms});
        waker = commit_waker_;
    }
    if (waker) {
        waker();
    } else {
        RunCommits();
    }
}

void BlockService::RunCommits() {
    std::vector<PendingCommit> commits;
    {
        std::lock_guard<std::mutex> lock(commits_mutex_);
        commits.swap(commits_);
    }
    for (PendingCommit& c : commits) {
        std::string error;
        c.capture->Finish(c.wall_ms, &error);   // not cacheable: dropped
    }
}

void BlockService::SetCommitWaker(std::function<void()> waker) {
    std::lock_guard<std::mutex> lock(commits_mutex_);
    commit_waker_ = std::move(waker);
}

// --- summaries -------------------------------------------------------------

void BlockService::RefreshSummary(int64_t wall_ms) {
    BlockStore::Totals totals = store_->GetTotals();
    uint64_t version = totals.entries * 1000003u + totals.evictions +
                       shared_->stored.load();
    if (version == summary_version_ &&
        wall_ms - summary_ms_ < kPeerSummaryTtlMs) {
        return;
    }
    std::vector<BlockStore::Entry> entries;
    std::string error;
    if (!store_->List(&entries, &error)) {
        return;
    }
    std::vector<std::pair<std::string, SlotRanges>> summary;
    for (const auto& e : entries) {
        if (summary.empty() || summary.back().first != e.variant) {
            summary.push_back({e.variant, SlotRanges()});
        }
        summary.back().second.Add(e.slot);
    }
    std::lock_guard<std::mutex> lock(summary_mutex_);
    summary_ = std::move(summary);
    summary_version_ = version;
    summary_ms_ = wall_ms;
}

std::vector<std::pair<std::string, SlotRanges>> BlockService::LocalSummary()
    const {
    std::lock_guard<std::mutex> lock(summary_mutex_);
    return summary_;
}

std::string BlockService::RenderSummary(int64_t wall_ms) const {
    std::string out = "{\"region\":";
    AppendJsonString(out, conf_.region);
    out += ",\"network\":";
    AppendJsonString(out, network_->name());
    out += ",\"generated_ms\":" + std::to_string(wall_ms);
    out += ",\"variants\":{";
    std::lock_guard<std::mutex> lock(summary_mutex_);
    bool first = true;
    for (const auto& [variant, ranges] : summary_) {
        if (!first) {
            out += ",";
        }
        first = false;
        AppendJsonString(out, variant);
        out += ":";
        AppendJsonString(out, ranges.ToText());
    }
    out += "}}";
    return out;
}

}  // namespace solgate
