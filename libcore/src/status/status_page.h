// The HTML page of `solgate_status`: every bound network with its lanes'
// served tips, one card per upstream (health, cordon with owner and
// reason, lagging, slot views, request and error rates, and a chart of its
// slot lag and ingestion lag over the last 15 minutes), and its Cube
// Runner's cache, queues and peers. One self-contained document: inline
// CSS and SVG, no external script, font or stylesheet; readable without
// JavaScript (a meta refresh reloads it), live with it (a small inline
// script fetches the page again and swaps the content in).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "routing/network.h"

namespace solgate {

// How often the inline script fetches the page again, and how often a
// browser without JavaScript reloads it.
constexpr int kStatusLiveSeconds = 5;
constexpr int kStatusReloadSeconds = 10;

// As the shared tables are now: ages and histories against `now_mono_ms`
// (the zone's clock), times of day from `now_wall_ms` (UTC). Every string
// from configuration, operators or nodes is escaped.
std::string RenderStatusPage(const std::vector<const Network*>& networks,
                             int64_t now_mono_ms, int64_t now_wall_ms);

}  // namespace solgate
