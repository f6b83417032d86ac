// Deterministic hashing and pseudo-random generation.
//
// Everything the simulator invents (skipped slots, block contents, balances)
// is a pure function of the seed and the inputs, so that several nodes started
// with the same flags return byte-identical data without talking to each other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace solsim {

// SplitMix64 finalizer: a cheap bijective mixer with good avalanche.
inline uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

inline uint64_t hash2(uint64_t a, uint64_t b) { return mix64(a ^ mix64(b + 0x632be59bd9b4e019ULL)); }
inline uint64_t hash3(uint64_t a, uint64_t b, uint64_t c) { return hash2(hash2(a, b), c); }
inline uint64_t hash4(uint64_t a, uint64_t b, uint64_t c, uint64_t d) { return hash2(hash3(a, b, c), d); }

// FNV-1a over bytes, then mixed; used to turn strings (pubkeys, names) into seeds.
inline uint64_t hash_bytes(std::string_view s) {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ULL;
    }
    return mix64(h);
}

// Domain-separation tags so that different uses of the same (seed, slot)
// never produce correlated values.
enum : uint64_t {
    kTagSkip = 0x51,
    kTagBlockhash = 0x52,
    kTagTx = 0x53,
    kTagSig = 0x54,
    kTagV0 = 0x55,
    kTagKeyPool = 0x56,
    kTagLeader = 0x57,
    kTagAccount = 0x58,
    kTagIdentity = 0x59,
    kTagStatus = 0x5a,
    kTagToken = 0x5b,
    kTagStorageFail = 0x5c,
    kTagProgram = 0x5d,
    kTagHistory = 0x5e,
};

class Rng {
  public:
    explicit Rng(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        state_ += 0x9e3779b97f4a7c15ULL;
        uint64_t z = state_;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    // Uniform in [0, n); the tiny modulo bias is irrelevant for simulation.
    uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
    uint64_t range(uint64_t lo, uint64_t hi_inclusive) { return lo + below(hi_inclusive - lo + 1); }
    void fill(uint8_t* out, size_t len) {
        size_t i = 0;
        while (i < len) {
            uint64_t v = next();
            for (int k = 0; k < 8 && i < len; ++k, ++i) out[i] = static_cast<uint8_t>(v >> (8 * k));
        }
    }

  private:
    uint64_t state_;
};

// Maps a 64-bit hash to [0, 1).
inline double unit_interval(uint64_t h) { return static_cast<double>(h >> 11) * (1.0 / 9007199254740992.0); }

}  // namespace solsim
