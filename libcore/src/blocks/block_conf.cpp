#include "blocks/block_conf.h"

#include <utility>

namespace solgate {
namespace {

std::string Duplicate(std::string_view directive) {
    return Quoted(directive) + " directive is duplicate";
}

std::string TooMany(std::string_view what, size_t most) {
    return "too many " + std::string(what) + " (at most " +
           std::to_string(most) + ")";
}

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

}  // namespace

bool BlockServiceConf::HasQueue(size_t plan) const {
    return !long_term_urls_.empty() && plan < plans_.size() &&
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
    return SetOnce(&conf_.region_, "region", "invalid region name", name);
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
    if (name.empty()) {
        return "invalid peer name " + Quoted(name);
    }
    if (url.empty()) {
        return "invalid peer URL " + Quoted(url);
    }
    for (const BlockPeer& peer : conf_.peers_) {
        if (peer.name == name) {
            return "duplicate peer " + Quoted(name);
        }
    }
    if (conf_.peers_.size() >= kMaxBlockPeers) {
        return TooMany("peers", kMaxBlockPeers);
    }
    conf_.peers_.push_back({std::string(name), std::string(url), copy});
    return std::nullopt;
}

std::optional<std::string> BlockConfBuilder::LongTermStorage(
    std::string_view url) {
    if (url.empty()) {
        return "invalid long_term_storage URL " + Quoted(url);
    }
    if (conf_.long_term_urls_.size() >= kMaxLongTermUrls) {
        return TooMany("long_term_storage URLs", kMaxLongTermUrls);
    }
    conf_.long_term_urls_.emplace_back(url);
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
    if (out != nullptr) {
        *out = conf_;
    }
    return std::nullopt;
}

}  // namespace solgate
