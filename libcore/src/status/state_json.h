// The JSON document of `GET /solgate/state`: every bound network with its
// settings, tips, counters and upstreams (and its Cube Runner's figures,
// state_blocks_json.h), as the shared tables are at the moment of the call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/network.h"

namespace solgate {

// JSON with a stable key order, for operators and scripts. Networks not
// bound to their zone yet are left out. Times: lease expiry and traffic
// ages against `now_mono_ms` (the clock the shared table uses), cordon
// timestamps as UTC ISO-8601 ("generated_at" is `now_wall_ms`).
std::string RenderState(const std::vector<const Network*>& networks,
                        int64_t now_mono_ms, int64_t now_wall_ms);

// "2026-11-30T05:04:28.123Z"; "" for a time gmtime_r cannot convert.
std::string FormatUtc(int64_t wall_ms);

}  // namespace solgate
