#include "json/json_id.h"

#include <cstdint>

namespace solgate {
namespace {

// Four hex digits at p (p + 4 <= end), or -1.
int32_t Hex4(const char* p) {
    int32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

void AppendUtf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
        out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

bool IsString(std::string_view text) {
    return text.size() >= 2 && text.front() == '"' && text.back() == '"';
}

}  // namespace

bool DecodeJsonString(std::string_view literal, std::string* value) {
    value->clear();
    if (!IsString(literal)) {
        return false;
    }
    const char* p = literal.data() + 1;
    const char* end = literal.data() + literal.size() - 1;
    while (p < end) {
        char c = *p++;
        if (c == '"') {
            return false;   // a quote inside: not one literal
        }
        if (c != '\\') {
            value->push_back(c);
            continue;
        }
        if (p >= end) {
            return false;
        }
        char e = *p++;
        switch (e) {
        case '"': value->push_back('"'); break;
        case '\\': value->push_back('\\'); break;
        case '/': value->push_back('/'); break;
        case 'b': value->push_back('\b'); break;
        case 'f': value->push_back('\f'); break;
        case 'n': value->push_back('\n'); break;
        case 'r': value->push_back('\r'); break;
        case 't': value->push_back('\t'); break;
        case 'u': {
            if (end - p < 4) {
                return false;
            }
            int32_t unit = Hex4(p);
            p += 4;
            if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) {
                return false;   // no hex, or a low surrogate alone
            }
            uint32_t cp = static_cast<uint32_t>(unit);
            if (unit >= 0xD800 && unit <= 0xDBFF) {
                // a high surrogate: its low one must follow
                if (end - p < 6 || p[0] != '\\' || p[1] != 'u') {
                    return false;
                }
                int32_t low = Hex4(p + 2);
                if (low < 0xDC00 || low > 0xDFFF) {
                    return false;
                }
                p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) +
                     (static_cast<uint32_t>(low) - 0xDC00);
            }
            AppendUtf8(value, cp);
            break;
        }
        default:
            return false;
        }
    }
    return true;
}

}  // namespace solgate
