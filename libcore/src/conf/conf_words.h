// The words of Solgate's nginx.conf blocks that libcore checks: names
// (networks, upstreams, peers, regions), upstream URLs, tags and method
// lists. Each check returns nullopt when the word is valid, else a short
// lowercase message that the caller puts after the word it quotes, as in
// `invalid upstream id "a b": may contain only letters, digits, ...`.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace solgate::conf {

// Names are 1 to kMaxNameLength of [A-Za-z0-9-_.]: they appear in metrics
// labels, JSON keys and log lines, which must never need escaping.
constexpr size_t kMaxNameLength = 64;

std::optional<std::string_view> CheckName(std::string_view name);

// An http:// or https:// URL as operators write them: host[:port] (an
// address or an nginx `upstream {}` block name), then an optional path
// with a query ("/v1/KEY?x=1"). No credentials, spaces, control
// characters or fragments.
struct HttpUrl {
    bool https = false;
    std::string_view authority;  // host[:port]
    std::string_view path;       // from the first '/', may be empty
};

std::optional<std::string_view> ParseHttpUrl(std::string_view url,
                                             HttpUrl* out);

// "k:v,k:v": each key and value a non-empty word, one ':' per pair.
std::optional<std::string_view> CheckTags(std::string_view tags);

// "getBlock|getTransaction|get*": method names or globs joined by '|'.
std::optional<std::string_view> CheckMethods(std::string_view methods);

// The value of a "key=value" option when option starts with key ("weight=").
std::optional<std::string_view> OptionValue(std::string_view option,
                                            std::string_view key);

// The first option of `options` whose key ("weight=", or a flag such as
// "backup" whole) an earlier one has: an option given twice, whose last
// value would win unseen. nullopt when each is given once.
std::optional<std::string_view> RepeatedOption(
    const std::vector<std::string_view>& options, size_t first = 0);

// A time as nginx writes it: digits and a unit (ms, s, m, h; none means
// seconds), as milliseconds; nullopt when malformed or above max_ms.
std::optional<uint64_t> ParseDurationMs(std::string_view text,
                                        uint64_t max_ms);

// A decimal number from min to max; nullopt otherwise.
std::optional<uint64_t> ParseCount(std::string_view text, uint64_t min,
                                   uint64_t max);

}  // namespace solgate::conf
