// Cube Runner, part 2, in the request path: blocks that no cache, ledger
// or region holds are queued for retrieval from long-term storage (archive
// plans), within the key's monthly allowance; what a retrieval brings is
// counted for every key that waited for it.  The retrieving itself runs on
// the poller thread (long_term_retriever.h).
#include <cmath>
#include <cstring>

#include "blocks/block_service.h"
#include "json/json_writer.h"

namespace solgate {
namespace {

constexpr size_t kQueueAlign = 64;

size_t RoundUp(size_t n) {
    return (n + kQueueAlign - 1) / kQueueAlign * kQueueAlign;
}

}  // namespace

bool HasQueue(const BlockServiceConf& conf, size_t p) {
    return !conf.long_term_urls.empty() && p < conf.plans.size() &&
           conf.plans[p].HasLongTermStorage();
}

size_t QueuedPlans(const BlockServiceConf& conf) {
    size_t n = 0;
    for (size_t p = 0; p < conf.plans.size(); p++) {
        n += HasQueue(conf, p) ? 1 : 0;
    }
    return n;
}

RetrievalQueueShared* QueueAt(void* zone, size_t i) {
    auto* base =
        static_cast<unsigned char*>(zone) + RoundUp(sizeof(BlocksShared));
    return reinterpret_cast<RetrievalQueueShared*>(
        base + i * RoundUp(sizeof(RetrievalQueueShared)));
}

size_t BlocksSharedSize(const BlockServiceConf& conf) {
    return RoundUp(sizeof(BlocksShared)) +
           QueuedPlans(conf) * RoundUp(sizeof(RetrievalQueueShared));
}

RetrievalQueueShared* BlockService::Queue(size_t plan) const {
    return plan < queues_.size() ? queues_[plan] : nullptr;
}

std::string BlockService::KeyText(uint32_t key_index) const {
    if (key_index >= KeyTable::kCapacity) {
        return "";
    }
    const KeyEntry& e = shared_->keys.entries[key_index];
    if (e.ready.load(std::memory_order_acquire) == 0) {
        return "";
    }
    return std::string(e.text, strnlen(e.text, sizeof(e.text)));
}

uint32_t BlockService::RepeatCountOf(uint32_t key_index, void* lookup) {
    const auto* l = static_cast<const RepeatLookup*>(lookup);
    if (!l->service->ledger_) {
        return 0;
    }
    return l->service->ledger_->RepeatCount(l->service->KeyText(key_index),
                                            l->wall_ms);
}

BlockDecision BlockService::NotServed(const BlockCall& call,
                                      const std::string& message,
                                      std::string_view reason,
                                      unsigned retry_after) {
    std::string data = "{\"slot\":" + std::to_string(call.slot) +
                       ",\"retryAfterSecs\":" + std::to_string(retry_after) +
                       ",\"reason\":\"" + std::string(reason) + "\"}";
    return Answer(call, 429, kBlockNotServed, message, data, retry_after);
}

BlockDecision BlockService::LongTermAnswer(const BlockCall& call,
                                           int64_t now_ms, int64_t wall_ms) {
    const BlockPlan& plan = conf_.plans[call.plan];
    std::string slot = std::to_string(call.slot);
    if (call.key == nullptr) {
        // The key table is full: the queue could not tell this key apart.
        return NotServed(call,
                         "Block " + slot + " was not queued: too many keys",
                         "queue_full", kMaxRetryAfterS);
    }
    if (plan.monthly_allowance > 0 && ledger_ &&
        ledger_->AllowanceUsed(call.api_key, wall_ms) >=
            plan.monthly_allowance) {
        shared_->allowance_refusals[call.plan].fetch_add(1);
        // The allowance resets at the month's end, further away than
        // Retry-After may say: the most it may.
        unsigned retry = kMaxRetryAfterS;
        return NotServed(call,
                         "Block " + slot + " was not retrieved: the monthly "
                         "allowance of plan " + plan.name + " (" +
                             std::to_string(plan.monthly_allowance) +
                             " blocks) is spent; it resets on the 1st at "
                             "00:00 UTC",
                         "allowance", retry);
    }
    auto index = static_cast<uint32_t>(call.key - shared_->keys.entries);
    RepeatLookup lookup{this, wall_ms};
    QueueAnswer answer = RequestBlock(
        Queue(call.plan), index, call.slot, call.variant, now_ms,
        static_cast<uint32_t>(std::min<uint64_t>(plan.queue_limit,
                                                 kQueueCapacity)),
        plan.retrieval_rate, RepeatFn{&BlockService::RepeatCountOf, &lookup});
    unsigned retry = answer.retry_after_s;
    std::string in = "; retry in " + std::to_string(retry) + " seconds";
    switch (answer.outcome) {
    case QueueOutcome::kQueued: {
        std::string data = "{\"slot\":" + slot + ",\"retryAfterSecs\":" +
                           std::to_string(retry) + ",\"queuePosition\":" +
                           std::to_string(answer.position) + "}";
        return Answer(call, 429, kBlockNotServed,
                      "Block " + slot +
                          " is being retrieved from long-term storage" + in,
                      data, retry);
    }
    case QueueOutcome::kQueueFull:
        return NotServed(call,
                         "Block " + slot + " was not queued: the long-term "
                         "storage queue of plan " + plan.name + " is full" +
                             in,
                         "queue_full", retry);
    case QueueOutcome::kDropped:
        return NotServed(call,
                         "Block " + slot + " was dropped from the long-term "
                         "storage queue after 150 seconds without a "
                         "request; it is queued again" + in,
                         "dropped", retry);
    case QueueOutcome::kStorageFailed:
        return NotServed(call,
                         "Long-term storage did not return block " + slot +
                             "; it is queued again" + in,
                         "storage_failed", retry);
    case QueueOutcome::kUnavailable:
        break;
    }
    return TierAnswer(call);
}

void BlockService::CompleteLongTerm(size_t plan, const Retrieval& retrieval,
                                    bool ok, int64_t now_ms,
                                    int64_t wall_ms) {
    RetrievalQueueShared* queue = Queue(plan);
    if (queue == nullptr) {
        return;
    }
    std::vector<uint32_t> waiters = CompleteRetrieval(
        queue, retrieval.index, retrieval.generation, ok, now_ms);
    if (!ok || waiters.empty()) {
        return;
    }
    std::vector<std::string> keys;
    for (uint32_t w : waiters) {
        std::string key = KeyText(w);
        if (key.empty()) {
            continue;
        }
        // Retrieved again for a key that already had it: a repeat.
        if (ledger_ && ledger_->Received(key, retrieval.slot, wall_ms)) {
            std::string error;
            ledger_->AddRepeat(key, wall_ms, &error);
            shared_->repeats_counted[plan].fetch_add(1);
        }
        keys.push_back(std::move(key));
        shared_->served[kSourceLongTerm].fetch_add(1);
        solgate::CountServed(&shared_->keys.entries[w], kSourceLongTerm);
    }
    if (ledger_ && !keys.empty()) {
        std::string error;
        ledger_->CountRetrieval(keys, wall_ms, &error);
        shared_->allowance_counted[plan].fetch_add(keys.size());
    }
}

}  // namespace solgate
