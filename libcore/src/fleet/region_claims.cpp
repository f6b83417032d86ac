#include "fleet/region_claims.h"

#include <cmath>

#include "conf/conf_words.h"
#include "fleet/fleet_keys.h"

#include "store/key_ledger.h"

namespace solgate {
namespace {

// KEYS: the claim (holder, state, until), the keys it counted (key ->
// the month counted in), the month's allowances, the plan's pace.
// ARGV: token, ttl ms, ms between claims, allowance (0: none), ms to keep
// the allowances, ms to keep a claim past its ttl, the month, keys...
// Answers kind, holder, wait ms, then per key: 0 not counted (refused, or
// the block is done) / 1 counted now / 2 counted before for this block,
// and its count this month.
constexpr const char* kClaimScript = R"(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local holder = redis.call('HGET', KEYS[1], 'holder')
local state = redis.call('HGET', KEYS[1], 'state')
if holder and state ~= 'done' and
   (tonumber(redis.call('HGET', KEYS[1], 'until')) or 0) < now then
  holder = false   -- its holder did not finish in time: taken over
end
local kind = 'mine'
local fresh = not holder
if holder and holder ~= ARGV[1] then
  if state == 'done' then kind = 'done' else kind = 'elsewhere' end
elseif fresh then
  local next_ms = tonumber(redis.call('HGET', KEYS[4], 'next')) or 0
  if next_ms > now then
    return {'wait', '', tostring(next_ms - now)}
  end
end
local limit = tonumber(ARGV[4])
local out = {kind, holder or ARGV[1], '0'}
local any = false
for i = 8, #ARGV do
  local k = ARGV[i]
  local used = tonumber(redis.call('HGET', KEYS[3], k)) or 0
  local c = 0
  if redis.call('HEXISTS', KEYS[2], k) == 1 then
    c = 2
  elseif kind ~= 'done' and (limit == 0 or used < limit) then
    used = redis.call('HINCRBY', KEYS[3], k, 1)
    redis.call('HSET', KEYS[2], k, ARGV[7])
    c = 1
  end
  if c > 0 then any = true end
  out[#out + 1] = tostring(c)
  out[#out + 1] = tostring(used)
end
if any and kind ~= 'done' then
  redis.call('PEXPIRE', KEYS[3], ARGV[5])
end
if kind == 'mine' then
  if not any then
    out[1] = 'spent'
    return out
  end
  if fresh then
    local next_ms = tonumber(redis.call('HGET', KEYS[4], 'next')) or 0
    if next_ms < now then next_ms = now end
    redis.call('HSET', KEYS[4], 'next', tostring(next_ms + tonumber(ARGV[3])))
    redis.call('PEXPIRE', KEYS[4], 60000)
  end
  redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'state', 'retrieving',
             'until', tostring(now + tonumber(ARGV[2])))
  -- the counts outlive a holder that dies, so a takeover keeps them
  local keep = tonumber(ARGV[2]) + tonumber(ARGV[6])
  redis.call('PEXPIRE', KEYS[1], keep)
  redis.call('PEXPIRE', KEYS[2], keep)
end
return out
)";

// KEYS: the claim, the keys it counted, the month's allowances.
// ARGV: token, 1 ok or 0 failed, ms to keep a done claim, the allowances'
// key without the month, the month, allowance (0: none), ms to keep the
// allowances, keys... Done: counts the keys that started waiting since
// the claim, as a claim does. Failed: gives every count back (to the
// month it was counted in). Answers how many were counted, then key,
// count pairs of the month.
constexpr const char* kFinishScript = R"(
if redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then
  return {'0'}
end
local out = {'0'}
if ARGV[2] == '1' then
  local limit = tonumber(ARGV[6])
  local n = 0
  for i = 8, #ARGV do
    local k = ARGV[i]
    local used = tonumber(redis.call('HGET', KEYS[3], k)) or 0
    if redis.call('HEXISTS', KEYS[2], k) == 0 and
       (limit == 0 or used < limit) then
      used = redis.call('HINCRBY', KEYS[3], k, 1)
      redis.call('HSET', KEYS[2], k, ARGV[5])
      n = n + 1
    end
    out[#out + 1] = k
    out[#out + 1] = tostring(used)
  end
  out[1] = tostring(n)
  if n > 0 then
    redis.call('PEXPIRE', KEYS[3], ARGV[7])
  end
  redis.call('HSET', KEYS[1], 'state', 'done')
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return out
end
local counted = redis.call('HGETALL', KEYS[2])
for i = 1, #counted, 2 do
  local k, month = counted[i], counted[i + 1]
  local allow = ARGV[4] .. month
  local used = redis.call('HINCRBY', allow, k, -1)
  if used < 0 then
    redis.call('HSET', allow, k, 0)
    used = 0
  end
  if month == ARGV[5] then
    out[#out + 1] = k
    out[#out + 1] = tostring(used)
  end
end
redis.call('DEL', KEYS[1], KEYS[2])
return out
)";

RegionClaim::Kind KindOf(const std::string& word, bool* ok) {
    *ok = true;
    if (word == "mine") return RegionClaim::kMine;
    if (word == "elsewhere") return RegionClaim::kElsewhere;
    if (word == "done") return RegionClaim::kDone;
    if (word == "wait") return RegionClaim::kWait;
    if (word == "spent") return RegionClaim::kSpent;
    *ok = false;
    return RegionClaim::kDown;
}

bool ToNumber(const std::string& word, uint64_t* out) {
    std::optional<uint64_t> n = conf::ParseCount(word, 0, UINT64_MAX);
    *out = n.value_or(0);
    return n.has_value();
}

}  // namespace

bool ParseRegionClaim(const FleetStore::Words& words, size_t keys,
                      RegionClaim* out) {
    if (words.size() < 3) {
        return false;
    }
    bool ok = false;
    RegionClaim claim;
    claim.kind = KindOf(words[0], &ok);
    uint64_t wait = 0;
    if (!ok || !ToNumber(words[2], &wait)) {
        return false;
    }
    claim.holder = words[1];
    claim.wait_ms = static_cast<int64_t>(std::min<uint64_t>(wait, 60000));
    if (claim.kind == RegionClaim::kWait) {
        *out = std::move(claim);
        return true;
    }
    if (words.size() != 3 + 2 * keys) {
        return false;
    }
    for (size_t i = 0; i < keys; i++) {
        uint64_t c = 0;
        uint64_t used = 0;
        if (!ToNumber(words[3 + 2 * i], &c) || c > 2 ||
            !ToNumber(words[4 + 2 * i], &used)) {
            return false;
        }
        claim.counted.push_back(c == 1);
        claim.used.push_back(used);
    }
    *out = std::move(claim);
    return true;
}

FleetRegionClaims::FleetRegionClaims(FleetStore& store, std::string prefix,
                                     std::string network, std::string region,
                                     std::string host_id,
                                     std::vector<std::string> plans)
    : store_(store),
      tag_(RegionKeyTag(prefix, network, region)),
      host_id_(std::move(host_id)),
      plans_(std::move(plans)) {}

std::string FleetRegionClaims::Key(const std::string& what) const {
    return tag_ + what;
}

std::string FleetRegionClaims::ClaimKey(const RegionAsk& ask) const {
    return Key("lt:" + ask.variant + ":" + std::to_string(ask.slot));
}

std::string FleetRegionClaims::Holder(const RegionAsk& ask) const {
    return host_id_ + "/" + ask.token;
}

std::string FleetRegionClaims::AllowanceKey(int64_t wall_ms) const {
    return Key("allow:" + KeyLedger::MonthOf(wall_ms));
}

void FleetRegionClaims::Claim(const RegionAsk& ask, int64_t ttl_ms,
                              std::function<void(RegionClaim)> done) {
    std::string plan = ask.plan < plans_.size() ? plans_[ask.plan] : "";
    double rate = std::isfinite(ask.rate) && ask.rate > 0 ? ask.rate : 1;
    int64_t between_ms = std::llround(std::min(1000.0 / rate, 60000.0));
    std::string claim = ClaimKey(ask);
    FleetStore::Words keys = {claim, claim + ":w", AllowanceKey(ask.wall_ms),
                              Key("pace:" + plan)};
    FleetStore::Words args = {Holder(ask), std::to_string(ttl_ms),
                              std::to_string(between_ms),
                              std::to_string(ask.allowance),
                              std::to_string(kRegionAllowanceKeepMs),
                              std::to_string(kRegionDoneKeepMs),
                              KeyLedger::MonthOf(ask.wall_ms)};
    args.insert(args.end(), ask.keys.begin(), ask.keys.end());
    size_t n = ask.keys.size();
    store_.Eval(kClaimScript, std::move(keys), std::move(args),
                [done = std::move(done), n](
                    std::optional<FleetStore::Words> words) {
                    RegionClaim claim;
                    if (!words || !ParseRegionClaim(*words, n, &claim)) {
                        claim = RegionClaim();   // kDown
                    }
                    done(std::move(claim));
                });
}

void FleetRegionClaims::Finish(
    const RegionAsk& ask, bool ok,
    std::function<void(std::optional<Finished>)> done) {
    std::string claim = ClaimKey(ask);
    FleetStore::Words args = {Holder(ask), ok ? "1" : "0",
                              std::to_string(kRegionDoneKeepMs),
                              Key("allow:"),
                              KeyLedger::MonthOf(ask.wall_ms),
                              std::to_string(ask.allowance),
                              std::to_string(kRegionAllowanceKeepMs)};
    if (ok) {
        args.insert(args.end(), ask.keys.begin(), ask.keys.end());
    }
    store_.Eval(kFinishScript,
                {claim, claim + ":w", AllowanceKey(ask.wall_ms)},
                std::move(args),
                [done = std::move(done)](
                    std::optional<FleetStore::Words> words) {
                    uint64_t counted = 0;
                    if (!words || words->empty() ||
                        words->size() % 2 != 1 ||
                        !ToNumber((*words)[0], &counted)) {
                        done(std::nullopt);
                        return;
                    }
                    Finished finished;
                    finished.counted = static_cast<size_t>(counted);
                    for (size_t i = 1; i + 1 < words->size(); i += 2) {
                        uint64_t n = 0;
                        if (ToNumber((*words)[i + 1], &n)) {
                            finished.used.emplace_back((*words)[i], n);
                        }
                    }
                    done(std::move(finished));
                });
}

void FleetRegionClaims::ReadCounts(
    int64_t wall_ms,
    std::function<void(
        std::optional<std::vector<std::pair<std::string, uint64_t>>>)>
        done) {
    store_.ReadHash(AllowanceKey(wall_ms),
                    [done = std::move(done)](
                        std::optional<FleetStore::Hash> hash) {
                        if (!hash) {
                            done(std::nullopt);
                            return;
                        }
                        std::vector<std::pair<std::string, uint64_t>> used;
                        for (const auto& [key, count] : *hash) {
                            uint64_t n = 0;
                            if (ToNumber(count, &n)) {
                                used.emplace_back(key, n);
                            }
                        }
                        done(std::move(used));
                    });
}

}  // namespace solgate
