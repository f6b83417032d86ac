#include "conf/conf_words.h"

namespace solgate::conf {
namespace {

bool IsWordChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

bool IsMethodChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '*';
}

// HOST[:PORT] (an IPv6 host in brackets): a port, when given, is 1 to
// 65535 (nginx would read another as no address, and say so less clearly).
std::optional<std::string_view> CheckPort(std::string_view authority) {
    size_t bracket = authority.rfind(']');
    size_t colon = authority.rfind(':');
    if (colon == std::string_view::npos ||
        (bracket != std::string_view::npos && colon < bracket)) {
        return std::nullopt;
    }
    std::string_view port = authority.substr(colon + 1);
    uint32_t value = 0;
    for (char c : port) {
        if (c < '0' || c > '9' || value > 65535) {
            return "has a port that is not a number from 1 to 65535";
        }
        value = value * 10 + static_cast<uint32_t>(c - '0');
    }
    if (port.empty() || value == 0 || value > 65535) {
        return "has a port that is not a number from 1 to 65535";
    }
    return std::nullopt;
}

}  // namespace

std::optional<std::string_view> CheckName(std::string_view name) {
    if (name.empty() || name.size() > kMaxNameLength) {
        return "must be 1 to 64 characters long";
    }
    for (char c : name) {
        if (!IsWordChar(c)) {
            return "may contain only letters, digits, '-', '_' and '.'";
        }
    }
    return std::nullopt;
}

std::optional<std::string_view> ParseHttpUrl(std::string_view url,
                                             HttpUrl* out) {
    *out = HttpUrl{};
    constexpr std::string_view kHttps = "https://";
    constexpr std::string_view kHttp = "http://";
    size_t start;
    if (url.substr(0, kHttps.size()) == kHttps) {
        out->https = true;
        start = kHttps.size();
    } else if (url.substr(0, kHttp.size()) == kHttp) {
        start = kHttp.size();
    } else {
        return "must start with \"http://\" or \"https://\"";
    }
    for (size_t i = start; i < url.size(); i++) {
        unsigned char c = static_cast<unsigned char>(url[i]);
        if (c <= ' ' || c == 0x7f || c == '#') {
            return "contains a space, a control character or '#'";
        }
    }
    size_t end = start;
    for (; end < url.size() && url[end] != '/' && url[end] != '?'; end++) {
        if (url[end] == '@') {
            return "must not contain credentials before the host";
        }
    }
    if (end == start) {
        return "has no host";
    }
    if (end < url.size() && url[end] == '?') {
        return "must have a path before the query, as in \"/?key=...\"";
    }
    out->authority = url.substr(start, end - start);
    if (auto bad = CheckPort(out->authority)) {
        return bad;
    }
    out->path = url.substr(end);
    return std::nullopt;
}

std::optional<std::string_view> CheckTags(std::string_view tags) {
    size_t key_len = 0;
    size_t value_len = 0;
    bool in_value = false;
    for (size_t i = 0; i <= tags.size(); i++) {
        if (i == tags.size() || tags[i] == ',') {
            if (!in_value || key_len == 0 || value_len == 0) {
                return "must be a list of key:value pairs, as in "
                       "\"family:archive,region:us\"";
            }
            key_len = 0;
            value_len = 0;
            in_value = false;
            continue;
        }
        if (tags[i] == ':') {
            if (in_value) {
                return "has a pair with more than one ':'";
            }
            in_value = true;
            continue;
        }
        if (!IsWordChar(tags[i])) {
            return "may contain only letters, digits, '-', '_' and '.' "
                   "around ':' and ','";
        }
        (in_value ? value_len : key_len)++;
    }
    return std::nullopt;
}

std::optional<std::string_view> CheckMethods(std::string_view methods) {
    size_t run = 0;
    for (size_t i = 0; i <= methods.size(); i++) {
        if (i == methods.size() || methods[i] == '|') {
            if (run == 0) {
                return "has an empty method name";
            }
            run = 0;
            continue;
        }
        if (!IsMethodChar(methods[i])) {
            return "method names may contain only letters, digits, '_' and "
                   "'*', joined by '|'";
        }
        run++;
    }
    return std::nullopt;
}

std::optional<uint64_t> ParseCount(std::string_view text, uint64_t min,
                                   uint64_t max) {
    if (text.empty() || text.size() > 18) {
        return std::nullopt;
    }
    uint64_t value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return std::nullopt;
        }
        value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    if (value < min || value > max) {
        return std::nullopt;
    }
    return value;
}

std::optional<uint64_t> ParseDurationMs(std::string_view text,
                                        uint64_t max_ms) {
    size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
        digits++;
    }
    std::optional<uint64_t> number =
        ParseCount(text.substr(0, digits), 0, 1000000000);
    if (!number) {
        return std::nullopt;
    }
    std::string_view unit = text.substr(digits);
    uint64_t scale = 0;
    if (unit == "ms") {
        scale = 1;
    } else if (unit.empty() || unit == "s") {
        scale = 1000;
    } else if (unit == "m") {
        scale = 60000;
    } else if (unit == "h") {
        scale = 3600000;
    } else {
        return std::nullopt;
    }
    if (*number > max_ms / scale) {
        return std::nullopt;
    }
    return *number * scale;
}

std::optional<std::string_view> OptionValue(std::string_view option,
                                            std::string_view key) {
    if (option.substr(0, key.size()) != key) {
        return std::nullopt;
    }
    return option.substr(key.size());
}

std::optional<std::string_view> RepeatedOption(
    const std::vector<std::string_view>& options, size_t first) {
    auto key = [](std::string_view option) {
        size_t eq = option.find('=');
        return eq == std::string_view::npos ? option : option.substr(0, eq + 1);
    };
    for (size_t i = first; i < options.size(); i++) {
        for (size_t j = first; j < i; j++) {
            if (key(options[j]) == key(options[i])) {
                return key(options[i]);
            }
        }
    }
    return std::nullopt;
}

}  // namespace solgate::conf
