#include "fleet/fleet_conf.h"

#include <arpa/inet.h>

#include "conf/conf_words.h"

namespace solgate {
namespace {

bool NameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
           c == ':';
}

}  // namespace

std::string FleetConf::Describe() const {
    return "redis://" + host + ":" + std::to_string(port) + "/" +
           std::to_string(db);
}

std::optional<std::string> ParseSharedState(
    const std::vector<std::string_view>& args, FleetConf* out) {
    if (args.empty()) {
        return "needs a redis:// URL";
    }
    FleetConf parsed;
    std::string_view url = args[0];
    constexpr std::string_view kScheme = "redis://";
    if (url.substr(0, kScheme.size()) != kScheme) {
        return "\"" + std::string(url) +
               "\" is not a redis://[:PASSWORD@]HOST:PORT[/DB] URL";
    }
    url.remove_prefix(kScheme.size());
    size_t at = url.rfind('@');
    if (at != std::string_view::npos) {
        std::string_view auth = url.substr(0, at);
        if (auth.empty() || auth[0] != ':' || auth.size() < 2) {
            return "the password goes as redis://:PASSWORD@HOST:PORT";
        }
        parsed.password = std::string(auth.substr(1));
        url.remove_prefix(at + 1);
    }
    size_t slash = url.find('/');
    std::string_view authority = url.substr(0, slash);
    if (slash != std::string_view::npos) {
        std::string_view db = url.substr(slash + 1);
        std::optional<uint64_t> number = conf::ParseCount(db, 0, 9999);
        if (!number) {
            return "the database number \"" + std::string(db) +
                   "\" is not a number";
        }
        parsed.db = static_cast<uint32_t>(*number);
    }
    size_t colon = authority.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        return "the URL needs HOST:PORT";
    }
    std::string_view port = authority.substr(colon + 1);
    std::optional<uint64_t> port_number = conf::ParseCount(port, 1, 65535);
    if (!port_number) {
        return "the port \"" + std::string(port) + "\" is not 1 to 65535";
    }
    parsed.host = std::string(authority.substr(0, colon));
    if (parsed.host.size() > 2 && parsed.host.front() == '[' &&
        parsed.host.back() == ']') {
        parsed.host = parsed.host.substr(1, parsed.host.size() - 2);
    }
    unsigned char addr[16];
    if (inet_pton(AF_INET, parsed.host.c_str(), addr) != 1 &&
        inet_pton(AF_INET6, parsed.host.c_str(), addr) != 1) {
        return "\"" + parsed.host +
               "\" is not an IP address (a name would be resolved on the "
               "poller thread, which must never wait)";
    }
    parsed.port = static_cast<uint16_t>(*port_number);
    for (size_t i = 1; i < args.size(); i++) {
        std::string_view word = args[i];
        if (word.substr(0, 7) == "prefix=") {
            std::string_view prefix = word.substr(7);
            if (prefix.empty() || prefix.size() > 64) {
                return "prefix= takes 1 to 64 characters";
            }
            for (char c : prefix) {
                if (!NameChar(c)) {
                    return "prefix= takes letters, digits and . _ - :";
                }
            }
            parsed.prefix = std::string(prefix);
        } else if (word.substr(0, 8) == "timeout=") {
            std::optional<uint64_t> ms = conf::ParseDurationMs(
                word.substr(8), FleetConf::kMaxTimeoutMs);
            if (!ms || *ms == 0 || *ms > FleetConf::kMaxTimeoutMs) {
                return "timeout= takes a time from 1ms to 1s, such as 200ms";
            }
            parsed.timeout_ms = static_cast<uint32_t>(*ms);
        } else {
            return "unknown parameter \"" + std::string(word) +
                   "\" (prefix=, timeout=)";
        }
    }
    parsed.host_id = out->host_id;
    *out = std::move(parsed);
    return std::nullopt;
}

std::optional<std::string> CheckHostId(std::string_view id) {
    if (id.empty() || id.size() > 64) {
        return "a host id is 1 to 64 characters";
    }
    for (char c : id) {
        if (!NameChar(c) || c == ':') {
            return "a host id takes letters, digits and . _ -";
        }
    }
    return std::nullopt;
}

}  // namespace solgate
