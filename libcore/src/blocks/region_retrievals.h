// Fleet mode: the long-term storage retrievals of one region, agreed with
// the other hosts of the region through the fleet's store.
//
// The region's fair order: each plan's queue is led by one host (Lead).
// The other hosts forward the blocks their clients wait for, with the
// waiting keys, to the leader (Forward); the leader admits them into its
// own queue (TakeForwarded), which orders the region's turns, popularity
// and newest-first as the spec says, and paces them. A host that does not
// lead watches the claims of what it forwarded (Peek).
//
// Before a host retrieves a block it claims it for the region, and the
// claim is where the region counts allowances:
//  - one retrieval per block per region: a block another host claimed is
//    not fetched again; its waiters here are served from that host's cache
//    (listed as a `peer`) once it holds it;
//  - a claim counts the retrieval against each waiting key's monthly
//    allowance, in the same atomic step that checks what is left, so the
//    region never counts (nor makes) more retrievals than the allowance,
//    whichever hosts ask at once; a key counted for a block is not
//    counted again for it (also when a claim whose holder died is taken
//    over), keys that join another host's claim are counted as they join,
//    a block already retrieved counts nothing (its waiters get a cached
//    copy), and a retrieval that fails gives the counts back;
//  - claims are paced at the plan's retrieval_rate for the whole region.
// A claim is held by one retrieval (ask.token), not by the host: the same
// host's next retrieval of the block (its queue handed it out again) waits
// for the first like any other host.
// Asynchronous: every answer comes later, on the loop that drives the
// store (at once, kDown or nullopt, when the store is down). Nothing
// throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace solgate {

// One block, for the keys that wait for it on this host.
struct RegionAsk {
    std::string token;  // this retrieval, unique on the host
    size_t plan = 0;
    uint64_t slot = 0;
    std::string variant;
    std::vector<std::string> keys;  // the waiters' API keys
    uint64_t allowance = 0;         // the plan's monthly_allowance; 0: none
    double rate = 1;                // the plan's retrieval_rate per second
    int64_t wall_ms = 0;            // the month counted in (when asked)
};

// A block served to a key on this host (its receipt), for the region.
struct RegionReceipt {
    std::string key;
    uint64_t slot = 0;
    int64_t wall_ms = 0;
};

struct RegionClaim {
    enum Kind {
        kMine,       // this host retrieves it (counted for `counted` keys)
        kElsewhere,  // another host (`holder`) is retrieving it
        kDone,       // another host retrieved it: its cache holds it
        kWait,       // the region's retrieval rate: ask again in wait_ms
        kSpent,      // every waiter's allowance is spent: not retrieved
        kDown,       // the store did not answer
    };
    Kind kind = kDown;
    // Per key of the ask: counted by this claim; counted for this block by
    // this claim or an earlier one; and its allowance used this month in
    // the region after it.
    std::vector<bool> counted;
    std::vector<bool> in_claim;
    std::vector<uint64_t> used;
    std::string holder;
    int64_t wait_ms = 0;
};

class RegionRetrievals {
public:
    virtual ~RegionRetrievals() = default;

    virtual bool Up() const = 0;

    // Claims the block for this retrieval (or joins its waiters to another
    // one's claim, or takes over a claim whose holder did not finish in
    // its ttl) and counts the keys' allowances. Asked again while another
    // retrieval holds the block, it counts the keys that joined since and
    // tells whether that one is done. A claim lives ttl_ms unless
    // finished.
    virtual void Claim(const RegionAsk& ask, int64_t ttl_ms,
                       std::function<void(RegionClaim)> done) = 0;

    // This host's retrieval ended: ok keeps the claim as done for a while
    // (the block is in this host's cache) and counts the ask's keys that
    // started waiting since the claim (within the allowance, as a claim
    // does); not ok drops it and gives every count it made back. done gets
    // the keys' allowances used after it, or nullopt when the store did
    // not answer.
    struct Finished {
        std::vector<std::pair<std::string, uint64_t>> used;  // key, count
        size_t counted = 0;   // keys counted by the finish
    };
    virtual void Finish(const RegionAsk& ask, bool ok,
                        std::function<void(std::optional<Finished>)> done) = 0;

    // The region's queue of a plan lives on one host, its leader: the
    // host holding the region's lease for the plan (within the host, the
    // process holding the plan's retrieval lease acts for it). Claims or
    // renews the lease for this host for ttl_ms; done gets who leads now,
    // or nullopt when the store did not answer.
    struct LeadState {
        bool mine = false;
        std::string leader;   // its host id
    };
    virtual void Lead(size_t plan, int64_t ttl_ms,
                      std::function<void(std::optional<LeadState>)> done) = 0;
    // A host that does not lead: the keys waiting here for a block, to the
    // leader's queue (the plan's intake; bounded, the oldest dropped).
    virtual void Forward(const RegionAsk& ask) = 0;
    // The leader: up to `max` forwarded asks of the plan, oldest first,
    // taken off the intake; nullopt when the store did not answer.
    virtual void TakeForwarded(
        size_t plan, size_t max,
        std::function<void(std::optional<std::vector<RegionAsk>>)> done) = 0;
    // What each block's claim is doing, in the order asked: "retrieving",
    // "done", or "" (none yet, or gone); nullopt when the store did not
    // answer.
    virtual void Peek(
        const std::vector<RegionAsk>& asks,
        std::function<void(std::optional<std::vector<std::string>>)>
            done) = 0;

    // The region's 24-hour receipts: what each host served to each key
    // (the receipts that may matter: see BlockService::TakeRegionReceipts),
    // kept 25 hours. Best effort: what the store does not take is lost,
    // which can only leave a repeat uncounted.
    virtual void NoteReceipts(const std::vector<RegionReceipt>& receipts) = 0;
    // For each of the ask's keys, whether it received ask.slot on any host
    // of the region in the 24 hours before ask.wall_ms (a retrieval for it
    // is then a repeat); nullopt when the store did not answer.
    virtual void FindReceived(
        const RegionAsk& ask,
        std::function<void(std::optional<std::vector<bool>>)> done) = 0;

    // Every key's allowance used in the month of wall_ms, as the region
    // counted it (key, count); nullopt when the store did not answer.
    virtual void ReadCounts(
        int64_t wall_ms,
        std::function<void(std::optional<
                               std::vector<std::pair<std::string, uint64_t>>>)>
            done) = 0;
};

}  // namespace solgate
