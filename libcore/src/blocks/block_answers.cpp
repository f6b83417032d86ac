#include "blocks/block_answers.h"

#include <algorithm>

#include "json/json_writer.h"
#include "routing/router.h"

namespace solgate {
namespace {

BlockDecision ErrorAnswer(const BlockCall& call, unsigned status, int code,
                          const std::string& message,
                          const std::string& data_raw,
                          unsigned retry_after = 0) {
    BlockDecision d;
    d.kind = BlockDecision::kAnswer;
    d.http_status = status;
    d.retry_after_s = retry_after;
    AppendErrorEnvelope(d.body, call.id_raw, code, message, data_raw);
    return d;
}

// 429: not served now; `reason` tells why (data.reason).
BlockDecision NotServed(const BlockCall& call, const std::string& message,
                        std::string_view reason, unsigned retry_after) {
    std::string data = "{\"slot\":" + std::to_string(call.slot) +
                       ",\"retryAfterSecs\":" + std::to_string(retry_after) +
                       ",\"reason\":\"" + std::string(reason) + "\"}";
    return ErrorAnswer(call, 429, kBlockNotServed, message, data,
                       retry_after);
}

BlockDecision QueueAnswerOf(const BlockCall& call, const BlockPlan& plan,
                            const QueueAnswer& answer) {
    std::string slot = std::to_string(call.slot);
    unsigned retry = answer.retry_after_s;
    std::string in = "; retry in " + std::to_string(retry) + " seconds";
    switch (answer.outcome) {
    case QueueOutcome::kQueued: {
        std::string data = "{\"slot\":" + slot + ",\"retryAfterSecs\":" +
                           std::to_string(retry) + ",\"queuePosition\":" +
                           std::to_string(answer.position) + "}";
        return ErrorAnswer(call, 429, kBlockNotServed,
                           "Block " + slot +
                               " is being retrieved from long-term storage" +
                               in,
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
    case QueueOutcome::kAllowanceSpent:   // the verdict's (AllowanceSpent)
    case QueueOutcome::kUnavailable:
        break;
    }
    return {};
}

}  // namespace

unsigned RetryAfterForMs(int64_t ms) {
    int64_t s = (ms + 999) / 1000;
    return static_cast<unsigned>(std::clamp<int64_t>(s, 1, 60));
}

BlockDecision ResultAnswer(const BlockCall& call,
                           const std::string& result_raw) {
    BlockDecision d;
    d.kind = BlockDecision::kAnswer;
    AppendResultEnvelope(d.body, call.id_raw, result_raw);
    return d;
}

BlockDecision NoApiKey(const BlockCall& call, std::string_view method) {
    return ErrorAnswer(call, 401, kUnauthorized,
                       "Unauthorized: " + std::string(method) +
                           " needs an API key",
                       "");
}

BlockDecision NoValidPlan(const BlockCall& call) {
    return ErrorAnswer(call, 401, kUnauthorized,
                       "Unauthorized: the API key has no valid plan", "");
}

BlockDecision RateLimited(const BlockCall& call, const BlockPlan& plan,
                          unsigned retry_after) {
    std::string retry = std::to_string(retry_after);
    std::string data = "{\"slot\":" + std::to_string(call.slot) +
                       ",\"retryAfterSecs\":" + retry +
                       ",\"reason\":\"rate_limit\"}";
    return ErrorAnswer(call, 429, kBlockNotServed,
                       "Rate limit of plan " + plan.name +
                           " exceeded; retry in " + retry + " seconds",
                       data, retry_after);
}

BlockDecision NotHeldHere(const BlockCall& call, std::string_view region) {
    return ErrorAnswer(call, 503, kBlockCleanedUp,
                       "Block " + std::to_string(call.slot) +
                           " is not held in region " + std::string(region),
                       "");
}

BlockDecision TierAnswer(const BlockCall& call, uint64_t first_available,
                         bool archive) {
    std::string slot = std::to_string(call.slot);
    std::string first = std::to_string(first_available);
    std::string data = "{\"slot\":" + slot + ",\"firstAvailableBlock\":" +
                       first + ",\"reason\":\"" +
                       (archive ? "no_long_term_storage" : "tier") + "\"}";
    return ErrorAnswer(call, 200, kBlockCleanedUp,
                       "Block " + slot + " not available on this tier. " +
                           "First available block: " + first,
                       data);
}

BlockDecision SharedStateUnavailable(const BlockCall& call) {
    return NotServed(call,
                     "Block " + std::to_string(call.slot) +
                         " was not queued: the fleet's shared state is "
                         "unavailable, so long-term retrievals pause; retry "
                         "in " + std::to_string(kSharedStateRetryAfterS) +
                         " seconds",
                     "shared_state_unavailable", kSharedStateRetryAfterS);
}

BlockDecision LongTermAnswer(const BlockCall& call, const BlockPlan& plan,
                             const LongTermVerdict& verdict) {
    std::string slot = std::to_string(call.slot);
    switch (verdict.kind) {
    case LongTermVerdict::kTooManyKeys:
        return NotServed(call,
                         "Block " + slot + " was not queued: too many keys",
                         "queue_full", kMaxRetryAfterS);
    case LongTermVerdict::kAllowanceSpent:
        // The allowance resets at the month's end, further away than
        // Retry-After may say: the most it may.
        return NotServed(call,
                         "Block " + slot + " was not retrieved: the monthly "
                         "allowance of plan " + plan.name + " (" +
                             std::to_string(plan.monthly_allowance) +
                             " blocks) is spent; it resets on the 1st at "
                             "00:00 UTC",
                         "allowance", kMaxRetryAfterS);
    case LongTermVerdict::kQueue:
        break;
    }
    return QueueAnswerOf(call, plan, verdict.queue);
}

}  // namespace solgate
