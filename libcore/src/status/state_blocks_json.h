// The "blocks" member of a network in the state document (state_json.h):
// what its Cube Runner holds, counted and queued, read through BlocksView
// only. Per-key figures live here, never as metric labels (cardinality).
#pragma once

#include <cstdint>
#include <string>

#include "blocks/blocks_view.h"

namespace solgate {

// Appends the object; queue waits against `now_mono_ms`, key allowances
// as of `now_wall_ms`.
void AppendBlocksState(std::string& out, const BlocksView& blocks,
                       int64_t now_mono_ms, int64_t now_wall_ms);

// An API key as the state shows it: keys are secrets, so beyond 8 bytes
// only the first and last 4 are shown ("abcd...wxyz"), enough to tell
// keys apart.
std::string MaskedKey(const std::string& key);

}  // namespace solgate
