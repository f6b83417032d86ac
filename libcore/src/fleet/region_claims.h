// Cube Runner's region retrievals (blocks/region_retrievals.h) in the
// fleet's store: Lua scripts, each one atomic step in Redis, under keys
// that carry the hash tag {network:region}, so Redis Cluster keeps a
// region on one node and several regions share one Redis apart:
//   PREFIX{NET:REGION}:lt:VARIANT:SLOT     claim: holder (HOST/TOKEN),
//                                          state, until (its ttl's end)
//   PREFIX{NET:REGION}:lt:VARIANT:SLOT:w   the keys it was counted for,
//                                          each with its month
//   PREFIX{NET:REGION}:allow:YYYY-MM       key -> retrievals (UTC month)
//   PREFIX{NET:REGION}:pace:PLAN           next: when a claim may start
//   PREFIX{NET:REGION}:lead:PLAN           the plan's leader (HOST)
//   PREFIX{NET:REGION}:intake:PLAN         asks forwarded to the leader
//   PREFIX{NET:REGION}:rc:HOUR:KEY         slots served to KEY in that
//                                          hour (wall_ms / 3600000)
// Times are the store's own (Redis TIME), so hosts need not agree on
// their clocks; the month is the asking host's wall clock.
#pragma once

#include <string>

#include "blocks/region_retrievals.h"
#include "fleet/fleet_store.h"

namespace solgate {

// A finished retrieval's claim is kept this long: another host asked for
// the block meanwhile, or an ask forwarded before it finished and still in
// the intake (kept as long), is told it is done (its summary of this host
// lists the block within kPeerSummaryIntervalMs). A claim is also kept
// this long past its ttl, so the keys it counted are not counted again
// when a claim whose holder died is taken over.
constexpr int64_t kRegionDoneKeepMs = 600000;
// The allowance counts are kept past their month's end for the admin
// endpoint, then expire.
constexpr int64_t kRegionAllowanceKeepMs = 62LL * 24 * 3600 * 1000;
// The intake keeps at most this many asks (the oldest go first), for at
// most this long after the last one.
constexpr size_t kRegionIntakeMax = 100000;
constexpr int64_t kRegionIntakeKeepMs = 600000;
// Receipts: the hours that overlap the 24 hours before now (as the key
// ledger counts them), each kept a little longer; slots per script.
constexpr int64_t kHourMs = 3600 * 1000;
constexpr int64_t kDayMs = 24 * kHourMs;
constexpr int64_t kReceiptHours = 25;
constexpr int64_t kRegionReceiptKeepMs = (kReceiptHours + 1) * kHourMs;
constexpr size_t kReceiptsPerScript = 1000;

class FleetRegionClaims : public RegionRetrievals {
public:
    // `holder`: who this host is (FleetHolder). `plans`: the plan names by
    // index (a plan's pace is shared by name).
    FleetRegionClaims(FleetStore& store, std::string prefix,
                      std::string network, std::string region,
                      std::string holder, std::vector<std::string> plans);

    bool Up() const override { return store_.Up(); }
    void Claim(const RegionAsk& ask, int64_t ttl_ms,
               std::function<void(RegionClaim)> done) override;
    void Finish(const RegionAsk& ask, bool ok,
                std::function<void(std::optional<Finished>)> done) override;
    void Lead(size_t plan, int64_t ttl_ms,
              std::function<void(std::optional<LeadState>)> done) override;
    void Forward(const RegionAsk& ask) override;
    void TakeForwarded(
        size_t plan, size_t max,
        std::function<void(std::optional<std::vector<RegionAsk>>)> done)
        override;
    void Peek(const std::vector<RegionAsk>& asks,
              std::function<void(std::optional<std::vector<std::string>>)>
                  done) override;
    void NoteReceipts(const std::vector<RegionReceipt>& receipts) override;
    void FindReceived(const RegionAsk& ask,
                      std::function<void(std::optional<std::vector<bool>>)>
                          done) override;
    void ReadCounts(int64_t wall_ms,
                    std::function<void(std::optional<std::vector<
                                           std::pair<std::string, uint64_t>>>)>
                        done) override;

    // The keys, for tests and the README.
    std::string Key(const std::string& what) const;
    // A plan's key (lead:, intake:, pace:), by the plan's name.
    std::string PlanKey(const std::string& what, size_t plan) const;
    std::string ClaimKey(const RegionAsk& ask) const;
    std::string AllowanceKey(int64_t wall_ms) const;
    std::string ReceiptKey(const std::string& key, int64_t wall_ms) const;
    // HOST/TOKEN: one retrieval of this host.
    std::string Holder(const RegionAsk& ask) const;

private:
    FleetStore& store_;
    std::string tag_;      // PREFIX{NET:REGION}:
    std::string holder_;
    std::vector<std::string> plans_;
};

// A forwarded ask as the intake holds it: slot, variant and keys, one a
// line (an API key from a header holds no line break), and back; false
// when malformed.
std::string EncodeForwarded(const RegionAsk& ask);
bool DecodeForwarded(const std::string& text, size_t plan, RegionAsk* out);

// Parses a claim script's answer (for tests): false when malformed.
bool ParseRegionClaim(const FleetStore::Words& words, size_t keys,
                      RegionClaim* out);

}  // namespace solgate
