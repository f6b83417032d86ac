#include "fleet/region_claims.h"

#include <algorithm>
#include <cmath>
#include <map>

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

// KEYS: the claim, the keys it counted, the month's allowances, the
// allowances of the months a day before and a day after (the same, or the
// next ones: a claim lives minutes, and each host counts in the month of
// its own clock).
// ARGV: token, 1 ok or 0 failed, ms to keep a done claim, the month a day
// before, the month, allowance (0: none), ms to keep the allowances, the
// month a day after, keys... Done: counts the keys that started waiting
// since the claim, as a claim does. Failed: gives every count back (to the
// month it was counted in). Answers how many were counted, then key, count
// pairs of the month.
constexpr const char* kFinishScript = R"(
if redis.call('HGET', KEYS[1], 'holder') ~= ARGV[1] then
  return {'0'}
end
local out = {'0'}
if ARGV[2] == '1' then
  local limit = tonumber(ARGV[6])
  local n = 0
  for i = 9, #ARGV do
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
  local allow = false
  if month == ARGV[5] then allow = KEYS[3]
  elseif month == ARGV[4] then allow = KEYS[4]
  elseif month == ARGV[8] then allow = KEYS[5] end
  if allow then
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
end
redis.call('DEL', KEYS[1], KEYS[2])
return out
)";

// KEYS[1]: the plan's lead. ARGV: this host, ms the lease lives. Takes it
// when free, renews it when held; answers who holds it.
constexpr const char* kLeadScript = R"(
local holder = redis.call('GET', KEYS[1])
if not holder or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  holder = ARGV[1]
end
return {holder}
)";

// KEYS[1]: the plan's intake. ARGV: the ask, the most kept, ms to keep.
constexpr const char* kForwardScript = R"(
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 0
)";

// KEYS[1]: the plan's intake. ARGV[1]: how many to take, oldest first.
constexpr const char* kTakeScript = R"(
local out = redis.call('LRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
if #out > 0 then
  redis.call('LTRIM', KEYS[1], #out, -1)
end
return out
)";

// KEYS: claims. Answers each one's state, "" for none.
constexpr const char* kPeekScript = R"(
local out = {}
for i = 1, #KEYS do
  out[i] = redis.call('HGET', KEYS[i], 'state') or ''
end
return out
)";

// KEYS: receipt sets (rc:HOUR:KEY), a key may come again. ARGV[1]: ms to
// keep them; then for each KEYS[i] how many slots, and the slots.
constexpr const char* kReceiptsScript = R"(
local at = 2
for i = 1, #KEYS do
  local n = tonumber(ARGV[at])
  redis.call('SADD', KEYS[i], unpack(ARGV, at + 1, at + n))
  redis.call('PEXPIRE', KEYS[i], ARGV[1])
  at = at + 1 + n
end
return 0
)";

// KEYS: each key's receipt sets of the 25 hours, key after key. ARGV: the
// slot, the sets per key. Answers 1 (received) or 0 per key.
constexpr const char* kReceivedScript = R"(
local per = tonumber(ARGV[2])
local out = {}
for i = 0, #KEYS / per - 1 do
  local got = '0'
  for j = 1, per do
    if redis.call('SISMEMBER', KEYS[i * per + j], ARGV[1]) == 1 then
      got = '1'
      break
    end
  end
  out[#out + 1] = got
end
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
        claim.in_claim.push_back(c > 0);
        claim.used.push_back(used);
    }
    *out = std::move(claim);
    return true;
}

std::string EncodeForwarded(const RegionAsk& ask) {
    std::string text = std::to_string(ask.slot) + "\n" + ask.variant;
    for (const std::string& key : ask.keys) {
        text += "\n" + key;
    }
    return text;
}

bool DecodeForwarded(const std::string& text, size_t plan, RegionAsk* out) {
    std::vector<std::string> lines;
    size_t from = 0;
    for (;;) {
        size_t nl = text.find('\n', from);
        lines.push_back(text.substr(from, nl == std::string::npos
                                              ? std::string::npos
                                              : nl - from));
        if (nl == std::string::npos) {
            break;
        }
        from = nl + 1;
    }
    uint64_t slot = 0;
    if (lines.size() < 3 || !ToNumber(lines[0], &slot) || lines[1].empty()) {
        return false;
    }
    RegionAsk ask;
    ask.plan = plan;
    ask.slot = slot;
    ask.variant = lines[1];
    ask.keys.assign(lines.begin() + 2, lines.end());
    *out = std::move(ask);
    return true;
}

FleetRegionClaims::FleetRegionClaims(FleetStore& store, std::string prefix,
                                     std::string network, std::string region,
                                     std::string holder,
                                     std::vector<std::string> plans)
    : store_(store),
      tag_(RegionKeyTag(prefix, network, region)),
      holder_(std::move(holder)),
      plans_(std::move(plans)) {}

void FleetRegionClaims::Lead(
    size_t plan, int64_t ttl_ms,
    std::function<void(std::optional<LeadState>)> done) {
    store_.Eval(kLeadScript, {PlanKey("lead:", plan)},
                {holder_, std::to_string(ttl_ms)},
                [done = std::move(done), me = holder_](
                    std::optional<FleetStore::Words> words) {
                    if (!words || words->size() != 1) {
                        done(std::nullopt);
                        return;
                    }
                    LeadState state;
                    state.leader = (*words)[0];
                    state.mine = state.leader == me;
                    done(std::move(state));
                });
}

void FleetRegionClaims::Forward(const RegionAsk& ask) {
    store_.Eval(kForwardScript, {PlanKey("intake:", ask.plan)},
                {EncodeForwarded(ask), std::to_string(kRegionIntakeMax),
                 std::to_string(kRegionIntakeKeepMs)},
                [](std::optional<FleetStore::Words>) {});
}

