// Damaging a file on purpose, to test how a store copes with corruption.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

namespace solgate {

// Overwrites the file at `path` with `size` bytes of deterministic
// garbage; false when it could not be written.
inline bool Scribble(const std::string& path, size_t size) {
    std::string garbage(size, '\0');
    uint32_t x = 12345;
    for (char& c : garbage) {
        x = x * 1103515245 + 12345;
        c = static_cast<char>(x >> 16);
    }
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << garbage;
    return static_cast<bool>(out);
}

}  // namespace solgate
