// Hashing for the open-addressing tables in shared memory (the key table,
// the cache lock's flights): FNV-1a over bytes, and where a key's probe
// starts in a table whose capacity is a power of two.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace solgate {

constexpr uint64_t kFnv1aBasis = 14695981039346656037ULL;

// 64-bit FNV-1a of `bytes`, continued from `h`.
inline uint64_t Fnv1a(std::string_view bytes, uint64_t h = kFnv1aBasis) {
    for (char c : bytes) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ULL;   // FNV prime
    }
    return h;
}

// FNV's low bits mix poorly; the high bits of a golden-ratio product
// depend on all of them.
template <size_t kCapacity>
size_t ProbeStart(uint64_t hash) {
    static_assert((kCapacity & (kCapacity - 1)) == 0, "a power of two");
    constexpr int kBits = __builtin_ctzll(kCapacity);
    return static_cast<size_t>((hash * 0x9e3779b97f4a7c15ULL) >>
                               (64 - kBits));
}

}  // namespace solgate
