// Cube Runner's durable state per API key: the monthly allowance, the
// receipts of the last 24 hours and the repeat counts, in LMDB under
// <state_dir>/keys/ (its own environment, apart from the block index).
// Each region has its own state_dir, hence its own counts.
//
// Sub-databases. Times are wall-clock UTC ms; before 1970 counts as 1970.
//   "allowance"  "YYYY-MM" (7 bytes) + key -> uint64 LE retrievals
//   "receipts"   hour (8 bytes BE) + key length (2 bytes BE) + key +
//                first slot (8 bytes BE) -> the gaps between the key's
//                later slots of that hour, from `first` on, as LEB128
//                varints (sorted, unique: consecutive slots cost 1 byte)
//   "repeats"    hour (8 bytes BE) + key -> uint64 LE repeats
//   "meta"       "format" -> the layout's version
// hour = wall_ms / 3600000. A fixed-size month or hour prefix and the
// length prefix keep two keys' rows apart whatever bytes a key holds, and
// put old rows first, where Prune deletes them. A key's slots of one hour
// form chunks of at most 1.5 KB (a bucket that outgrows one splits), so a
// flush rewrites a few small values, not a whole hour, and every row
// stays inside its B-tree page.
//
// Durability. CountRetrieval and AddRepeat commit before they return
// (MDB_NOMETASYNC: kill -9 of any process loses nothing committed; an OS
// crash may lose the last commit). Receipts wait in memory until Flush
// (about once a second): kill -9 loses at most that second's receipts,
// which can only leave a repeat uncounted.
//
// Cost, measured by KeyLedgerTest.ReceiptSizeFigure (256 keys of 36
// bytes, 10,000 blocks per key and day, 25 hours kept, 30 flushes an
// hour, scaled to 4096 keys): ~75 MB of LMDB pages (18 KB per key, 1.8
// bytes per receipt) when the blocks are near the tip (1-byte gaps),
// ~180 MB (44 KB per key, 4.3 bytes per receipt) when they are spread
// over the whole history (3-byte gaps); B-tree pages run 65-75% full.
// Memory: at most kMaxPendingReceipts (100,000) pending receipts of 16
// bytes plus one map node per key, about 2-4 MB with vector growth, and
// as much again while a Flush writes; LMDB's pages are mapped, shared by
// all processes.
//
// Processes and threads. Open the ledger in each process after fork,
// once per process (LMDB forbids two environments on one directory in a
// process, or one across fork). Every method may then be called from any
// thread; none throws. Destroy it when no call is in progress; the
// destructor flushes what is pending.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

struct MDB_cursor;
struct MDB_txn;

namespace solgate {

class LmdbEnv;

// An API key is any 0 to 400 bytes (LMDB keys hold at most 511).
constexpr size_t kMaxLedgerKeyBytes = 400;
bool ValidLedgerKey(std::string_view key);

// Receipts held in memory between flushes, per process; more are dropped
// and counted in Stats::dropped_receipts.
constexpr size_t kMaxPendingReceipts = 100000;

struct KeyLedgerOptions {
    std::string state_dir;           // the ledger lives in state_dir/keys/
    size_t map_size = 1ull << 30;    // LMDB map: the ledger's maximum size
    // Set in the first process to open the ledger only: an environment
    // that cannot be read (corrupt, or of another format) is then moved
    // to state_dir/keys.corrupt and recreated empty, so every key starts
    // the month afresh. Without it such an environment is an error.
    bool recover = false;
};

class KeyLedger {
public:
    // Creates state_dir/keys as needed and opens it; nullptr with the
    // reason in *error on failure.
    static std::unique_ptr<KeyLedger> Open(const KeyLedgerOptions& options,
                                           std::string* error);
    ~KeyLedger();

    KeyLedger(const KeyLedger&) = delete;
    KeyLedger& operator=(const KeyLedger&) = delete;

    // The UTC month of wall_ms as "YYYY-MM": the allowance's period,
    // which starts at 00:00 UTC on the first day.
    static std::string MonthOf(int64_t wall_ms);

    // --- the monthly allowance ----------------------------------------------

    // Blocks retrieved from long-term storage for `key` in the month of
    // wall_ms; 0 when none (or unreadable).
    uint64_t AllowanceUsed(std::string_view key, int64_t wall_ms) const;

