#include "slots/lane_name.h"

#include <algorithm>
#include <string_view>

#include "base/digest.h"

namespace solgate {

namespace {

// The non-empty hyphen-separated tokens of id, in order.
std::vector<std::string_view> Tokens(std::string_view id) {
    std::vector<std::string_view> tokens;
    size_t start = 0;
    while (start <= id.size()) {
        size_t hyphen = id.find('-', start);
        if (hyphen == std::string_view::npos) hyphen = id.size();
        if (hyphen > start) tokens.push_back(id.substr(start, hyphen - start));
        start = hyphen + 1;
    }
    return tokens;
}

bool Contains(const std::vector<std::string_view>& tokens,
              std::string_view token) {
    return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
}

}  // namespace

std::string LaneName(std::vector<std::string> ids) {
    if (ids.empty()) return "";
    std::sort(ids.begin(), ids.end());

    std::vector<std::vector<std::string_view>> others;
    others.reserve(ids.size() - 1);
    for (size_t i = 1; i < ids.size(); i++) others.push_back(Tokens(ids[i]));

    for (std::string_view token : Tokens(ids[0])) {
        bool shared = true;
        for (const auto& set : others) {
            if (!Contains(set, token)) {
                shared = false;
                break;
            }
        }
        if (shared) return std::string(token);
    }

    std::string name;
    for (size_t i = 0; i < ids.size() && i < 5; i++) {
        name += ids[i].substr(0, 2);
    }
    return name;
}

std::string LaneKey(std::vector<std::string> ids) {
    std::sort(ids.begin(), ids.end());
    std::string joined;
    for (size_t i = 0; i < ids.size(); i++) {
        if (i > 0) joined.push_back('\0');
        joined += ids[i];
    }
    return "grp:" + Sha256Hex(joined, 8);
}

}  // namespace solgate