void FleetRegionClaims::TakeForwarded(
    size_t plan, size_t max,
    std::function<void(std::optional<std::vector<RegionAsk>>)> done) {
    store_.Eval(kTakeScript, {PlanKey("intake:", plan)},
                {std::to_string(max)},
                [done = std::move(done), plan](
                    std::optional<FleetStore::Words> words) {
                    if (!words) {
                        done(std::nullopt);
                        return;
                    }
                    std::vector<RegionAsk> asks;
                    for (const std::string& w : *words) {
                        RegionAsk ask;
                        if (DecodeForwarded(w, plan, &ask)) {
                            asks.push_back(std::move(ask));
                        }
                    }
                    done(std::move(asks));
                });
}

void FleetRegionClaims::Peek(
    const std::vector<RegionAsk>& asks,
    std::function<void(std::optional<std::vector<std::string>>)> done) {
    FleetStore::Words keys;
    for (const RegionAsk& ask : asks) {
        keys.push_back(ClaimKey(ask));
    }
    size_t n = keys.size();
    store_.Eval(kPeekScript, std::move(keys), {},
                [done = std::move(done), n](
                    std::optional<FleetStore::Words> words) {
                    if (!words || words->size() != n) {
                        done(std::nullopt);
                        return;
                    }
                    done(std::move(*words));
                });
}

void FleetRegionClaims::NoteReceipts(
    const std::vector<RegionReceipt>& receipts) {
    // one set per key and hour; one script per kReceiptsPerScript slots
    std::map<std::string, std::vector<uint64_t>> sets;
    for (const RegionReceipt& r : receipts) {
        sets[ReceiptKey(r.key, r.wall_ms)].push_back(r.slot);
    }
    FleetStore::Words keys;
    FleetStore::Words args{std::to_string(kRegionReceiptKeepMs)};
    size_t slots = 0;
    auto send = [&] {
        if (!keys.empty()) {
            store_.Eval(kReceiptsScript, std::move(keys), std::move(args),
                        [](std::optional<FleetStore::Words>) {});
        }
        keys.clear();
        args = {std::to_string(kRegionReceiptKeepMs)};
        slots = 0;
    };
    for (const auto& [key, of_set] : sets) {
        for (size_t from = 0; from < of_set.size();
             from += kReceiptsPerScript) {
            size_t n = std::min(kReceiptsPerScript, of_set.size() - from);
            if (slots + n > kReceiptsPerScript) {
                send();
            }
            keys.push_back(key);
            args.push_back(std::to_string(n));
            for (size_t i = from; i < from + n; i++) {
                args.push_back(std::to_string(of_set[i]));
            }
            slots += n;
        }
    }
    send();
}

void FleetRegionClaims::FindReceived(
    const RegionAsk& ask,
    std::function<void(std::optional<std::vector<bool>>)> done) {
    FleetStore::Words keys;
    for (const std::string& key : ask.keys) {
        for (int64_t h = 0; h < kReceiptHours; h++) {
            keys.push_back(ReceiptKey(key, ask.wall_ms - h * kHourMs));
        }
    }
    size_t n = ask.keys.size();
    store_.Eval(kReceivedScript, std::move(keys),
                {std::to_string(ask.slot), std::to_string(kReceiptHours)},
                [done = std::move(done), n](
                    std::optional<FleetStore::Words> words) {
                    if (!words || words->size() != n) {
                        done(std::nullopt);
                        return;
                    }
                    std::vector<bool> received;
                    for (const std::string& w : *words) {
                        received.push_back(w == "1");
                    }
                    done(std::move(received));
                });
}

std::string FleetRegionClaims::ReceiptKey(const std::string& key,
                                          int64_t wall_ms) const {
    return Key("rc:" + std::to_string(wall_ms / kHourMs) + ":" + key);
}

std::string FleetRegionClaims::PlanKey(const std::string& what,
                                       size_t plan) const {
    return Key(what + (plan < plans_.size() ? plans_[plan] : ""));
}

std::string FleetRegionClaims::Key(const std::string& what) const {
    return tag_ + what;
}

std::string FleetRegionClaims::ClaimKey(const RegionAsk& ask) const {
    return Key("lt:" + ask.variant + ":" + std::to_string(ask.slot));
}

std::string FleetRegionClaims::Holder(const RegionAsk& ask) const {
    return holder_ + "/" + ask.token;
}

std::string FleetRegionClaims::AllowanceKey(int64_t wall_ms) const {
    return Key("allow:" + KeyLedger::MonthOf(wall_ms));
}

void FleetRegionClaims::Claim(const RegionAsk& ask, int64_t ttl_ms,
                              std::function<void(RegionClaim)> done) {
    double rate = std::isfinite(ask.rate) && ask.rate > 0 ? ask.rate : 1;
    int64_t between_ms = std::llround(std::min(1000.0 / rate, 60000.0));
    std::string claim = ClaimKey(ask);
    FleetStore::Words keys = {claim, claim + ":w", AllowanceKey(ask.wall_ms),
                              PlanKey("pace:", ask.plan)};
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
                              KeyLedger::MonthOf(ask.wall_ms - kDayMs),
                              KeyLedger::MonthOf(ask.wall_ms),
                              std::to_string(ask.allowance),
                              std::to_string(kRegionAllowanceKeepMs),
                              KeyLedger::MonthOf(ask.wall_ms + kDayMs)};
    if (ok) {
        args.insert(args.end(), ask.keys.begin(), ask.keys.end());
    }
    store_.Eval(kFinishScript,
                {claim, claim + ":w", AllowanceKey(ask.wall_ms),
                 AllowanceKey(ask.wall_ms - kDayMs),
                 AllowanceKey(ask.wall_ms + kDayMs)},
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
