#include "blocks/block_call.h"

namespace solgate {

std::string_view BlockSourceName(int source) {
    switch (source) {
    case kSourceCache:    return "cache";
    case kSourceLedger:   return "ledger";
    case kSourceRegion:   return "region";
    case kSourceLongTerm: return "long_term";
    default:              return "";
    }
}

}  // namespace solgate
