#include "blocks/request_scores.h"

#include <algorithm>
#include <map>
#include <utility>

namespace solgate {

void RequestScores::Note(uint64_t slot, const std::string& variant,
                         int64_t wall_ms) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pending_.size() < kMaxPendingRequests) {
        pending_.push_back({slot, variant, wall_ms});
    }
}

std::vector<ScoredRequest> RequestScores::Take() {
    std::vector<ScoredRequest> requests;
    std::lock_guard<std::mutex> lock(mutex_);
    requests.swap(pending_);
    return requests;
}

std::vector<BlockStore::ScoreUpdate> FoldScores(
    const std::vector<ScoredRequest>& requests, const RecordLookup& lookup,
    const RetentionPolicy& policy) {
    // One index read per entry, and one update, whatever its requests.
    std::map<std::pair<uint64_t, std::string>, BlockStore::ScoreUpdate>
        latest;
    for (const ScoredRequest& r : requests) {
        auto key = std::make_pair(r.slot, r.variant);
        auto it = latest.find(key);
        if (it == latest.end()) {
            BlockRecord rec;
            if (!lookup(r.slot, r.variant, &rec)) {
                continue;
            }
            it = latest.emplace(key, BlockStore::ScoreUpdate{
                                         r.slot, r.variant, rec.score,
                                         rec.score_ms})
                     .first;
        }
        BlockStore::ScoreUpdate& u = it->second;
        u.score = ScoreAfterRequest(u.score, u.score_ms, r.wall_ms, policy);
        u.score_ms = std::max(u.score_ms, r.wall_ms);
    }
    std::vector<BlockStore::ScoreUpdate> updates;
    updates.reserve(latest.size());
    for (auto& [key, update] : latest) {
        updates.push_back(std::move(update));
    }
    return updates;
}

}  // namespace solgate
