#include "fleet/region_rates.h"

#include <algorithm>
#include <cmath>

#include "conf/conf_words.h"
#include "fleet/fleet_keys.h"
#include "routing/network.h"
#include "slots/state_poller.h"

namespace solgate {
namespace {

// KEYS[1]: the region's buckets. ARGV: field, calls, interval us, ...
// Each bucket moves to max(its time, now) + calls x interval (GCRA, as
// the host's own); answers how far ahead of now each one is, in us.
constexpr const char* kRateScript = R"(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
for i = 1, #ARGV, 3 do
  local tat = tonumber(redis.call('HGET', KEYS[1], ARGV[i])) or 0
  local calls = tonumber(ARGV[i + 1])
  if tat < now then tat = now end
  if calls > 0 then
    tat = tat + calls * tonumber(ARGV[i + 2])
    redis.call('HSET', KEYS[1], ARGV[i], string.format('%.0f', tat))
  elseif tat <= now then
    redis.call('HDEL', KEYS[1], ARGV[i])
  end
  out[#out + 1] = string.format('%.0f', tat - now)
end
redis.call('PEXPIRE', KEYS[1], 3600000)
return out
)";

}  // namespace

RegionRates::RegionRates(const BlockServiceConf& conf, SharedBlocks& zone,
                         FleetStore& store, std::string prefix,
                         std::string network, uint32_t pid)
    : conf_(conf),
      zone_(zone),
      store_(store),
      key_(RegionKeyTag(prefix, network, conf.region()) + "rate"),
      pid_(pid) {}

RegionRates::~RegionRates() {
    if (zone_.bound()) {
        zone_.leases().ReleaseLease(kRateSyncLease, pid_);
    }
}

void RegionRates::Tick(int64_t now_ms) {
    if (!zone_.bound() || !store_.Up() || in_flight_) {
        return;
    }
    if (!zone_.leases().ClaimLease(kRateSyncLease, pid_, now_ms,
                                   kLeaseTtlMs)) {
        reported_.clear();   // another process tells the region
        holding_ = false;
        return;
    }
    // The first tick after taking the lease (a start, a reload, another
    // worker's exit) only notes where each key stands: its calls before
    // were told by the process that held the lease, or are history.
    // After that, a key seen for the first time is new since the last
    // tick, and all its calls are told.
    bool baseline = !holding_;
    holding_ = true;
    std::vector<KeyId> ids;
    FleetStore::Words args;
    for (const KeySnapshot& k : zone_.keys().Snapshot()) {
        if (k.plan_index >= conf_.plans().size()) {
            continue;
        }
        double rate = conf_.plans()[k.plan_index].getblock_rate;
        if (!(rate > 0)) {
            continue;
        }
        uint64_t allowed = k.requests - std::min(k.limited, k.requests);
        auto [it, first_sight] = reported_.try_emplace(k.id);
        Reported& r = it->second;
        if (first_sight && baseline) {
            r.allowed = allowed;
        }
        uint64_t calls = allowed >= r.allowed ? allowed - r.allowed : 0;
        r.allowed = allowed;
        // at most what one tick can allow (a burst and a tick of the rate)
        double most = std::ceil(rate) + rate * kPollIntervalMs / 1000.0 + 1;
        calls = std::min<uint64_t>(calls, static_cast<uint64_t>(most));
        if (calls == 0 && now_ms - k.last_seen_ms > kRateActiveMs) {
            continue;
        }
        int64_t interval_us =
            std::max<int64_t>(1, std::llround(1e6 / std::min(rate, 1e6)));
        ids.push_back(k.id);
        // the stored text names the key in every host's table alike
        args.push_back(k.key + (k.key_length > k.key.size()
                                    ? "#" + std::to_string(k.key_length)
                                    : ""));
        args.push_back(std::to_string(calls));
        args.push_back(std::to_string(interval_us));
    }
    if (ids.empty()) {
        return;
    }
    in_flight_ = true;
    std::weak_ptr<bool> alive = alive_;
    store_.Eval(kRateScript, {key_}, std::move(args),
                [this, alive, ids, now_ms](
                    std::optional<FleetStore::Words> ahead) {
                    if (!alive.expired()) {
                        OnAnswer(ids, ahead, now_ms);
                    }
                });
}

void RegionRates::OnAnswer(const std::vector<KeyId>& ids,
                           const std::optional<FleetStore::Words>& ahead,
                           int64_t asked_ms) {
    in_flight_ = false;
    if (!ahead || ahead->size() != ids.size()) {
        return;
    }
    for (size_t i = 0; i < ids.size(); i++) {
        std::optional<uint64_t> us =
            conf::ParseCount((*ahead)[i], 0, INT64_MAX / 2);
        if (us && *us > 0) {
            // ahead of the store's now when it answered; asked_ms is
            // when this host asked, never later than that
            zone_.keys().RaiseBucket(
                ids[i], asked_ms * 1000 + static_cast<int64_t>(*us));
        }
    }
}

}  // namespace solgate
