// What an upstream's answer votes for in a consensus: the same text for
// answers that mean the same, whatever the node's formatting. Object keys
// are sorted, strings re-escaped one way, and an envelope result's
// context.slot and context.apiVersion (which differ between honest nodes)
// left out; an error votes as its code alone.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace solgate {

// "r:" and the canonical result, or "e:" and the error code; nullopt when
// the answer is not one JSON-RPC response object (a failed attempt, which
// does not vote), or has a key twice in an object (readers differ on
// which one counts). Costs a tree of the answer while it runs.
std::optional<std::string> ConsensusVote(std::string_view answer);

}  // namespace solgate
