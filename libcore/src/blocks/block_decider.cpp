#include "blocks/block_decider.h"

#include <algorithm>
#include <string>

#include "blocks/block_answers.h"
#include "blocks/block_cache.h"
#include "blocks/block_variant.h"
#include "blocks/blocks_shared.h"
#include "blocks/long_term_queues.h"
#include "blocks/region_summaries.h"
#include "blocks/request_scores.h"
#include "routing/network.h"

namespace solgate {
namespace {

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

// A waiting request looks again after 2 ms, then twice as long each time,
// at most every 32 ms: an answer stored right after another was sent is
// found at once, a slow fetch is not asked after a thousand times.
constexpr int64_t kFirstWaitStepMs = 2;
constexpr int64_t kLongestWaitStepMs = 32;

const RpcCall* SingleCall(const RpcRequest& request) {
    if (request.shape != RpcRequest::Shape::kSingle ||
        request.calls.size() != 1 || request.calls[0].error) {
        return nullptr;
    }
    return &request.calls[0];
}

}  // namespace

bool IsCubeRunnerMethod(std::string_view method) {
    return IsBlockMethod(method) || method == "getFirstAvailableBlock" ||
           method == kSummaryMethod;
}

BlockDecider::BlockDecider(const BlockServiceConf& conf,
                           const Network& network, SharedBlocks& zone,
                           BlockCache& cache, const CacheSummary& local,
                           const PeerSummaries& peers,
                           LongTermQueues& long_term, RequestScores& scores)
    : conf_(conf),
      network_(network),
      zone_(zone),
      cache_(cache),
      local_(local),
      peers_(peers),
      long_term_(long_term),
      scores_(scores) {}

BlockDecision BlockDecider::Decide(const RpcRequest& request,
                                   std::string_view api_key,
                                   std::string_view plan_name,
                                   std::string_view peer_token,
                                   int64_t now_ms, int64_t wall_ms,
                                   BlockCall* call, std::string_view client) {
    const RpcCall* rpc = SingleCall(request);
    if (rpc == nullptr || !zone_.bound() || !IsCubeRunnerMethod(rpc->method)) {
        return {};
    }
    if (rpc->id_raw.empty() && !rpc->error) {
        // a notification (no "id"), which gets no answer: the node's to
        // take, never a block served, a key's rate or allowance spent
        return {};
    }
    call->id_raw = rpc->id_raw;
    call->slot = rpc->first_param_u64.value_or(0);
    call->variant = BlockVariant(*rpc).value_or("");
    call->commitment = rpc->commitment;
    bool from_peer = SameToken(peer_token, conf_.peer_token());

    if (rpc->method == kSummaryMethod) {
        if (!from_peer) {
            return {};   // not ours to answer: the ledger says "no method"
        }
        return ResultAnswer(
            *call, local_.Render(conf_.region(), network_.name(), wall_ms));
    }
    if (from_peer && IsBlockMethod(rpc->method)) {
        return ForPeer(call);
    }
    // a malformed call, or a block call without a slot: the router answers
    // its error (-32600, -32602) whoever asks, before any key is asked for
    // or any rate spent
    if (rpc->error || (IsBlockMethod(rpc->method) && !rpc->first_param_u64)) {
        return {};
    }

    BlocksHostCounters& counters = zone_.counters();
    std::string keyless;
    BlockCaller caller = CallerOf(conf_, api_key, plan_name, client, &keyless);
    api_key = caller.api_key;
    plan_name = caller.plan;
    if (api_key.empty()) {
        counters.unauthorized.fetch_add(1, std::memory_order_relaxed);
        return NoApiKey(*call, rpc->method);
    }
    const BlockPlan* plan = FindPlan(conf_.plans(), plan_name);
    if (plan == nullptr) {
        counters.unauthorized.fetch_add(1, std::memory_order_relaxed);
        return NoValidPlan(*call);
    }
    call->plan = static_cast<size_t>(plan - conf_.plans().data());
    call->api_key.assign(api_key);
    call->wall_ms = wall_ms;

    if (rpc->method == "getFirstAvailableBlock") {
        std::optional<uint64_t> first = FirstAvailableBlock();
        if (!first) {
            return {};   // not known yet: the ledger answers
        }
        return ResultAnswer(*call, std::to_string(*first));
    }

    KeyStore& keys = zone_.keys();
    call->key =
        keys.FindOrAdd(api_key, static_cast<uint32_t>(call->plan), wall_ms);
    if (call->key) {
        LimitVerdict verdict =
            keys.CheckRate(*call->key, plan->getblock_rate, now_ms * 1000);
        if (!verdict.allowed) {
            counters.rate_limited[call->plan].fetch_add(
                1, std::memory_order_relaxed);
            return RateLimited(*call, *plan,
                               RetryAfterForMs(verdict.retry_after_ms));
        }
    }

    BlockDecision hit;
    if (ServeFromCache(call, &hit)) {
        return hit;
    }
    return NextSource(call, now_ms);
}

bool BlockDecider::ServeFromCache(BlockCall* call, BlockDecision* hit) {
    if (call->cache_failed || !CacheHit(*call, hit)) {
        return false;
    }
    call->source = kSourceCache;
    scores_.Note(call->slot, call->variant, call->wall_ms);
    return true;
}

BlockDecision BlockDecider::AfterWait(BlockCall* call, int64_t now_ms) {
    BlockDecision hit;
    if (ServeFromCache(call, &hit)) {
        return hit;
    }
    if (now_ms < call->wait_until_ms) {
        if (FetchedElsewhere(*call, now_ms)) {
            return WaitStep(call, now_ms);
        }
    } else {
        // the other fetch took as long as the wait may: fetch it here
        zone_.counters().lock_timeouts.fetch_add(1,
                                                 std::memory_order_relaxed);
        call->may_wait = false;
    }
    // the other fetch stored nothing (or took too long)
    return NextSource(call, now_ms);
}

bool BlockDecider::FetchedElsewhere(const BlockCall& call,
                                    int64_t now_ms) const {
    return zone_.flights().Holding(FlightKey(call.slot, call.variant),
                                   now_ms);
}

BlockDecision BlockDecider::WaitStep(BlockCall* call, int64_t now_ms) {
    int64_t step = std::min(kFirstWaitStepMs << std::min(call->waits, 8),
                            kLongestWaitStepMs);
    call->waits++;
    BlockDecision d;
    d.kind = BlockDecision::kWait;
    d.wait_ms = std::max<int64_t>(
        1, std::min(step, call->wait_until_ms - now_ms));
    return d;
}

// The call is about to be fetched from `source`. When that answer will be
// stored, the fetch is the block's flight: claimed here, or, if another
// request holds it, waited for (kWait). A claim finds the block stored if
// the last holder stored it since the lookup (the cache hit is returned).
// nullopt: go on to the source.
std::optional<BlockDecision> BlockDecider::JoinFlight(BlockCall* call,
                                                      int source,
                                                      int64_t now_ms) {
    int64_t timeout = conf_.cache_lock_timeout_ms();
    if (call->flight.held() || pid_ == 0 || timeout == 0 ||
        call->variant.empty() || !WillCapture(source, call->slot, now_ms)) {
        return std::nullopt;
    }
    // Held twice as long as a wait may last, so that a request waits out
    // its own timeout rather than see the flight expire first; a holder
    // that crashed holds up new requests for at most that long.
    call->flight = zone_.flights().Claim(FlightKey(call->slot, call->variant),
                                         pid_, now_ms, 2 * timeout);
    if (call->flight.held()) {
        BlockDecision hit;
        if (!ServeFromCache(call, &hit)) {
            return std::nullopt;
        }
        call->flight.Release();
        return hit;
    }
    if (!call->may_wait || !FetchedElsewhere(*call, now_ms)) {
        return std::nullopt;   // no room in the table, or may not wait
    }
    if (call->wait_until_ms == 0) {
        zone_.counters().lock_waits.fetch_add(1, std::memory_order_relaxed);
        call->wait_until_ms = now_ms + timeout;
    }
    return WaitStep(call, now_ms);
}

// Another region asking for what this region's cache holds: only that.
BlockDecision BlockDecider::ForPeer(BlockCall* call) {
    call->peer_request = true;
    BlockDecision hit;
    if (!CacheHit(*call, &hit)) {
        return NotHeldHere(*call, conf_.region());
    }
    zone_.counters().peer_requests.fetch_add(1, std::memory_order_relaxed);
    return hit;
}

bool BlockDecider::CacheHit(const BlockCall& call, BlockDecision* hit) const {
    BlockRecord record;
    if (call.variant.empty() ||
        !cache_.Lookup(call.slot, call.variant, &record)) {
        return false;
    }
    hit->kind = BlockDecision::kCache;
    hit->path = cache_.PathFor(call.slot, call.variant);
    hit->record = record;
    return true;
}

// The ledger when one of its nodes holds the slot (or none knows its window
// yet), else the first other region whose summary lists it, else long-term
// storage or the tier answer.
BlockDecision BlockDecider::NextSource(BlockCall* call, int64_t now_ms) {
    if (call->source < kSourceLedger) {
        std::optional<uint64_t> first = LedgerFirst();
        if (!first || call->slot >= *first) {
            if (auto other = JoinFlight(call, kSourceLedger, now_ms)) {
                return *other;
            }
            call->source = kSourceLedger;
            BlockDecision d;
            d.kind = BlockDecision::kLedger;
            d.body = ForwardBody(*call);
            return d;
        }
    }
    if (!call->variant.empty()) {
        for (size_t p = call->next_peer; p < conf_.peers().size(); p++) {
            if (peers_.Holds(p, call->variant, call->slot, now_ms)) {
                if (auto other = JoinFlight(call, kSourceRegion, now_ms)) {
                    return *other;
                }
                call->source = kSourceRegion;
                call->peer = p;
                call->next_peer = p + 1;
                zone_.counters().peer_fetches[p].fetch_add(
                    1, std::memory_order_relaxed);
                BlockDecision d;
                d.kind = BlockDecision::kPeer;
                d.peer = p;
                d.body = ForwardBody(*call);
                return d;
            }
        }
    }
    call->next_peer = conf_.peers().size();
    return NoSource(*call, now_ms);
}

// No source holds the block: archive plans queue it for long-term storage
// (Cube Runner part 2); everyone else gets the tier answer.
BlockDecision BlockDecider::NoSource(const BlockCall& call, int64_t now_ms) {
    if (!long_term_.HasQueue(call.plan) || call.variant.empty()) {
        return TierAnswerFor(call);
    }
    if (network_.bound() && network_.counters().fleet_link.load(
                                std::memory_order_relaxed) == kFleetLinkDown) {
        // the region's counts cannot be asked: queue nothing to count
        return SharedStateUnavailable(call);
    }
    const BlockPlan& plan = conf_.plans()[call.plan];
    BlockDecision d = LongTermAnswer(
        call, plan, long_term_.Admit(call, now_ms, call.wall_ms));
    return d.kind == BlockDecision::kPass ? TierAnswerFor(call) : d;
}

BlockDecision BlockDecider::TierAnswerFor(const BlockCall& call) {
    zone_.counters().tier_answers.fetch_add(1, std::memory_order_relaxed);
    return TierAnswer(call, FirstAvailableBlock().value_or(0),
                      conf_.plans()[call.plan].HasLongTermStorage());
}

BlockDecision BlockDecider::AfterSourceFailure(BlockCall* call,
                                             int64_t now_ms) {
    if (call->source == kSourceCache && !call->cache_failed) {
        // the entry cannot be served: never again, for any request (the
        // next capture of the block stores it anew)
        call->cache_failed = true;
        cache_.Drop(call->slot, call->variant);
    }
    if (call->peer_request) {
        // another region gets the cache only
        return NotHeldHere(*call, conf_.region());
    }
    if (call->source == kSourceRegion && call->peer < kMaxBlockPeers) {
        zone_.counters().peer_failures[call->peer].fetch_add(
            1, std::memory_order_relaxed);
    }
    call->may_wait = false;   // it is past waiting: on to the next source
    return NextSource(call, now_ms);
}

void BlockDecider::CountServed(const BlockCall& call, int source,
                               int64_t wall_ms) {
    if (source < 0 || source >= kSourceCount || !zone_.bound()) {
        return;
    }
    zone_.counters().served[source].fetch_add(1, std::memory_order_relaxed);
    if (call.key) {
        zone_.keys().CountServed(*call.key, source);
    }
    // A cache hit is a block delivered; a ledger or region answer may be
    // an error, so its receipt waits for its capture (BlockCapture::Finish).
    if (source == kSourceCache && !call.api_key.empty()) {
        cache_.NoteReceipt(call.api_key, call.slot, wall_ms);
    }
}

bool BlockDecider::WantsCapture(const BlockCall& call, bool content_encoded,
                                int64_t now_ms) const {
    return !content_encoded && WillCapture(call.source, call.slot, now_ms);
}

bool BlockDecider::WillCapture(int source, uint64_t slot,
                               int64_t now_ms) const {
    return source == kSourceRegion ||
           (source == kSourceLedger && Finalized(slot, now_ms));
}

bool BlockDecider::Finalized(uint64_t slot, int64_t) const {
    return network_.bound() && slot <= network_.CurrentTips().finalized;
}

std::string BlockDecider::ForwardBody(const BlockCall& call) {
    if (call.variant.empty()) {
        return "";
    }
    std::string_view commitment =
        call.commitment ? CommitmentName(*call.commitment) : "";
    return BlockRequestBody(call.slot, call.variant, call.id_raw, commitment)
        .value_or("");
}

std::optional<uint64_t> BlockDecider::LedgerFirst() const {
    std::optional<uint64_t> first;
    for (size_t i = 0; i < network_.size(); i++) {
        std::optional<uint64_t> window = network_.slots().FirstAvailable(i);
        if (window && !network_.Cordoned(i)) {
            first = std::min(first.value_or(UINT64_MAX), *window);
        }
    }
    return first;
}

std::optional<uint64_t> BlockDecider::FirstAvailableBlock() const {
    std::optional<uint64_t> first = LedgerFirst();
    if (!first) {
        return first;
    }
    return local_.ExtendDown(*first);
}

}  // namespace solgate
