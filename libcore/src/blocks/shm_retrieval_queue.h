// A plan's long-term storage queue in the shared memory zone: the
// QueueStore over one RetrievalQueueShared (retrieval_queue.h), which
// every worker of the host maps.
#pragma once

#include "blocks/queue_store.h"
#include "blocks/retrieval_queue.h"

namespace solgate {

class ShmRetrievalQueue : public QueueStore {
public:
    // `queue` is set up (InitRetrievalQueue) and outlives the store.
    explicit ShmRetrievalQueue(RetrievalQueueShared* queue) : queue_(queue) {}

    QueueAnswer Request(KeyId key, uint64_t slot, std::string_view variant,
                        int64_t now_ms, uint32_t queue_limit,
                        double retrieval_rate, const RepeatFn& repeats,
                        const KeyLimitFn& key_limit) override;
    std::vector<KeyId> Waiters(const Retrieval& retrieval) override;
    void MarkCounted(const Retrieval& retrieval,
                     const std::vector<KeyId>& keys) override;
    std::optional<Retrieval> Next(int64_t now_ms, double retrieval_rate,
                                  uint32_t max_in_flight, int64_t stale_ms,
                                  const RepeatFn& repeats) override;
    void LetGo(const Retrieval& retrieval, int64_t now_ms) override;
    std::vector<KeyId> Complete(const Retrieval& retrieval, bool ok,
                                int64_t now_ms) override;
    QueueStats Stats(int64_t now_ms) override;

private:
    RetrievalQueueShared* queue_;
};

}  // namespace solgate
