#include "status/prometheus_text.h"

#include <cstdio>

namespace solgate {
namespace {

// Label values escape backslash, double quote and newline.
void AppendLabelValue(std::string& out, std::string_view value) {
    for (char c : value) {
        switch (c) {
        case '\\': out += "\\\\"; break;
        case '"':  out += "\\\""; break;
        case '\n': out += "\\n"; break;
        default:   out.push_back(c);
        }
    }
}

}  // namespace

void AppendFamilyHeader(std::string& out, std::string_view name,
                        std::string_view type, std::string_view help) {
    out += "# HELP ";
    out += name;
    out.push_back(' ');
    out += help;
    out += "\n# TYPE ";
    out += name;
    out.push_back(' ');
    out += type;
    out.push_back('\n');
}

void AppendSampleText(std::string& out, std::string_view name,
                      std::initializer_list<Label> labels,
                      std::string_view value) {
    out += name;
    out.push_back('{');
    bool first = true;
    for (const auto& [key, text] : labels) {
        if (!first) {
            out.push_back(',');
        }
        first = false;
        out += key;
        out += "=\"";
        AppendLabelValue(out, text);
        out.push_back('"');
    }
    out += "} ";
    out += value;
    out.push_back('\n');
}

void AppendSample(std::string& out, std::string_view name,
                  std::initializer_list<Label> labels, uint64_t value) {
    AppendSampleText(out, name, labels, std::to_string(value));
}

std::string SecondsText(int64_t ms) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.3f", static_cast<double>(ms) / 1000);
    return text;
}

std::string MicrosecondsText(uint64_t us) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.6f", static_cast<double>(us) / 1e6);
    return text;
}

}  // namespace solgate
