// The arguments of `upstream ID URL [host=NAME] [tags=K:V,...]
// [methods=M|...] [ignore_methods=M|...] [weight=N] [backup]
// [max_fails=N] [fail_timeout=TIME] [debounce=TIME] [ws=URL] [tls_*=...]`
// in a solgate_network block, parsed and checked once, with the messages
// `nginx -t` prints.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/conf_words.h"
#include "conf/upstream_tls.h"

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

// ws=URL: the upstream's pubsub (WebSocket) endpoint, "ws://" or "wss://",
// as proxy_pass takes it ("http://" or "https://"; "/" added without a
// path). nullopt on success with *out filled, else what is wrong.
std::optional<std::string> ParsePubsubTarget(std::string_view url,
                                             ProxyTarget* out);

// How routing treats one upstream beside its health and lag.
struct UpstreamRouting {
    static constexpr uint32_t kMaxWeight = 1000;
    static constexpr uint64_t kMaxFailTimeoutMs = 3600000;

    uint32_t weight = 1;             // its share among equal candidates
    bool backup = false;             // only when no primary is eligible
    uint32_t max_fails = 1;          // consecutive failures that eject it
    uint32_t fail_timeout_ms = 10000;  // ... for this long; 0 fails: never
    uint32_t debounce_ms = 0;        // its own state_poller_debounce (0: the
                                     // network's)
};

struct UpstreamArgs {
    std::string id;
    ProxyTarget target;
    std::vector<std::string> tags;            // "key:value"
    std::vector<std::string> methods;         // served only these (globs)
    std::vector<std::string> ignore_methods;  // never these (globs)
    UpstreamRouting routing;
    ProxyTarget pubsub;  // ws=: url empty when the upstream has none
    UpstreamTls tls;           // the tls_* options as written
    TlsSettings tls_settings;  // ... with their files read
};

constexpr size_t kMaxUpstreamOptions = 16;

// Checks a new id against what is already configured (duplicates, the
// count limit): nullopt when it may be added, else the message.
using NewIdCheck =
    std::function<std::optional<std::string>(std::string_view id)>;

// args: ID URL and its options, in that order. nullopt on success
// with *out filled, else the message (ids and tokens quoted as written).
// conf_prefix: where relative tls_* files are (conf/upstream_tls.h).
std::optional<std::string> ParseUpstreamArgs(
    const std::vector<std::string_view>& args, const NewIdCheck& check_new,
    std::string_view conf_prefix, UpstreamArgs* out);

// The warning `nginx -t` gives when methods= or ignore_methods= of upstream
// `id` names what is no Solana method (a glob with '*' is never one): a
// typo would keep every call of the method away from the upstream.
std::optional<std::string> UnknownMethodsWarning(
    std::string_view id, const std::vector<std::string>& methods,
    const std::vector<std::string>& ignore_methods);

// The same for the methods of a failsafe policy (broadcast, consensus,
// hedge): a typo leaves every call of the method out of the policy.
std::optional<std::string> PolicyMethodsWarning(
    std::string_view policy, const std::vector<std::string>& methods);

}  // namespace solgate::conf
