#include "blocks/long_term_queues.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "blocks/blocks_shared.h"

namespace solgate {
namespace {

// Hand-outs without pacing (the queue's token bucket is not used).
constexpr double kUnpacedRate = std::numeric_limits<double>::infinity();

}  // namespace

LongTermQueues::LongTermQueues(const BlockServiceConf& conf,
                               SharedBlocks& zone)
    : conf_(conf), zone_(zone) {}

bool LongTermQueues::bound() const { return zone_.bound(); }

bool LongTermQueues::HasQueue(size_t plan) const {
    return QueueOf(plan) != nullptr;
}

QueueStore* LongTermQueues::QueueOf(size_t plan) const {
    return zone_.queue(plan);
}

uint32_t LongTermQueues::AllowanceLeftOf(KeyId, void* lookup) {
    const auto* l = static_cast<const AllowanceLookup*>(lookup);
    const BlockPlan& plan = l->queues->conf_.plans()[l->call->plan];
    uint64_t used = l->queues->zone_.allowances().AllowanceUsed(
        l->call->api_key, l->wall_ms);
    uint64_t left = used < plan.monthly_allowance
                        ? plan.monthly_allowance - used
                        : 0;
    return static_cast<uint32_t>(std::min<uint64_t>(left, kNoKeyLimit - 1));
}

uint32_t LongTermQueues::RepeatCountOf(KeyId key, void* lookup) {
    const auto* l = static_cast<const RepeatLookup*>(lookup);
    const SharedBlocks& zone = l->queues->zone_;
    if (!zone.allowances().open()) {
        return 0;
    }
    return static_cast<uint32_t>(zone.allowances().RepeatCount(
        zone.keys().Text(key), l->wall_ms));
}

LongTermVerdict LongTermQueues::Admit(const BlockCall& call,
                                      int64_t now_ms, int64_t wall_ms) {
    LongTermVerdict verdict;
    QueueStore* queue = QueueOf(call.plan);
    if (queue == nullptr) {
        return verdict;   // kUnavailable
    }
    const BlockPlan& plan = conf_.plans()[call.plan];
    if (!call.key) {
        verdict.kind = LongTermVerdict::kTooManyKeys;
        return verdict;
    }
    // What is left of the allowance bounds the blocks the key may wait
    // for: each will count when it is retrieved, so the queue reads it and
    // adds in one step (concurrent requests cannot overspend it).
    AllowanceLookup left{this, &call, wall_ms};
    KeyLimitFn key_limit;
    if (plan.monthly_allowance > 0 && zone_.allowances().open()) {
        key_limit = KeyLimitFn{&LongTermQueues::AllowanceLeftOf, &left};
    }
    RepeatLookup lookup{this, wall_ms};
    // Each store bounds the limit by what it can hold.
    verdict.queue = queue->Request(
        *call.key, call.slot, call.variant, now_ms,
        static_cast<uint32_t>(std::min<uint64_t>(plan.queue_limit,
                                                 UINT32_MAX)),
        plan.retrieval_rate, RepeatFn{&LongTermQueues::RepeatCountOf, &lookup},
        key_limit);
    if (verdict.queue.outcome == QueueOutcome::kAllowanceSpent) {
        zone_.counters().allowance_refusals[call.plan].fetch_add(1);
        verdict.kind = LongTermVerdict::kAllowanceSpent;
    }
    return verdict;
}

bool LongTermQueues::ClaimRetrievals(size_t plan, uint32_t pid,
                                     int64_t now_ms, int64_t ttl_ms) {
    return zone_.bound() && plan < kMaxBlockPlans &&
           zone_.leases().ClaimLease(RetrievalLease(plan), pid, now_ms,
                                     ttl_ms);
}

void LongTermQueues::ReleaseRetrievals(size_t plan, uint32_t pid) {
    if (zone_.bound() && plan < kMaxBlockPlans) {
        zone_.leases().ReleaseLease(RetrievalLease(plan), pid);
    }
}

std::optional<Retrieval> LongTermQueues::Next(size_t plan, int64_t now_ms,
                                              int64_t wall_ms,
                                              uint32_t max_in_flight,
                                              int64_t stale_ms) {
    if (plan >= conf_.plans().size()) {
        return std::nullopt;
    }
    return HandOut(plan, now_ms, wall_ms, conf_.plans()[plan].retrieval_rate,
                   max_in_flight, stale_ms);
}

std::optional<Retrieval> LongTermQueues::NextToForward(size_t plan,
                                                       int64_t now_ms,
                                                       int64_t wall_ms,
                                                       int64_t stale_ms) {
    return HandOut(plan, now_ms, wall_ms, kUnpacedRate,
                   static_cast<uint32_t>(kQueueCapacity), stale_ms);
}

std::optional<Retrieval> LongTermQueues::HandOut(size_t plan, int64_t now_ms,
                                                 int64_t wall_ms, double rate,
                                                 uint32_t max_in_flight,
                                                 int64_t stale_ms) {
    QueueStore* queue = QueueOf(plan);
    if (queue == nullptr) {
        return std::nullopt;
    }
    RepeatLookup lookup{this, wall_ms};
    return queue->Next(now_ms, rate, max_in_flight, stale_ms,
                       RepeatFn{&LongTermQueues::RepeatCountOf, &lookup});
}

void LongTermQueues::AdmitForwarded(size_t plan, uint64_t slot,
                                    const std::string& variant,
                                    const std::vector<std::string>& keys,
                                    int64_t now_ms, int64_t wall_ms) {
    if (!zone_.bound() || plan >= conf_.plans().size()) {
        return;
    }
    for (const std::string& key : keys) {
        BlockCall call;
        call.plan = plan;
        call.slot = slot;
        call.variant = variant;
        call.api_key = key;
        call.wall_ms = wall_ms;
        call.key = zone_.keys().FindOrAdd(key, static_cast<uint32_t>(plan),
                                          now_ms);
        Admit(call, now_ms, wall_ms);   // refusals: the asking host's copy
                                        // of the counts tells its client
    }
}

bool LongTermQueues::AllSpent(size_t plan,
                              const std::vector<std::string>& keys,
                              int64_t wall_ms) const {
    if (plan >= conf_.plans().size() || !zone_.allowances().open()) {
        return false;
    }
    uint64_t allowance = conf_.plans()[plan].monthly_allowance;
    if (allowance == 0) {
        return false;
    }
    for (const std::string& key : keys) {
        if (zone_.allowances().AllowanceUsed(key, wall_ms) < allowance) {
            return false;
        }
    }
    return true;
}

void LongTermQueues::Complete(size_t plan, const Retrieval& retrieval,
                              bool ok, int64_t now_ms, int64_t wall_ms,
                              RetrievalEnd end) {
    QueueStore* queue = QueueOf(plan);
    if (queue == nullptr) {
        return;
    }
    // Counted before the queue lets the block go: until then its waiters
    // still wait for it, so a request checked meanwhile sees the count or
    // the wait, never neither. (A key joining between the two steps gets
    // the block uncounted: never more than the allowance.)
    if (end == RetrievalEnd::kOtherHost) {
        queue->LetGo(retrieval, now_ms);   // not retrieved here
        return;
    }
    if (ok && end == RetrievalEnd::kHere) {
        CountFor(plan, queue->Waiters(retrieval), retrieval.slot, wall_ms);
    }
    std::vector<KeyId> waiters = queue->Complete(retrieval, ok, now_ms);
    if (!ok || waiters.empty()) {
        return;
    }
    // (kCountedRegion: the retriever counts the repeats once the region
    // answers whose receipts it holds, CountRepeatsInRegion)
    BlocksHostCounters& counters = zone_.counters();
    KeyStore& key_store = zone_.keys();
    for (KeyId w : waiters) {
        if (!key_store.Text(w).empty()) {
            counters.served[kSourceLongTerm].fetch_add(1);
            key_store.CountServed(w, kSourceLongTerm);
        }
    }
}

std::vector<std::string> LongTermQueues::WaiterKeys(
    size_t plan, const Retrieval& retrieval) {
    QueueStore* queue = QueueOf(plan);
    return queue == nullptr ? std::vector<std::string>()
                            : KeysOf(queue->Waiters(retrieval));
}

void LongTermQueues::TakeRegionCounts(
    const std::vector<std::pair<std::string, uint64_t>>& used,
    int64_t wall_ms) {
    if (zone_.bound() && zone_.allowances().open() && !used.empty()) {
        zone_.allowances().SetAllowanceUsed(used, wall_ms);
    }
}

void LongTermQueues::CountedInRegion(size_t plan, size_t keys) {
    if (zone_.bound() && plan < kMaxBlockPlans) {
        zone_.counters().allowance_counted[plan].fetch_add(keys);
    }
}

void LongTermQueues::MarkCountedInRegion(
    size_t plan, const Retrieval& retrieval,
    const std::vector<std::string>& keys) {
    QueueStore* queue = QueueOf(plan);
    if (queue == nullptr || keys.empty()) {
        return;
    }
    KeyStore& key_store = zone_.keys();
    std::vector<KeyId> counted;
    for (KeyId w : queue->Waiters(retrieval)) {
        if (std::find(keys.begin(), keys.end(), key_store.Text(w)) !=
            keys.end()) {
            counted.push_back(w);
        }
    }
    queue->MarkCounted(retrieval, counted);
}

size_t LongTermQueues::CountRepeatsInRegion(
    size_t plan, const std::vector<std::string>& keys,
    const std::vector<bool>& region_received, uint64_t slot,
    int64_t wall_ms) {
    AllowanceStore& allowances = zone_.allowances();
    if (!zone_.bound() || plan >= kMaxBlockPlans || !allowances.open()) {
        return 0;
    }
    std::vector<std::string> found;
    std::vector<std::string> local;
    for (size_t i = 0; i < keys.size(); i++) {
        bool region = i < region_received.size() && region_received[i];
        (region ? found : local).push_back(keys[i]);
    }
    allowances.AddRepeats(found, wall_ms);
    size_t repeats = found.size() + allowances.CountRepeats(local, slot,
                                                             wall_ms);
    zone_.counters().repeats_counted[plan].fetch_add(repeats);
    return repeats;
}

std::vector<std::string> LongTermQueues::KeysOf(
    const std::vector<KeyId>& ids) const {
    KeyStore& key_store = zone_.keys();
    std::vector<std::string> keys;
    for (KeyId id : ids) {
        std::string key = key_store.Text(id);
        if (!key.empty()) {
            keys.push_back(std::move(key));
        }
    }
    return keys;
}

void LongTermQueues::CountFor(size_t plan, const std::vector<KeyId>& waiters,
                              uint64_t slot, int64_t wall_ms) {
    std::vector<std::string> keys = KeysOf(waiters);
    AllowanceStore& allowances = zone_.allowances();
    if (allowances.open() && !keys.empty()) {
        BlocksHostCounters& counters = zone_.counters();
        size_t repeats = allowances.CountRetrieval(keys, slot, wall_ms);
        counters.repeats_counted[plan].fetch_add(repeats);
        counters.allowance_counted[plan].fetch_add(keys.size());
    }
}

std::optional<QueueStats> LongTermQueues::Stats(size_t plan,
                                                int64_t now_ms) const {
    QueueStore* queue = QueueOf(plan);
    if (queue == nullptr) {
        return std::nullopt;
    }
    return queue->Stats(now_ms);
}

}  // namespace solgate
