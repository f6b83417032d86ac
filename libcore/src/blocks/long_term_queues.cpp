#include "blocks/long_term_queues.h"

#include <algorithm>
#include <vector>

#include "blocks/blocks_shared.h"
#include "blocks/key_accounts.h"
#include "slots/shared_state.h"

namespace solgate {

LongTermQueues::LongTermQueues(const BlockServiceConf& conf,
                               SharedBlocks& zone, KeyAccounts& accounts)
    : conf_(conf), zone_(zone), accounts_(accounts) {}

bool LongTermQueues::bound() const { return zone_.bound(); }

bool LongTermQueues::HasQueue(size_t plan) const {
    return QueueOf(plan) != nullptr;
}

RetrievalQueueShared* LongTermQueues::QueueOf(size_t plan) const {
    return zone_.queue(plan);
}

uint32_t LongTermQueues::RepeatCountOf(uint32_t key_index, void* lookup) {
    const auto* l = static_cast<const RepeatLookup*>(lookup);
    const LongTermQueues& q = *l->queues;
    if (!q.accounts_.open()) {
        return 0;
    }
    return static_cast<uint32_t>(
        q.accounts_.RepeatCount(q.zone_.KeyText(key_index), l->wall_ms));
}

LongTermVerdict LongTermQueues::Admit(const BlockCall& call,
                                      int64_t now_ms, int64_t wall_ms) {
    LongTermVerdict verdict;
    RetrievalQueueShared* queue = QueueOf(call.plan);
    if (queue == nullptr) {
        return verdict;   // kUnavailable
    }
    const BlockPlan& plan = conf_.plans()[call.plan];
    if (call.key == nullptr) {
        verdict.kind = LongTermVerdict::kTooManyKeys;
        return verdict;
    }
    if (plan.monthly_allowance > 0 && accounts_.open() &&
        accounts_.AllowanceUsed(call.api_key, wall_ms) >=
            plan.monthly_allowance) {
        zone_.shared().allowance_refusals[call.plan].fetch_add(1);
        verdict.kind = LongTermVerdict::kAllowanceSpent;
        return verdict;
    }
    auto index = static_cast<uint32_t>(call.key - zone_.shared().keys.entries);
    RepeatLookup lookup{this, wall_ms};
    verdict.queue = RequestBlock(
        queue, index, call.slot, call.variant, now_ms,
        static_cast<uint32_t>(std::min<uint64_t>(plan.queue_limit,
                                                 kQueueCapacity)),
        plan.retrieval_rate, RepeatFn{&LongTermQueues::RepeatCountOf, &lookup});
    return verdict;
}

bool LongTermQueues::ClaimRetrievals(size_t plan, uint32_t pid,
                                     int64_t now_ms, int64_t ttl_ms) {
    return zone_.bound() && plan < kMaxBlockPlans &&
           ClaimLease(zone_.shared().retrieval_lease[plan], pid, now_ms,
                      ttl_ms);
}

void LongTermQueues::ReleaseRetrievals(size_t plan, uint32_t pid) {
    if (zone_.bound() && plan < kMaxBlockPlans) {
        ReleaseLease(zone_.shared().retrieval_lease[plan], pid);
    }
}

std::optional<Retrieval> LongTermQueues::Next(size_t plan, int64_t now_ms,
                                              int64_t wall_ms,
                                              uint32_t max_in_flight,
                                              int64_t stale_ms) {
    RetrievalQueueShared* queue = QueueOf(plan);
    if (queue == nullptr) {
        return std::nullopt;
    }
    RepeatLookup lookup{this, wall_ms};
    return NextRetrieval(queue, now_ms, conf_.plans()[plan].retrieval_rate,
                         max_in_flight, stale_ms,
                         RepeatFn{&LongTermQueues::RepeatCountOf, &lookup});
}

void LongTermQueues::Complete(size_t plan, const Retrieval& retrieval,
                              bool ok, int64_t now_ms, int64_t wall_ms) {
    RetrievalQueueShared* queue = QueueOf(plan);
    if (queue == nullptr) {
        return;
    }
    std::vector<uint32_t> waiters = CompleteRetrieval(
        queue, retrieval.index, retrieval.generation, ok, now_ms);
    if (!ok || waiters.empty()) {
        return;
    }
    BlocksShared& shared = zone_.shared();
    std::vector<std::string> keys;
    for (uint32_t w : waiters) {
        std::string key = zone_.KeyText(w);
        if (key.empty()) {
            continue;
        }
        keys.push_back(std::move(key));
        shared.served[kSourceLongTerm].fetch_add(1);
        CountServed(&shared.keys.entries[w], kSourceLongTerm);
    }
    if (accounts_.open() && !keys.empty()) {
        size_t repeats =
            accounts_.CountRetrieval(keys, retrieval.slot, wall_ms);
        shared.repeats_counted[plan].fetch_add(repeats);
        shared.allowance_counted[plan].fetch_add(keys.size());
    }
}

std::optional<QueueStats> LongTermQueues::Stats(size_t plan,
                                                int64_t now_ms) const {
    RetrievalQueueShared* queue = QueueOf(plan);
    if (queue == nullptr) {
        return std::nullopt;
    }
    return GetQueueStats(queue, now_ms);
}

}  // namespace solgate
