// The configuration of one `solgate_blocks` block, and the only way to make
// one: a BlockConfBuilder that checks every directive as it is given and
// says what is wrong the way nginx does (lowercase, no full stop, the bad
// token quoted), then a frozen BlockServiceConf that nothing can change.
//
// Every limit of the block is defined here and checked here once; the
// nginx module need not repeat them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blocks/block_plans.h"
#include "blocks/block_retention.h"
#include "conf/block_servers.h"
#include "conf/upstream_args.h"

namespace solgate {

// The shared zone has a counter array of this size per peer and per plan.
constexpr size_t kMaxBlockPeers = 16;
constexpr size_t kMaxBlockPlans = 32;
constexpr size_t kMaxLongTermUrls = 8;
// The shortest peer_token accepted: it is the only thing that tells a
// region from a client.
constexpr size_t kMinPeerTokenBytes = 16;
// How long a getBlock miss waits, by default, for another request's fetch
// of the same block (cache_lock_timeout), and the longest accepted.
constexpr int64_t kDefaultCacheLockTimeoutMs = 5000;
constexpr int64_t kMaxCacheLockTimeoutMs = 60000;

struct BlockPeer {
    std::string name;
    std::string url;          // the peer gateway's JSON-RPC endpoint
    bool copy = true;         // copy what it holds in the background
    conf::ProxyTarget target; // where proxy_pass sends it
    // CONNECT_TO for the poller when the URL names an upstream block: its
    // first server up (conf/block_servers.h); "" otherwise.
    std::string connect_to{};
};

// A long-term storage endpoint the poller asks: the URL as written, and
// for a URL naming an upstream block, the server (CONNECT_TO) it goes to.
struct LongTermEndpoint {
    std::string url;
    std::string connect_to{};
};

// How logs and /solgate/state name an endpoint: its URL, and the block's
// server it goes to ("http://archive_pool/ (server 10.0.0.5:8899)").
std::string LongTermName(const LongTermEndpoint& endpoint);

class BlockConfBuilder;

// What a BlockConfBuilder checked; read-only from then on. A default one
// is the empty block (no region, no peers, the default plans): a place for
// Build to write to.
class BlockServiceConf {
public:
    BlockServiceConf() = default;

    const std::string& region() const { return region_; }
    const std::string& cache_dir() const { return cache_dir_; }
    uint64_t max_bytes() const { return max_bytes_; }   // 0: no limit
    const std::string& state_dir() const { return state_dir_; }
    // The X-Solgate-Peer value regions send each other; "": this gateway
    // answers no region and asks none.
    const std::string& peer_token() const { return peer_token_; }
    const std::vector<BlockPeer>& peers() const { return peers_; }
    // JSON-RPC endpoints holding every block since genesis, tried in order.
    const std::vector<LongTermEndpoint>& long_term() const {
        return long_term_;
    }
    const std::vector<BlockPlan>& plans() const { return plans_; }
    // The plan calls without an API key are served on, each client
    // address a key of its own; "": they get HTTP 401.
    const std::string& keyless_plan() const { return keyless_plan_; }
    const RetentionPolicy& retention() const { return retention_; }
    // How long a miss waits for another request's fetch of the same block
    // before fetching it itself; 0: it never waits (no cache lock).
    int64_t cache_lock_timeout_ms() const { return cache_lock_timeout_ms_; }

    // Whether plan p gets a long-term storage queue: an archive plan, with
    // storage configured.
    bool HasQueue(size_t plan) const;
    size_t QueuedPlans() const;

private:
    friend class BlockConfBuilder;

