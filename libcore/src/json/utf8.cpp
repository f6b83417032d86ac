#include "json/utf8.h"

namespace solgate {

size_t Utf8SequenceLength(const unsigned char* p, const unsigned char* end) {
    unsigned char c = *p;
    if (c < 0x80) {
        return 1;
    }
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xbf;   // bounds of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
        n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 2;
        if (c == 0xe0) lo = 0xa0;   // overlong
        if (c == 0xed) hi = 0x9f;   // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 3;
        if (c == 0xf0) lo = 0x90;   // overlong
        if (c == 0xf4) hi = 0x8f;   // past U+10FFFF
    } else {
        return 0;
    }
    if (static_cast<size_t>(end - p) <= n || p[1] < lo || p[1] > hi) {
        return 0;
    }
    for (size_t i = 2; i <= n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            return 0;
        }
    }
    return n + 1;
}

bool IsStrictUtf8(std::string_view text) {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const unsigned char* end = p + text.size();
    while (p < end) {
        size_t n = Utf8SequenceLength(p, end);
        if (n == 0) {
            return false;
        }
        p += n;
    }
    return true;
}

static int HexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The code unit of the \uXXXX escape at text[i] ('\\'), or -1.
static long EscapedUnit(std::string_view text, size_t i) {
    if (i + 6 > text.size() || text[i + 1] != 'u') {
        return -1;
    }
    long unit = 0;
    for (size_t k = i + 2; k < i + 6; k++) {
        int v = HexValue(text[k]);
        if (v < 0) {
            return -1;
        }
        unit = unit * 16 + v;
    }
    return unit;
}

bool HasOnlyPairedSurrogateEscapes(std::string_view json) {
    for (size_t i = 0; i < json.size(); i++) {
        if (json[i] != '\\') {
            continue;
        }
        long unit = EscapedUnit(json, i);
        if (unit < 0) {
            i++;   // another escape: skip the character it escapes
            continue;
        }
        if (unit >= 0xdc00 && unit <= 0xdfff) {
            return false;   // a low surrogate alone
        }
        if (unit >= 0xd800 && unit <= 0xdbff) {
            long low = json.size() > i + 6 && json[i + 6] == '\\'
                           ? EscapedUnit(json, i + 6)
                           : -1;
            if (low < 0xdc00 || low > 0xdfff) {
                return false;
            }
            i += 11;   // the pair
            continue;
        }
        i += 5;
    }
    return true;
}

}  // namespace solgate
