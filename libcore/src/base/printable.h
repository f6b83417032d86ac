// Text that came from outside (an operator's URL argument, a node's error
// message) as printable ASCII, every other byte '?': safe in a log line
// (no newline to forge another), in JSON, in a Prometheus label and in an
// HTTP reason phrase.
#pragma once

#include <string>
#include <string_view>

namespace solgate {

inline std::string PrintableAscii(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        auto b = static_cast<unsigned char>(c);
        if (b < 0x20 || b > 0x7e) {
            c = '?';
        }
    }
    return out;
}

}  // namespace solgate
