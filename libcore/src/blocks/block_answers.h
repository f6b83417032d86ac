// Every answer Cube Runner gives itself instead of a block, as the
// JSON-RPC envelope and HTTP status the client gets (spec: Cube Runner
// responses). Pure: the request path decides which, these say how.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "blocks/block_call.h"
#include "blocks/block_plans.h"
#include "blocks/long_term_queues.h"
#include "rpc/rpc_request.h"

namespace solgate {

// Cube Runner's own JSON-RPC errors.
constexpr int kBlockNotServed = -32019;
constexpr int kBlockCleanedUp = -32001;
constexpr int kUnauthorized = -32003;

// A wait in ms as Retry-After: whole seconds rounded up, 1 to 60.
unsigned RetryAfterForMs(int64_t ms);

// {"jsonrpc":"2.0","result":RESULT,"id":..} with HTTP 200.
BlockDecision ResultAnswer(const BlockCall& call,
                           const std::string& result_raw);
// 401: no API key, or a plan that is not defined.
BlockDecision NoApiKey(const BlockCall& call, std::string_view method);
BlockDecision NoValidPlan(const BlockCall& call);
// 429 with Retry-After: the plan's getblock_rate.
BlockDecision RateLimited(const BlockCall& call, const BlockPlan& plan,
                          unsigned retry_after);
// 503 to another region: its failover moves on to its next source.
BlockDecision NotHeldHere(const BlockCall& call, std::string_view region);
// 200 with -32001: no source holds the block for this plan's tier
// (`archive`: the plan would reach long-term storage, but there is none).
BlockDecision TierAnswer(const BlockCall& call, uint64_t first_available,
                         bool archive);
// 429 with Retry-After for what the long-term queue said; kPass for a
// QueueOutcome::kUnavailable, which the caller answers with TierAnswer.
BlockDecision LongTermAnswer(const BlockCall& call, const BlockPlan& plan,
                             const LongTermVerdict& verdict);
// 429 with Retry-After: fleet mode, and the fleet's store is unreachable,
// so the region cannot count the allowance; long-term retrievals pause.
constexpr unsigned kSharedStateRetryAfterS = 5;
BlockDecision SharedStateUnavailable(const BlockCall& call);

}  // namespace solgate
