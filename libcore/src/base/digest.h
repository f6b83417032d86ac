// A short, stable name for a secret or a set: the first bytes of its
// SHA-256 as lowercase hex.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace solgate {

// 2 * bytes hex digits (bytes at most 32).
std::string Sha256Hex(std::string_view text, size_t bytes);

}  // namespace solgate
