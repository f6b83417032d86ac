// Unsigned numbers as a fixed number of bytes: little-endian for stored
// values, big-endian for keys (so that they sort as the numbers do).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace solgate {

// Writes the low `bytes` bytes of `value` to p, least significant first.
inline void WriteLittleEndian(unsigned char* p, uint64_t value,
                              size_t bytes) {
    for (size_t i = 0; i < bytes; i++) {
        p[i] = static_cast<unsigned char>(value >> (8 * i));
    }
}

// The number in the `bytes` bytes at p, least significant first.
inline uint64_t ReadLittleEndian(const unsigned char* p, size_t bytes) {
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; i++) {
        value |= static_cast<uint64_t>(p[i]) << (8 * i);
    }
    return value;
}

// Appends the low `bytes` bytes of `value`, most significant first.
inline void AppendBigEndian(std::string* out, uint64_t value, int bytes) {
    for (int i = bytes - 1; i >= 0; i--) {
        out->push_back(static_cast<char>(value >> (8 * i)));
    }
}

// The number in the `bytes` bytes at p, most significant first.
inline uint64_t ReadBigEndian(const unsigned char* p, size_t bytes) {
    uint64_t value = 0;
    for (size_t i = 0; i < bytes; i++) {
        value = (value << 8) | p[i];
    }
    return value;
}

}  // namespace solgate
