// The arguments of `upstream ID URL [host=NAME] [tags=K:V,...]
// [methods=M|...] [ignore_methods=M|...]` in a solgate_network block,
// parsed and checked once, with the messages `nginx -t` prints.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/conf_words.h"

namespace solgate::conf {

// Where nginx's proxy_pass sends a request for one upstream (or another
// region's gateway): the URL as configured, with "/" added when it has no
// path (so the client's own URI is never sent), and the Host header.
struct ProxyTarget {
    std::string url;
    std::string host;       // host= when given, else the URL's authority
    std::string authority;  // host[:port] of the URL
    std::string path;       // of `url`, from its first '/'
    bool https = false;
};

ProxyTarget MakeProxyTarget(std::string_view url, const HttpUrl& parsed);

struct UpstreamArgs {
    std::string id;
    ProxyTarget target;
    std::vector<std::string> tags;            // "key:value"
    std::vector<std::string> methods;         // served only these (globs)
    std::vector<std::string> ignore_methods;  // never these (globs)
};

// Checks a new id against what is already configured (duplicates, the
// count limit): nullopt when it may be added, else the message.
using NewIdCheck =
    std::function<std::optional<std::string>(std::string_view id)>;

// args: ID URL and up to four options, in that order. nullopt on success
// with *out filled, else the message (ids and tokens quoted as written).
std::optional<std::string> ParseUpstreamArgs(
    const std::vector<std::string_view>& args, const NewIdCheck& check_new,
    UpstreamArgs* out);

}  // namespace solgate::conf
