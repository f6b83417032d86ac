// Choosing an upstream for an attempt. Round-robin until slot tracking
// gives the router health and tips to choose by.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace solgate {

// The first upstream at or after turn % count that was not tried yet.
std::optional<size_t> PickRoundRobin(size_t count, uint64_t turn,
                                     const unsigned char* tried);

}  // namespace solgate
