// Where Cube Runner serves a block from: the tiers it looks in, in order.
// Counted per source in the zone and per key.
#pragma once

#include <string_view>

namespace solgate {

enum BlockSource : int {
    kSourceCache = 0,
    kSourceLedger,
    kSourceRegion,
    kSourceLongTerm,
    kSourceCount
};
// "cache", "ledger", "region", "long_term"; "" for anything else.
std::string_view BlockSourceName(int source);

}  // namespace solgate
