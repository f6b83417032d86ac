#include "blocks/block_conf.h"

#include <utility>

#include "conf/conf_messages.h"
#include "conf/conf_words.h"

namespace solgate {
namespace {

using conf::Duplicate;
using conf::Quoted;
using conf::TooMany;

// The directories and the region are given once and must say something.
std::optional<std::string> SetOnce(std::string* field,
                                   std::string_view directive,
                                   std::string_view invalid,
                                   std::string_view value) {
    if (!field->empty()) {
        return Duplicate(directive);
    }
    if (value.empty()) {
        return std::string(invalid) + " " + Quoted(value);
    }
    field->assign(value);
    return std::nullopt;
}

// "invalid peer name "x": why" when `name` is not a name.
std::optional<std::string> BadName(std::string_view what,
                                   std::string_view name) {
    if (auto bad = conf::CheckName(name)) {
        return "invalid " + std::string(what) + " " + Quoted(name) + ": " +
               std::string(*bad);
    }
    return std::nullopt;
}

std::optional<std::string> BadUrl(std::string_view what, std::string_view url,
                                  conf::HttpUrl* parsed) {
    if (auto bad = conf::ParseHttpUrl(url, parsed)) {
        return "invalid " + std::string(what) + " " + Quoted(url) + ": " +
               std::string(*bad);
    }
    return std::nullopt;
}

}  // namespace

bool BlockServiceConf::HasQueue(size_t plan) const {
    return !long_term_.empty() && plan < plans_.size() &&
           plans_[plan].HasLongTermStorage();
}

size_t BlockServiceConf::QueuedPlans() const {
    size_t n = 0;
    for (size_t p = 0; p < plans_.size(); p++) {
        n += HasQueue(p) ? 1 : 0;
    }
    return n;
}

std::optional<std::string> BlockConfBuilder::Region(std::string_view name) {
    if (!conf_.region_.empty()) {
        return Duplicate("region");
    }
    if (auto bad = BadName("region name", name)) {
        return bad;
    }
    conf_.region_.assign(name);
    return std::nullopt;
}

std::optional<std::string> BlockConfBuilder::Cache(std::string_view dir) {
    return SetOnce(&conf_.cache_dir_, "cache", "invalid cache directory",
                   dir);
}

std::optional<std::string> BlockConfBuilder::MaxSize(uint64_t bytes) {
    conf_.max_bytes_ = bytes;
    return std::nullopt;
}

std::optional<std::string> BlockConfBuilder::State(std::string_view dir) {
    return SetOnce(&conf_.state_dir_, "state", "invalid state directory",
                   dir);
}

std::optional<std::string> BlockConfBuilder::PeerToken(
    std::string_view token) {
    if (!conf_.peer_token_.empty()) {
        return Duplicate("peer_token");
    }
    if (token.size() < kMinPeerTokenBytes) {
        return "peer_token must be at least " +
               std::to_string(kMinPeerTokenBytes) +
               " bytes: it is all that tells another region from a client";
    }
    conf_.peer_token_.assign(token);
    return std::nullopt;
}

std::optional<std::string> BlockConfBuilder::Peer(std::string_view name,
                                                  std::string_view url,
                                                  bool copy) {
    if (auto bad = BadName("peer name", name)) {
        return bad;
    }
    conf::HttpUrl parsed;
    if (auto bad = BadUrl("peer URL", url, &parsed)) {
        return bad;
    }
    for (const BlockPeer& peer : conf_.peers_) {
        if (peer.name == name) {
            return "duplicate peer " + Quoted(name);
        }
    }
    if (conf_.peers_.size() >= kMaxBlockPeers) {
        return TooMany("peers", kMaxBlockPeers);
    }
    conf::ProxyTarget target = conf::MakeProxyTarget(url, parsed);
    conf_.peers_.push_back({std::string(name), target.url, copy, target});
    return std::nullopt;
}

std::optional<std::string> BlockConfBuilder::PeerArgs(
    const std::vector<std::string_view>& args) {
    if (args.size() < 2 || args.size() > 3) {
        return std::string("\"peer\" needs a name, a URL and at most "
                           "\"copy=on\" or \"copy=off\"");
    }
    bool copy = true;
    if (args.size() == 3) {
        if (args[2] != "copy=on" && args[2] != "copy=off") {
            return "invalid parameter " + Quoted(args[2]) +
                   ", it must be \"copy=on\" or \"copy=off\"";
        }
        copy = args[2] == "copy=on";
    }
    return Peer(args[0], args[1], copy);
}

std::optional<std::string> BlockConfBuilder::LongTermStorage(
    std::string_view url) {
    conf::HttpUrl parsed;
    if (auto bad = BadUrl("long_term_storage URL", url, &parsed)) {
        return bad;
    }
    if (conf_.long_term_.size() >= kMaxLongTermUrls) {
        return TooMany("long_term_storage URLs", kMaxLongTermUrls);
    }
    conf_.long_term_.push_back({std::string(url)});
    return std::nullopt;
}

std::string LongTermName(const LongTermEndpoint& endpoint) {
    if (endpoint.connect_to.size() <= 2) {
        return endpoint.url;
    }
    // connect_to is "::ADDRESS" (conf/block_servers.h)
    return endpoint.url + " (server " + endpoint.connect_to.substr(2) + ")";
}

std::string_view BlockConfBuilder::LongTermAuthority(size_t i) const {
    conf::HttpUrl parsed;
    if (i >= conf_.long_term_.size() ||
        conf::ParseHttpUrl(conf_.long_term_[i].url, &parsed)) {
        return {};
    }
    return parsed.authority;
}

namespace {

// The poller would check a block's server's certificate against the
// block's name, which no certificate carries.
std::optional<std::string> HttpsThroughBlock(const std::string& what,
                                             std::string_view url) {
    conf::HttpUrl parsed;
    if (conf::ParseHttpUrl(url, &parsed) || !parsed.https) {
        return std::nullopt;
    }
    return what + ": an https:// URL cannot name an upstream block (the "
           "poller would check the certificate against " +
           Quoted(parsed.authority) + "); name the host";
}

}  // namespace

// Called from the last URL to the first, so the indices of those not yet
// split stay as written.
std::optional<std::string> BlockConfBuilder::LongTermThroughBlock(
    size_t i, const std::vector<BlockServer>& servers) {
    if (i >= conf_.long_term_.size()) {
        return std::string("no such long_term_storage URL");
    }
    const LongTermEndpoint written = conf_.long_term_[i];
    if (auto bad = HttpsThroughBlock(
            "long_term_storage URL " + Quoted(written.url), written.url)) {
        return bad;
    }
    std::vector<std::string> connect_to;
    if (auto bad = ReachableServers(
            servers, "long_term_storage URL " + Quoted(written.url),
            LongTermAuthority(i), &connect_to)) {
        return bad;
    }
    if (conf_.long_term_.size() - 1 + connect_to.size() > kMaxLongTermUrls) {
        return "the servers of upstream block " +
               Quoted(LongTermAuthority(i)) + " make more than " +
               std::to_string(kMaxLongTermUrls) +
               " long_term_storage endpoints";
    }
    std::vector<LongTermEndpoint> split;
    for (std::string& to : connect_to) {
        split.push_back({written.url, std::move(to)});
    }
    auto at = conf_.long_term_.begin() + static_cast<std::ptrdiff_t>(i);
    at = conf_.long_term_.erase(at);
    conf_.long_term_.insert(at, split.begin(), split.end());
    return std::nullopt;
}

std::optional<std::string> BlockConfBuilder::PeerThroughBlock(
    size_t p, const std::vector<BlockServer>& servers) {
    if (p >= conf_.peers_.size()) {
        return std::string("no such peer");
    }
    BlockPeer& peer = conf_.peers_[p];
    if (auto bad = HttpsThroughBlock("peer " + Quoted(peer.name), peer.url)) {
        return bad;
    }
    std::vector<std::string> connect_to;
    if (auto bad = ReachableServers(servers, "peer " + Quoted(peer.name),
                                    peer.target.authority, &connect_to)) {
        return bad;
    }
    peer.connect_to = connect_to.front();
    return std::nullopt;
}

std::optional<std::string> BlockConfBuilder::PlanDefine(
    std::string_view name, const std::vector<std::string_view>& args) {
    BlockPlan plan;
    if (auto bad = ParsePlanDefine(name, args, &plan)) {
        return bad;
    }
    // Redefining a plan replaces it in place: only a new one needs room.
    if (FindPlan(conf_.plans_, plan.name) == nullptr &&
        conf_.plans_.size() >= kMaxBlockPlans) {
        return TooMany("plans", kMaxBlockPlans);
    }
    DefinePlan(&conf_.plans_, std::move(plan));
    return std::nullopt;
}

std::optional<std::string> BlockConfBuilder::KeylessPlan(
    std::string_view name) {
    if (!conf_.keyless_plan_.empty()) {
        return Duplicate("keyless_plan");
    }
    if (auto bad = BadName("keyless_plan", name)) {
        return bad;
    }
    conf_.keyless_plan_.assign(name);
    return std::nullopt;
}

std::optional<std::string> BlockConfBuilder::CacheLockTimeout(
    std::string_view time) {
    if (conf_.cache_lock_timeout_set_) {
        return Duplicate("cache_lock_timeout");
    }
    std::optional<uint64_t> ms =
        conf::ParseDurationMs(time, kMaxCacheLockTimeoutMs);
    if (!ms) {
        return "invalid cache_lock_timeout " + Quoted(time) +
               ": must be a time up to 60s (0 turns the lock off)";
    }
    conf_.cache_lock_timeout_ms_ = static_cast<int64_t>(*ms);
    conf_.cache_lock_timeout_set_ = true;
    return std::nullopt;
}

namespace {

constexpr std::string_view kKeylessPrefix = "client:";

// An IPv6 address's first four groups (its /64, one subscriber's network);
// an IPv4 address whole.
std::string_view Subscriber(std::string_view address) {
    constexpr std::string_view kMapped = "::ffff:";   // IPv4 on an IPv6 socket
    if (address.substr(0, kMapped.size()) == kMapped &&
        address.find('.') != std::string_view::npos) {
        return address.substr(kMapped.size());
    }
    if (address.find(':') == std::string_view::npos) {
        return address;
    }
    size_t at = 0;
    for (int group = 0; group < 4 && at != std::string_view::npos; group++) {
        at = address.find(':', at == 0 ? 0 : at + 1);
        if (at != std::string_view::npos && at + 1 < address.size() &&
            address[at + 1] == ':') {
            return address.substr(0, at);   // "::" shortens what follows
        }
    }
    return at == std::string_view::npos ? address : address.substr(0, at);
}

uint64_t Fnv1a(std::string_view text) {
    uint64_t h = 1469598103934665603ULL;
    for (char c : text) {
        h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    }
    return h;
}

}  // namespace

BlockCaller CallerOf(const BlockServiceConf& conf, std::string_view api_key,
                     std::string_view plan, std::string_view client,
                     std::string* owned) {
    if (api_key.substr(0, kKeylessPrefix.size()) == kKeylessPrefix) {
        return {api_key, ""};   // never an anonymous caller's budget
    }
    if (!api_key.empty() || conf.keyless_plan().empty() || client.empty()) {
        return {api_key, plan};
    }
    *owned = kKeylessPrefix;
    owned->append(std::to_string(Fnv1a(Subscriber(client)) % kKeylessKeys));
    return {*owned, conf.keyless_plan()};
}

std::optional<std::string> BlockConfBuilder::Build(
    BlockServiceConf* out) const {
    if (conf_.region_.empty()) {
        return std::string("needs \"region\"");
    }
    if (conf_.cache_dir_.empty()) {
        return std::string("needs \"cache\"");
    }
    if (conf_.state_dir_.empty()) {
        return std::string("needs \"state\"");
    }
    if (!conf_.peers_.empty() && conf_.peer_token_.empty()) {
        return std::string("has a \"peer\" but no \"peer_token\"");
    }
    if (!conf_.keyless_plan_.empty() &&
        FindPlan(conf_.plans_, conf_.keyless_plan_) == nullptr) {
        return "keyless_plan " + Quoted(conf_.keyless_plan_) +
               " is not a plan (neither built in nor plan_define'd)";
    }
    if (out != nullptr) {
        *out = conf_;
    }
    return std::nullopt;
}

std::optional<std::string> BlockConfBuilder::Check(bool has_api_key,
                                                   bool has_plan) const {
    if (auto bad = Build(nullptr)) {
        return bad;
    }
    if (!has_api_key) {
        return std::string("needs \"api_key\"");
    }
    if (!has_plan) {
        return std::string("needs \"plan\"");
    }
    return std::nullopt;
}

}  // namespace solgate