    // One retrieval from long-term storage for the keys waiting for it:
    // +1 for each distinct key, in one write transaction, committed
    // before returning. Keys longer than kMaxLedgerKeyBytes are skipped
    // and make it return false (with *error) after counting the others.
    bool CountRetrieval(const std::vector<std::string>& keys,
                        int64_t wall_ms, std::string* error);

    // Fleet mode: the region's counts, as the shared store answered them,
    // replace this host's for the month of wall_ms (the ledger is then the
    // host's copy of the region's, read by the request path). Invalid keys
    // are skipped; one write transaction, committed before returning.
    bool SetAllowances(const std::vector<std::pair<std::string, uint64_t>>&
                           used,
                       int64_t wall_ms, std::string* error);

    // Every key's allowance used in the month of wall_ms, in key order,
    // for the admin endpoint. False on a read error (*out then empty).
    bool ListAllowances(int64_t wall_ms,
                        std::vector<std::pair<std::string, uint64_t>>* out)
        const;

    // --- receipts -----------------------------------------------------------

    // `key` received block `slot`. Buffered in memory until Flush; safe
    // from any thread. Dropped (and counted) when kMaxPendingReceipts are
    // waiting or the key is invalid.
    void NoteReceipt(std::string_view key, uint64_t slot, int64_t wall_ms);

    // Merges the pending receipts into the ledger in one write
    // transaction. On failure they stay pending (up to the bound).
    bool Flush(std::string* error);

    // Whether `key` received `slot` in the 24 hours before wall_ms,
    // pending receipts included. By hour: the 25 hours overlapping
    // [wall_ms - 24 h, wall_ms] count, so a receipt is remembered for at
    // least 24 and at most 25 hours.
    bool Received(std::string_view key, uint64_t slot,
                  int64_t wall_ms) const;

    // --- repeat counts ------------------------------------------------------

    // `key` made Cube Runner retrieve a block again that it had already
    // received: +1, committed before returning.
    bool AddRepeat(std::string_view key, int64_t wall_ms,
                   std::string* error);

    // Repeats of `key` in the 24 hours (hour buckets: the current one and
    // the 23 before) up to wall_ms; 0 when none or unreadable.
    uint32_t RepeatCount(std::string_view key, int64_t wall_ms) const;

    // --- upkeep -------------------------------------------------------------

    // Deletes receipt and repeat buckets more than 24 hours before the
    // hour of wall_ms (they no longer count) and allowances of months
    // before the previous one. Commits every 10,000 rows, so the writer
    // lock is never held long.
    bool Prune(int64_t wall_ms, std::string* error);

    struct Stats {
        uint64_t keys_with_allowance = 0;  // keys of the newest month held
        uint64_t receipt_buckets = 0;      // receipt rows (chunks) held
        uint64_t pending_receipts = 0;     // this process, not flushed
        uint64_t dropped_receipts = 0;     // this process, since Open
    };
    // As of the last commit; the LMDB figures are 0 when unreadable.
    Stats GetStats() const;

    // Why the ledger could not be read when it was opened, and was moved
    // aside and started empty (its receipts and allowances lost); "" when
    // it opened as it was.
    const std::string& damage() const { return damage_; }

private:
    // A pending receipt of one key.
    struct HourSlot {
        uint64_t hour;
        uint64_t slot;
    };
    using Pending = std::unordered_map<std::string, std::vector<HourSlot>>;

    KeyLedger() = default;

    bool OpenEnv(size_t map_size, bool* corrupt, std::string* error);
    bool WriteReceipts(const Pending& pending, std::string* error);
    int MergePending(MDB_txn* txn, MDB_cursor* cursor,
                     const Pending& pending);
    bool PendingHas(std::string_view key, uint64_t slot, uint64_t first_hour,
                    uint64_t last_hour) const;
    void Requeue(Pending* failed);

    std::string env_dir_;
    std::unique_ptr<LmdbEnv> env_;
    unsigned int meta_dbi_ = 0;
    unsigned int allowance_dbi_ = 0;
    unsigned int receipts_dbi_ = 0;
    unsigned int repeats_dbi_ = 0;

    std::mutex flush_mutex_;             // one Flush at a time
    mutable std::mutex pending_mutex_;   // guards the four below
    Pending pending_;
    size_t pending_count_ = 0;
    Pending flushing_;                   // being written by Flush
    size_t flushing_count_ = 0;
    std::atomic<uint64_t> dropped_{0};
    std::string damage_;
};

}  // namespace solgate
