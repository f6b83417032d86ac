// What the harnesses share: the input as text, split in two at a point the
// input chooses (its first byte), and words split on spaces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace solgate::fuzz {

inline std::string_view Text(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// The first byte picks where the rest is cut: [0, cut) and [cut, end).
struct Split {
    std::string_view head, tail, whole;
};
inline Split SplitInput(const uint8_t* data, size_t size) {
    if (size == 0) {
        return {};
    }
    std::string_view rest = Text(data + 1, size - 1);
    size_t cut = rest.empty() ? 0 : data[0] % (rest.size() + 1);
    return {rest.substr(0, cut), rest.substr(cut), rest};
}

inline std::vector<std::string_view> Words(std::string_view text) {
    std::vector<std::string_view> words;
    size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == ' ') i++;
        size_t start = i;
        while (i < text.size() && text[i] != ' ') i++;
        if (i > start) words.push_back(text.substr(start, i - start));
    }
    return words;
}

// A finding: the property named does not hold.
[[noreturn]] inline void Fail(const char* what) {
    std::fprintf(stderr, "property violated: %s\n", what);
    std::abort();
}

}  // namespace solgate::fuzz
