// Lane labels and keys: derived from the set of upstream ids a simple
// use-upstream selector matched, never from the selector text.
#pragma once

#include <string>
#include <vector>

namespace solgate {

// A human-readable label for a set of upstream ids, the same for any order
// of the same ids. After sorting the ids (byte order), the first
// hyphen-separated token of the first id that every other id also has
// (empty tokens from repeated, leading or trailing hyphens are ignored);
// failing that, the first two characters of each of the first five ids,
// concatenated. One id gives its first token; no ids give "". Not unique:
// use LaneKey to identify a lane.
std::string LaneName(std::vector<std::string> ids);

// The lane's stable identity: "grp:" followed by the lowercase hex of the
// first 8 bytes of SHA-256 over the sorted ids joined by single NUL bytes
// (20 characters in all). Order-independent.
std::string LaneKey(std::vector<std::string> ids);

}  // namespace solgate
