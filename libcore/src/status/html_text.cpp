#include "status/html_text.h"

#include <cstdio>

namespace solgate {

void AppendHtml(std::string& out, std::string_view text) {
    for (char c : text) {
        switch (c) {
        case '&':  out += "&amp;";  break;
        case '<':  out += "&lt;";   break;
        case '>':  out += "&gt;";   break;
        case '"':  out += "&quot;"; break;
        case '\'': out += "&#39;";  break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
                out += "\xef\xbf\xbd";  // U+FFFD
            } else {
                out.push_back(c);
            }
        }
    }
}

std::string Html(std::string_view text) {
    std::string out;
    AppendHtml(out, text);
    return out;
}

std::string RateText(double per_second) {
    char text[32];
    std::snprintf(text, sizeof(text), per_second < 100 ? "%.1f" : "%.0f",
                  per_second);
    return text;
}

std::string AgeText(int64_t ms) {
    if (ms < 0) {
        ms = 0;
    }
    if (ms < 1000) {
        return std::to_string(ms) + " ms";
    }
    int64_t s = ms / 1000;
    if (s < 60) {
        return std::to_string(s) + " s";
    }
    if (s < 3600) {
        return std::to_string(s / 60) + " min " + std::to_string(s % 60) + " s";
    }
    return std::to_string(s / 3600) + " h " + std::to_string(s % 3600 / 60) +
           " min";
}

std::string BytesText(uint64_t bytes) {
    static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        return std::to_string(bytes) + " B";
    }
    double value = static_cast<double>(bytes) / 1024;
    size_t unit = 0;
    while (value >= 1024 && unit + 1 < sizeof(kUnits) / sizeof(kUnits[0])) {
        value /= 1024;
        unit++;
    }
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f %s", value, kUnits[unit]);
    return text;
}

}  // namespace solgate
