#include "blocks/shm_retrieval_queue.h"

namespace solgate {

QueueAnswer ShmRetrievalQueue::Request(KeyId key, uint64_t slot,
                                       std::string_view variant,
                                       int64_t now_ms, uint32_t queue_limit,
                                       double retrieval_rate,
                                       const RepeatFn& repeats,
                                       const KeyLimitFn& key_limit) {
    return RequestBlock(queue_, key, slot, variant, now_ms, queue_limit,
                        retrieval_rate, repeats, key_limit);
}

std::vector<KeyId> ShmRetrievalQueue::Waiters(const Retrieval& retrieval) {
    return RetrievalWaiters(queue_, retrieval.index, retrieval.generation);
}

void ShmRetrievalQueue::MarkCounted(const Retrieval& retrieval,
                                    const std::vector<KeyId>& keys) {
    MarkRetrievalCounted(queue_, retrieval.index, retrieval.generation, keys);
}

std::optional<Retrieval> ShmRetrievalQueue::Next(int64_t now_ms,
                                                 double retrieval_rate,
                                                 uint32_t max_in_flight,
                                                 int64_t stale_ms,
                                                 const RepeatFn& repeats) {
    return NextRetrieval(queue_, now_ms, retrieval_rate, max_in_flight,
                         stale_ms, repeats);
}

std::vector<KeyId> ShmRetrievalQueue::Complete(const Retrieval& retrieval,
                                               bool ok, int64_t now_ms) {
    return CompleteRetrieval(queue_, retrieval.index, retrieval.generation,
                             ok, now_ms);
}

void ShmRetrievalQueue::LetGo(const Retrieval& retrieval, int64_t now_ms) {
    LetGoRetrieval(queue_, retrieval.index, retrieval.generation, now_ms);
}

QueueStats ShmRetrievalQueue::Stats(int64_t now_ms) {
    return GetQueueStats(queue_, now_ms);
}

}  // namespace solgate
