// The requests that raise cached entries' retention scores
// (block_retention.h), noted on the request path and applied to the
// index in batches by the upkeep: a cache hit must not wait for an index
// write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "blocks/block_retention.h"
#include "store/block_store.h"

namespace solgate {

// Requests noted between two batches; more are not scored.
constexpr size_t kMaxPendingRequests = 65536;

struct ScoredRequest {
    uint64_t slot;
    std::string variant;
    int64_t wall_ms;
};

class RequestScores {
public:
    // Safe from any thread.
    void Note(uint64_t slot, const std::string& variant, int64_t wall_ms);
    // What was noted since the last Take, in the order noted.
    std::vector<ScoredRequest> Take();

private:
    std::mutex mutex_;
    std::vector<ScoredRequest> pending_;
};

// The index's current record of an entry; false when it is not cached.
using RecordLookup =
    std::function<bool(uint64_t slot, const std::string& variant,
                       BlockRecord* record)>;

// The score updates a batch of requests makes, one per cached entry
// however many requests it had (in slot, variant order); requests for
// entries no longer cached are left out.
std::vector<BlockStore::ScoreUpdate> FoldScores(
    const std::vector<ScoredRequest>& requests, const RecordLookup& lookup,
    const RetentionPolicy& policy);

}  // namespace solgate