    std::string region_;
    std::string cache_dir_;
    uint64_t max_bytes_ = 0;
    std::string state_dir_;
    std::string peer_token_;
    std::vector<BlockPeer> peers_;
    std::vector<LongTermEndpoint> long_term_;
    std::vector<BlockPlan> plans_ = DefaultBlockPlans();
    std::string keyless_plan_;
    RetentionPolicy retention_;
    int64_t cache_lock_timeout_ms_ = kDefaultCacheLockTimeoutMs;
    bool cache_lock_timeout_set_ = false;
};

// The key and plan a call is served on: its own, or, for a call without a
// key when keyless_plan is set, its client address's on that plan. The
// addresses (IPv6 by their /64) share kKeylessKeys keys ("client:NN", kept
// in *owned), so anonymous callers never hold more of the key table than
// that. An API key that starts with "client:" has no plan.
constexpr size_t kKeylessKeys = 256;
struct BlockCaller {
    std::string_view api_key;
    std::string_view plan;
};
BlockCaller CallerOf(const BlockServiceConf& conf, std::string_view api_key,
                     std::string_view plan, std::string_view client,
                     std::string* owned);

// One step per directive, in any order. A step returns nullopt, or the
// reason it refused (and then changed nothing):
//   Region          "region" directive is duplicate
//                   invalid region name "x y": may contain only ...
//   Cache           "cache" directive is duplicate
//                   invalid cache directory ""
//   State           "state" directive is duplicate
//                   invalid state directory ""
//   PeerToken       "peer_token" directive is duplicate
//                   peer_token must be at least 16 bytes: it is all that
//                   tells another region from a client
//   Peer            invalid peer name "x y": may contain only ...
//                   invalid peer URL "x": must start with "http://" ...
//                   duplicate peer "NAME"
//                   too many peers (at most 16)
//   PeerArgs        Peer's, and invalid parameter "x", it must be
//                   "copy=on" or "copy=off"
//   LongTermStorage invalid long_term_storage URL "x": ...
//                   too many long_term_storage URLs (at most 8)
//   LongTermThroughBlock, PeerThroughBlock (once nginx knows the URL's
//                   host is an upstream block, with its servers):
//                   ReachableServers' messages (conf/block_servers.h), and
//                   the servers of ... make more than 8 long_term_storage
//                   endpoints
//   PlanDefine      ParsePlanDefine's messages (block_plans.h), and
//                   too many plans (at most 32)
//   KeylessPlan     "keyless_plan" directive is duplicate
//   CacheLockTimeout "cache_lock_timeout" directive is duplicate
//                   invalid cache_lock_timeout "x": must be a time up to 60s
//                   (0 turns the lock off)
// MaxSize refuses nothing (0: no limit). Names and URLs are checked as the
// network's are (conf/conf_words.h); whether a URL names an upstream
// block is nginx's to know.
// Build checks what only the whole block can tell, in this order, each
// message meant to follow `solgate_blocks "NETWORK" `:
//   needs "region"      needs "cache"      needs "state"
//   has a "peer" but no "peer_token"
//   keyless_plan "NAME" is not a plan (neither built in nor plan_define'd)
// and Check, for the whole block as nginx read it, then:
//   needs "api_key"     needs "plan"
// (the two request variables nginx evaluates; the module holds them).
class BlockConfBuilder {
public:
    BlockConfBuilder() = default;

    std::optional<std::string> Region(std::string_view name);
    std::optional<std::string> Cache(std::string_view dir);
    std::optional<std::string> MaxSize(uint64_t bytes);
    std::optional<std::string> State(std::string_view dir);
    std::optional<std::string> PeerToken(std::string_view token);
    std::optional<std::string> Peer(std::string_view name,
                                    std::string_view url, bool copy);
    // peer NAME URL [copy=on|off]: the directive's arguments.
    std::optional<std::string> PeerArgs(
        const std::vector<std::string_view>& args);
    // The peer added last (for the module's proxy_pass variables).
    const BlockPeer& last_peer() const { return conf_.peers_.back(); }
    std::optional<std::string> LongTermStorage(std::string_view url);
    // The host[:port] of long_term_storage URL i, in configuration order
    // (for nginx to tell whether it names an upstream block).
    std::string_view LongTermAuthority(size_t i) const;
    // Long-term URL i (or peer p) names an upstream block: the poller
    // reaches its servers, each a long-term endpoint of its own in place
    // of URL i (one peer asks its first server up).
    std::optional<std::string> LongTermThroughBlock(
        size_t i, const std::vector<BlockServer>& servers);
    std::optional<std::string> PeerThroughBlock(
        size_t p, const std::vector<BlockServer>& servers);
    std::optional<std::string> PlanDefine(
        std::string_view name, const std::vector<std::string_view>& args);
    std::optional<std::string> KeylessPlan(std::string_view name);
    std::optional<std::string> CacheLockTimeout(std::string_view time);

    // nullopt with the frozen configuration in *out (which may be null to
    // only check), or the first thing missing.
    std::optional<std::string> Build(BlockServiceConf* out) const;
    // Build's checks, then whether the block gave api_key and plan.
    std::optional<std::string> Check(bool has_api_key, bool has_plan) const;

private:
    BlockServiceConf conf_;
};

}  // namespace solgate
