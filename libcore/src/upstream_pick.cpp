#include "upstream_pick.h"

namespace solgate {

std::optional<size_t> PickRoundRobin(size_t count, uint64_t turn,
                                     const unsigned char* tried) {
    if (count == 0) {
        return std::nullopt;
    }
    size_t start = static_cast<size_t>(turn % count);
    for (size_t step = 0; step < count; step++) {
        size_t i = (start + step) % count;
        if (tried == nullptr || tried[i] == 0) {
            return i;
        }
    }
    return std::nullopt;
}

}  // namespace solgate
