#include "conf/upstream_args.h"

#include "conf/conf_messages.h"
#include "rpc/solana_methods.h"
#include "solgate/solgate.h"

namespace solgate::conf {
namespace {

std::vector<std::string> Split(std::string_view list, char separator) {
    std::vector<std::string> items;
    while (!list.empty()) {
        size_t end = list.find(separator);
        items.emplace_back(list.substr(0, end));
        list = end == std::string_view::npos ? std::string_view()
                                             : list.substr(end + 1);
    }
    return items;
}

// key=VALUE when option starts with key=; nullopt otherwise.
std::optional<std::string> ParseOption(std::string_view option,
                                       UpstreamArgs* out) {
    std::string in = " in upstream " + Quoted(out->id);
    if (auto host = OptionValue(option, "host=")) {
        if (host->empty()) {
            return "empty \"host=\"" + in;
        }
        out->target.host = std::string(*host);
        return std::nullopt;
    }
    if (auto tags = OptionValue(option, "tags=")) {
        if (auto bad = CheckTags(*tags)) {
            return "invalid tags " + Quoted(*tags) + in + ": " +
                   std::string(*bad);
        }
        out->tags = Split(*tags, ',');
        return std::nullopt;
    }
    for (auto [key, list] :
         {std::pair{"methods=", &out->methods},
          std::pair{"ignore_methods=", &out->ignore_methods}}) {
        if (auto methods = OptionValue(option, key)) {
            if (auto bad = CheckMethods(*methods)) {
                return "invalid method list " + Quoted(*methods) + in +
                       ": " + std::string(*bad);
            }
            *list = Split(*methods, '|');
            return std::nullopt;
        }
    }
    if (option == "backup") {
        out->routing.backup = true;
        return std::nullopt;
    }
    if (auto weight = OptionValue(option, "weight=")) {
        auto n = ParseCount(*weight, 1, UpstreamRouting::kMaxWeight);
        if (!n) {
            return "invalid \"weight=\" " + Quoted(*weight) + in +
                   ": must be a number from 1 to " +
                   std::to_string(UpstreamRouting::kMaxWeight);
        }
        out->routing.weight = static_cast<uint32_t>(*n);
        return std::nullopt;
    }
    if (auto fails = OptionValue(option, "max_fails=")) {
        auto n = ParseCount(*fails, 0, 1000);
        if (!n) {
            return "invalid \"max_fails=\" " + Quoted(*fails) + in +
                   ": must be a number from 0 (never ejected) to 1000";
        }
        out->routing.max_fails = static_cast<uint32_t>(*n);
        return std::nullopt;
    }
    if (auto timeout = OptionValue(option, "fail_timeout=")) {
        auto ms = ParseDurationMs(*timeout, UpstreamRouting::kMaxFailTimeoutMs);
        if (!ms || *ms == 0) {
            return "invalid \"fail_timeout=\" " + Quoted(*timeout) + in +
                   ": must be a time from 1ms to 1h, such as 10s";
        }
        out->routing.fail_timeout_ms = static_cast<uint32_t>(*ms);
        return std::nullopt;
    }
    if (auto ws = OptionValue(option, "ws=")) {
        if (auto bad = ParsePubsubTarget(*ws, &out->pubsub)) {
            return "invalid \"ws=\" " + Quoted(*ws) + in + ": " + *bad;
        }
        return std::nullopt;
    }
    if (auto debounce = OptionValue(option, "debounce=")) {
        auto ms = ParseDurationMs(*debounce, SG_MAX_DEBOUNCE_MS);
        if (!ms || *ms == 0) {
            return "invalid \"debounce=\" " + Quoted(*debounce) + in +
                   ": must be a time from 1ms to " +
                   std::to_string(SG_MAX_DEBOUNCE_MS / 1000) + "s";
        }
        out->routing.debounce_ms = static_cast<uint32_t>(*ms);
        return std::nullopt;
    }
    if (IsTlsOption(option)) {
        return ParseTlsOption(option, in, &out->tls);
    }
    return "invalid parameter " + Quoted(option) + in +
           ", expected \"host=\", \"tags=\", \"methods=\", "
           "\"ignore_methods=\", \"weight=\", \"backup\", "
           "\"max_fails=\", \"fail_timeout=\", \"debounce=\", \"ws=\" "
           "or a \"tls_\" option";
}

}  // namespace

ProxyTarget MakeProxyTarget(std::string_view url, const HttpUrl& parsed) {
    ProxyTarget target;
    target.url = std::string(url);
    if (parsed.path.empty()) {
        target.url += '/';
    }
    target.authority = std::string(parsed.authority);
    target.host = target.authority;
    target.path = parsed.path.empty() ? "/" : std::string(parsed.path);
    target.https = parsed.https;
    return target;
}

std::optional<std::string> ParsePubsubTarget(std::string_view url,
                                             ProxyTarget* out) {
    constexpr std::string_view kWss = "wss://";
    constexpr std::string_view kWs = "ws://";
    std::string http;
    if (url.substr(0, kWss.size()) == kWss) {
        http = "https://" + std::string(url.substr(kWss.size()));
    } else if (url.substr(0, kWs.size()) == kWs) {
        http = "http://" + std::string(url.substr(kWs.size()));
    } else {
        return std::string("must start with \"ws://\" or \"wss://\"");
    }
    HttpUrl parsed;
    if (auto bad = ParseHttpUrl(http, &parsed)) {
        return std::string(*bad);
    }
    *out = MakeProxyTarget(http, parsed);
    return std::nullopt;
}

std::optional<std::string> ParseUpstreamArgs(
    const std::vector<std::string_view>& args, const NewIdCheck& check_new,
    std::string_view conf_prefix, UpstreamArgs* out) {
    *out = UpstreamArgs{};
    if (args.size() < 2) {
        return "\"upstream\" needs an id and a URL";
    }
    if (args.size() > 2 + kMaxUpstreamOptions) {
        return "too many parameters in \"upstream\" " + Quoted(args[0]) +
               ": at most " + std::to_string(kMaxUpstreamOptions) +
               " options";
    }
    if (auto bad = CheckName(args[0])) {
        return "invalid upstream id " + Quoted(args[0]) + ": " +
               std::string(*bad);
    }
    if (auto refused = check_new(args[0])) {
        return refused;
    }
    HttpUrl url;
    if (auto bad = ParseHttpUrl(args[1], &url)) {
        return "invalid upstream URL " + Quoted(args[1]) + ": " +
               std::string(*bad);
    }
    out->id = std::string(args[0]);
    out->target = MakeProxyTarget(args[1], url);
    for (size_t i = 2; i < args.size(); i++) {
        if (auto bad = ParseOption(args[i], out)) {
            return bad;
        }
    }
    // (after each is read: a misspelt one is named for what it is)
    if (auto key = RepeatedOption(args, 2)) {
        return Quoted(*key) + " given twice in upstream " + Quoted(out->id);
    }
    std::string in = " in upstream " + Quoted(out->id);
    for (const std::string& name : out->methods) {
        for (const std::string& ignored : out->ignore_methods) {
            if (name == ignored) {
                return Quoted(name) + " is in both \"methods=\" and "
                       "\"ignore_methods=\"" + in;
            }
        }
    }
    if (auto bad = CheckTls(out->tls, out->target.https, in)) {
        return bad;
    }
    if (auto bad = LoadTls(out->tls, conf_prefix, in, &out->tls_settings)) {
        return bad;
    }
    if (!out->pubsub.url.empty() &&
        out->target.host != out->target.authority) {
        out->pubsub.host = out->target.host;  // host= names both endpoints
    }
    return std::nullopt;
}

namespace {

// The names of `list` that are no Solana method (a glob with '*' is never
// one), quoted and joined by ", ".
void AppendUnknownMethods(const std::vector<std::string>& list,
                          std::string* unknown) {
    for (const std::string& name : list) {
        bool known = name.find('*') != std::string::npos ||
                     SolanaMethodIndex(name) != kOtherMethod;
        if (!known) {
            *unknown += (unknown->empty() ? "" : ", ") + Quoted(name);
        }
    }
}

}  // namespace

std::optional<std::string> UnknownMethodsWarning(
    std::string_view id, const std::vector<std::string>& methods,
    const std::vector<std::string>& ignore_methods) {
    std::string unknown;
    AppendUnknownMethods(methods, &unknown);
    AppendUnknownMethods(ignore_methods, &unknown);
    if (unknown.empty()) {
        return std::nullopt;
    }
    return "upstream " + Quoted(id) + " names " + unknown +
           ", which Solgate does not know as Solana methods (a typo keeps "
           "every such call from the upstream)";
}

std::optional<std::string> PolicyMethodsWarning(
    std::string_view policy, const std::vector<std::string>& methods) {
    std::string unknown;
    AppendUnknownMethods(methods, &unknown);
    if (unknown.empty()) {
        return std::nullopt;
    }
    return Quoted(policy) + " names " + unknown +
           ", which Solgate does not know as Solana methods (a typo leaves "
           "every such call out of the policy)";
}

}  // namespace solgate::conf
