#include "store/key_ledger.h"

#include <lmdb.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "store/byte_order.h"
#include "store/dir_paths.h"
#include "base/error_out.h"
#include "store/lmdb_env.h"

namespace solgate {
namespace {

constexpr uint64_t kFormat = 1;          // of the ledger as a whole
constexpr unsigned kMaxReaders = 1024;   // concurrent read transactions
constexpr unsigned kMaxDbs = 8;
constexpr int64_t kHourMs = 3600000;
constexpr int64_t kDayMs = 86400000;
constexpr uint64_t kReceiptHours = 25;   // buckets Received reads
constexpr uint64_t kRepeatHours = 24;    // buckets RepeatCount sums
constexpr size_t kMonthBytes = 7;        // "YYYY-MM"
// A receipt value's limit: with an 18 + 400 byte key, a row still fits
// in a 4 KB page (LMDB's node limit there is 2038 bytes).
constexpr size_t kChunkBytes = 1536;
constexpr size_t kPruneBatch = 10000;    // rows deleted per transaction
// 9999-12-31T23:59:59.999Z: months stay "YYYY-MM" in the ledger.
constexpr int64_t kMaxWallMs = 253402300799999;

// --- time -------------------------------------------------------------------

int64_t FloorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

int64_t Clamp(int64_t wall_ms) {
    return std::min(std::max<int64_t>(wall_ms, 0), kMaxWallMs);
}

uint64_t HourOf(int64_t wall_ms) {
    return static_cast<uint64_t>(Clamp(wall_ms) / kHourMs);
}

// The proleptic Gregorian (year, month 1-12) of a day since 1970-01-01
// (H. Hinnant's civil_from_days).
void CivilMonth(int64_t days, int64_t* year, unsigned* month) {
    int64_t z = days + 719468;
    int64_t era = FloorDiv(z, 146097);
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *month = static_cast<unsigned>(mp < 10 ? mp + 3 : mp - 9);
    *year = yoe + era * 400 + (*month <= 2 ? 1 : 0);
}

std::string FormatMonth(int64_t year, unsigned month) {
    char text[32];
    std::snprintf(text, sizeof text, "%04lld-%02u",
                  static_cast<long long>(year), month);
    return text;
}

// The month of wall_ms and the one before, as stored: 7 bytes each.
std::string MonthKey(int64_t wall_ms, bool previous = false) {
    int64_t year = 0;
    unsigned month = 0;
    CivilMonth(Clamp(wall_ms) / kDayMs, &year, &month);
    if (previous && --month == 0) {
        month = 12;
        year--;
    }
    return FormatMonth(year, month);
}

// --- encodings --------------------------------------------------------------

// A stored counter: 8 bytes little-endian; 0 when of another size.
uint64_t GetLe(const MDB_val& value) {
    if (value.mv_size != 8) {
        return 0;
    }
    return ReadLittleEndian(
        static_cast<const unsigned char*>(value.mv_data), 8);
}

void AppendVarint(std::string* out, uint64_t value) {
    while (value >= 0x80) {
        out->push_back(static_cast<char>((value & 0x7F) | 0x80));
        value >>= 7;
    }
    out->push_back(static_cast<char>(value));
}

size_t VarintSize(uint64_t value) {
    size_t size = 1;
    while (value >= 0x80) {
        value >>= 7;
        size++;
    }
    return size;
}

// Reads one varint at *p (< end); false when truncated or too long.
bool ReadVarint(const unsigned char** p, const unsigned char* end,
                uint64_t* value) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64 && *p < end; shift += 7) {
        unsigned char byte = *(*p)++;
        if (shift == 63 && byte > 1) {
            return false;
        }
        result |= static_cast<uint64_t>(byte & 0x7F) << shift;
        if ((byte & 0x80) == 0) {
            *value = result;
            return true;
        }
    }
    return false;
}

// Walks a receipt chunk: `first` (from the row's key), then each gap in
// `value`. Calls visit(slot) in ascending order until it returns false.
// False when the value is damaged.
template <typename Visit>
bool WalkChunk(uint64_t first, const MDB_val& value, Visit visit) {
    const auto* p = static_cast<const unsigned char*>(value.mv_data);
    const unsigned char* end = p + value.mv_size;
    uint64_t slot = first;
    if (!visit(slot)) {
        return true;
    }
    while (p < end) {
        uint64_t gap = 0;
        if (!ReadVarint(&p, end, &gap) || gap == 0 ||
            gap > UINT64_MAX - slot) {
            return false;
        }
        slot += gap;
        if (!visit(slot)) {
            return true;
        }
    }
    return true;
}

// Sorted, unique slots as chunks of at most kChunkBytes each: (first
// slot, the gaps after it). Filled in turn when slots were appended, so
// a key reading forward leaves full chunks behind; split evenly
// otherwise, so that a chunk that outgrew the limit becomes two half-full
// ones, not a full one and a one-slot one (random inserts would then
// multiply one-slot chunks).
std::vector<std::pair<uint64_t, std::string>> EncodeChunks(
    const std::vector<uint64_t>& slots, bool appended) {
    size_t total = 0;
    for (size_t i = 1; i < slots.size(); i++) {
        total += VarintSize(slots[i] - slots[i - 1]);
    }
    size_t pieces = appended ? 1 : total / kChunkBytes + 1;
    size_t target = std::max<size_t>((total + pieces - 1) / pieces, 1);
    std::vector<std::pair<uint64_t, std::string>> chunks;
    for (size_t i = 0; i < slots.size(); i++) {
        uint64_t gap = i > 0 ? slots[i] - slots[i - 1] : 0;
        if (chunks.empty() || chunks.back().second.size() >= target ||
            chunks.back().second.size() + VarintSize(gap) > kChunkBytes) {
            chunks.emplace_back(slots[i], std::string());
        } else {
            AppendVarint(&chunks.back().second, gap);
        }
    }
    return chunks;
}

// "YYYY-MM" + key.
std::string AllowanceKey(const std::string& month, std::string_view key) {
    std::string out = month;
    out.append(key);
    return out;
}

// hour + key length + key: every row of one key and hour starts so.
std::string ReceiptPrefix(uint64_t hour, std::string_view key) {
    std::string out;
    out.reserve(18 + key.size());
    AppendBigEndian(&out, hour, 8);
    AppendBigEndian(&out, key.size(), 2);
    out.append(key);
    return out;
}

std::string RepeatKey(uint64_t hour, std::string_view key) {
    std::string out;
    out.reserve(8 + key.size());
    AppendBigEndian(&out, hour, 8);
    out.append(key);
    return out;
}

// Whether `row` is a receipt row of `prefix`: the first slot in *first.
bool ChunkOf(const MDB_val& row, const std::string& prefix,
             uint64_t* first) {
    std::string_view key = LmdbView(row);
    if (key.size() != prefix.size() + 8 ||
        key.compare(0, prefix.size(), prefix) != 0) {
        return false;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(key.data());
    *first = ReadBigEndian(p + prefix.size(), 8);
    return true;
}

// --- the file system --------------------------------------------------------

// Moves a damaged environment (data.mdb, lock.mdb) aside to
// <env_dir>.corrupt, replacing an older one, and recreates it empty.
bool StartOver(const std::string& env_dir, std::string* error) {
    std::string aside = env_dir + ".corrupt";
    for (const char* name : {"/data.mdb", "/lock.mdb"}) {
        std::string path = aside + name;
        if (unlink(path.c_str()) != 0 && errno != ENOENT) {
            return Fail(error, "key ledger: remove " + path + ": " +
                                   std::strerror(errno));
        }
    }
    if ((rmdir(aside.c_str()) != 0 && errno != ENOENT) ||
        (rename(env_dir.c_str(), aside.c_str()) != 0 && errno != ENOENT)) {
        return Fail(error, "key ledger: move " + env_dir + " aside: " +
                               std::strerror(errno));
    }
    return MakeDirs(env_dir, 0700, "key ledger", error);
}

// --- LMDB -------------------------------------------------------------------

// A uint64 LE value; 0 when absent. An LMDB error code, 0 on success.
int GetNumber(MDB_txn* txn, MDB_dbi dbi, const std::string& key,
              uint64_t* out) {
    MDB_val k = LmdbVal(key);
    MDB_val value;
    int rc = mdb_get(txn, dbi, &k, &value);
    *out = rc == 0 ? GetLe(value) : 0;
    return rc == MDB_NOTFOUND ? 0 : rc;
}

// Adds 1 to the counter at `key`.
int Increment(MDB_txn* txn, MDB_dbi dbi, const std::string& key) {
    uint64_t count = 0;
    int rc = GetNumber(txn, dbi, key, &count);
    return rc != 0 ? rc : PutLmdbNumber(txn, dbi, key, count + 1);
}

// The first slots of the receipt chunks of one key and hour, ascending.
int ListChunks(MDB_cursor* cursor, const std::string& prefix,
               std::vector<uint64_t>* firsts) {
    firsts->clear();
    return ForEachLmdbRow(cursor, prefix,
                          [&](const MDB_val& key, const MDB_val&) {
                              uint64_t first = 0;
                              if (ChunkOf(key, prefix, &first)) {
                                  firsts->push_back(first);
                              }
                          });
}

// Merges `slots` (sorted, unique, all below the next chunk's first slot)
// into the chunk starting at `first` (none when `exists` is false),
// splitting it when it grows past kChunkBytes. The chunk's row is
// replaced: its first slot may move down.
int MergeChunk(MDB_txn* txn, MDB_dbi dbi, const std::string& prefix,
               bool exists, uint64_t first, const uint64_t* slots,
               size_t count) {
    std::vector<uint64_t> merged;
    std::string old_key = prefix;
    AppendBigEndian(&old_key, first, 8);
    MDB_val k = LmdbVal(old_key);
    if (exists) {
        MDB_val value;
        int rc = mdb_get(txn, dbi, &k, &value);
        if (rc != 0 && rc != MDB_NOTFOUND) {
            return rc;
        }
        if (rc == 0) {
            // A damaged chunk keeps what could be read of it.
            WalkChunk(first, value, [&](uint64_t slot) {
                merged.push_back(slot);
                return true;
            });
            if ((rc = mdb_del(txn, dbi, &k, nullptr)) != 0) {
                return rc;
            }
        }
    }
    size_t old_count = merged.size();
    bool appended =
        old_count == 0 || (count != 0 && slots[0] > merged.back());
    merged.insert(merged.end(), slots, slots + count);
    std::inplace_merge(merged.begin(), merged.begin() + old_count,
                       merged.end());
    merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
    for (const auto& [chunk_first, gaps] : EncodeChunks(merged, appended)) {
        std::string key = prefix;
        AppendBigEndian(&key, chunk_first, 8);
        MDB_val ck = LmdbVal(key);
        MDB_val cv = LmdbVal(gaps);
        int rc = mdb_put(txn, dbi, &ck, &cv, 0);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

// Merges one key's new slots of one hour (sorted, unique) into its
// chunks: each slot goes to the last chunk starting at or below it (the
// first chunk for slots below every chunk), so chunks never overlap.
int MergeBucket(MDB_txn* txn, MDB_dbi dbi, MDB_cursor* cursor,
                const std::string& prefix,
                const std::vector<uint64_t>& slots) {
    std::vector<uint64_t> firsts;
    int rc = ListChunks(cursor, prefix, &firsts);
    if (rc != 0) {
        return rc;
    }
    if (firsts.empty()) {
        return MergeChunk(txn, dbi, prefix, false, 0, slots.data(),
                          slots.size());
    }
    size_t i = 0;
    while (rc == 0 && i < slots.size()) {
        auto next = std::upper_bound(firsts.begin(), firsts.end(), slots[i]);
        size_t chunk = next == firsts.begin()
                           ? 0
                           : static_cast<size_t>(next - firsts.begin()) - 1;
        size_t end = slots.size();
        if (chunk + 1 < firsts.size()) {
            end = static_cast<size_t>(
                std::lower_bound(slots.begin() + i, slots.end(),
                                 firsts[chunk + 1]) -
                slots.begin());
        }
        rc = MergeChunk(txn, dbi, prefix, true, firsts[chunk],
                        slots.data() + i, end - i);
        i = end;
    }
    return rc;
}

// Whether the receipt rows hold (prefix, slot): the chunk that would
// hold it is the last one starting at or below it.
bool ChunksHave(MDB_cursor* cursor, const std::string& prefix,
                uint64_t slot) {
    std::string target = prefix;
    AppendBigEndian(&target, slot, 8);
    MDB_val key = LmdbVal(target);
    MDB_val value;
    int rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_RANGE);
    if (rc == 0 && LmdbView(key) == target) {
        return true;
    }
    rc = mdb_cursor_get(cursor, &key, &value,
                        rc == MDB_NOTFOUND ? MDB_LAST : MDB_PREV);
    uint64_t first = 0;
    if (rc != 0 || !ChunkOf(key, prefix, &first)) {
        return false;
    }
    bool found = false;
    WalkChunk(first, value, [&](uint64_t s) {
        found = s == slot;
        return s < slot;
    });
    return found;
}

// Deletes up to *budget rows from the start of `dbi` for which old(key)
// holds; they sort first. *more when the budget ran out.
template <typename Old>
int DeleteOldRows(MDB_txn* txn, MDB_dbi dbi, size_t* budget, bool* more,
                  Old old) {
    LmdbCursor cursor;
    int rc = cursor.Open(txn, dbi);
    MDB_val key;
    MDB_val value;
    while (rc == 0) {
        rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_FIRST);
        if (rc != 0 || !old(LmdbView(key))) {
            break;
        }
        if (*budget == 0) {
            *more = true;
            break;
        }
        rc = mdb_cursor_del(cursor.get(), 0);
        --*budget;
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

// The LMDB figures of GetStats: receipt rows, and keys of the newest
// month with an allowance row. An LMDB error code, 0 on success.
int ReadStoredStats(MDB_txn* txn, MDB_dbi receipts, MDB_dbi allowance,
                    KeyLedger::Stats* stats) {
    MDB_stat info;
    int rc = mdb_stat(txn, receipts, &info);
    if (rc != 0) {
        return rc;
    }
    stats->receipt_buckets = info.ms_entries;
    LmdbCursor cursor;
    MDB_val key;
    MDB_val value;
    if ((rc = cursor.Open(txn, allowance)) != 0 ||
        (rc = mdb_cursor_get(cursor.get(), &key, &value, MDB_LAST)) != 0 ||
        key.mv_size < kMonthBytes) {
        return rc;
    }
    std::string month(LmdbView(key).substr(0, kMonthBytes));
    return ForEachLmdbRow(cursor.get(), month,
                          [stats](const MDB_val&, const MDB_val&) {
                              stats->keys_with_allowance++;
                          });
}

}  // namespace

bool ValidLedgerKey(std::string_view key) {
    return key.size() <= kMaxLedgerKeyBytes;
}

std::string KeyLedger::MonthOf(int64_t wall_ms) {
    try {
        int64_t year = 0;
        unsigned month = 0;
        CivilMonth(FloorDiv(wall_ms, kDayMs), &year, &month);
        return FormatMonth(year, month);
    } catch (...) {
        return std::string();
    }
}

std::unique_ptr<KeyLedger> KeyLedger::Open(const KeyLedgerOptions& options,
                                           std::string* error) {
    try {
        if (options.state_dir.empty()) {
            Fail(error, "key ledger: state_dir is required");
            return nullptr;
        }
        std::unique_ptr<KeyLedger> ledger(new KeyLedger());
        ledger->env_ = std::make_unique<LmdbEnv>("key ledger");
        ledger->env_dir_ = StripTrailingSlashes(options.state_dir) + "/keys";
        if (!MakeDirs(ledger->env_dir_, 0700, "key ledger", error)) {
            return nullptr;
        }
        auto open = [&](bool* corrupt) {
            return ledger->OpenEnv(options.map_size, corrupt, error);
        };
        auto start_over = [&] {
            ledger->damage_ = *error;
            return StartOver(ledger->env_dir_, error);
        };
        if (!ledger->env_->OpenOrStartOver(options.recover, open,
                                           start_over)) {
            return nullptr;
        }
        return ledger;
    } catch (...) {
        Report(error, "key ledger: out of memory");
        return nullptr;
    }
}

KeyLedger::~KeyLedger() {
    std::string ignored;
    Flush(&ignored);
}

bool KeyLedger::OpenEnv(size_t map_size, bool* corrupt, std::string* error) {
    const LmdbEnvSettings settings{kMaxDbs, kMaxReaders, map_size, kFormat,
                                   "rows"};
    auto open_tables = [this](MDB_txn* txn, LmdbLayout* layout) {
        int rc = 0;
        if ((rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &meta_dbi_)) != 0 ||
            (rc = mdb_dbi_open(txn, "allowance", MDB_CREATE,
                               &allowance_dbi_)) != 0 ||
            (rc = mdb_dbi_open(txn, "receipts", MDB_CREATE,
                               &receipts_dbi_)) != 0 ||
            (rc = mdb_dbi_open(txn, "repeats", MDB_CREATE,
                               &repeats_dbi_)) != 0) {
            return rc;
        }
        layout->meta = meta_dbi_;
        layout->tables = {allowance_dbi_, receipts_dbi_, repeats_dbi_};
        return GetNumber(txn, meta_dbi_, kLmdbFormatKey, &layout->format);
    };
    return env_->Open(env_dir_, settings, open_tables, corrupt, error);
}

// --- the monthly allowance --------------------------------------------------

uint64_t KeyLedger::AllowanceUsed(std::string_view key,
                                  int64_t wall_ms) const {
    try {
        if (!ValidLedgerKey(key)) {
            return 0;
        }
        std::string row = AllowanceKey(MonthKey(wall_ms), key);
        uint64_t used = 0;
        int rc = env_->Read([&](MDB_txn* txn) {
            return GetNumber(txn, allowance_dbi_, row, &used);
        });
        return rc == 0 ? used : 0;
    } catch (...) {
        return 0;
    }
}

bool KeyLedger::CountRetrieval(const std::vector<std::string>& keys,
                               int64_t wall_ms, std::string* error) {
    try {
        std::vector<std::string> distinct;
        size_t skipped = 0;
        for (const std::string& key : keys) {
            if (ValidLedgerKey(key)) {
                distinct.push_back(key);
            } else {
                skipped++;
            }
        }
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()),
                       distinct.end());
        std::string month = MonthKey(wall_ms);
        auto count = [&](MDB_txn* txn) {
            int rc = 0;
            for (size_t i = 0; rc == 0 && i < distinct.size(); i++) {
                rc = Increment(txn, allowance_dbi_,
                               AllowanceKey(month, distinct[i]));
            }
            return rc;
        };
        if (!distinct.empty() &&
            !env_->Write("count retrieval", error, count)) {
            return false;
        }
        if (skipped != 0) {
            return Fail(error, "key ledger: " + std::to_string(skipped) +
                                   " key(s) longer than " +
                                   std::to_string(kMaxLedgerKeyBytes) +
                                   " bytes not counted");
        }
        return true;
    } catch (...) {
        Report(error, "key ledger: out of memory");
        return false;
    }
}

bool KeyLedger::SetAllowances(
    const std::vector<std::pair<std::string, uint64_t>>& used,
    int64_t wall_ms, std::string* error) {
    try {
        std::string month = MonthKey(wall_ms);
        auto set = [&](MDB_txn* txn) {
            int rc = 0;
            for (size_t i = 0; rc == 0 && i < used.size(); i++) {
                if (!ValidLedgerKey(used[i].first)) {
                    continue;
                }
                std::string row = AllowanceKey(month, used[i].first);
                uint64_t held = 0;
                rc = GetNumber(txn, allowance_dbi_, row, &held);
                if (rc == 0 && held != used[i].second) {
                    rc = PutLmdbNumber(txn, allowance_dbi_, row,
                                       used[i].second);
                }
            }
            return rc;
        };
        return used.empty() || env_->Write("set allowances", error, set);
    } catch (...) {
        Report(error, "key ledger: out of memory");
        return false;
    }
}

bool KeyLedger::ListAllowances(
    int64_t wall_ms,
    std::vector<std::pair<std::string, uint64_t>>* out) const {
    try {
        out->clear();
        std::string month = MonthKey(wall_ms);
        auto add = [out](const MDB_val& key, const MDB_val& value) {
            out->emplace_back(LmdbView(key).substr(kMonthBytes),
                              GetLe(value));
        };
        int rc = env_->Read([&](MDB_txn* txn) {
            return ForEachLmdbRow(txn, allowance_dbi_, month, add);
        });
        if (rc != 0) {
            out->clear();
            return false;
        }
        return true;
    } catch (...) {
        out->clear();
        return false;
    }
}

// --- receipts ---------------------------------------------------------------

void KeyLedger::NoteReceipt(std::string_view key, uint64_t slot,
                            int64_t wall_ms) {
    try {
        if (!ValidLedgerKey(key)) {
            dropped_++;
            return;
        }
        std::lock_guard<std::mutex> lock(pending_mutex_);
        if (pending_count_ >= kMaxPendingReceipts) {
            dropped_++;
            return;
        }
        pending_[std::string(key)].push_back(HourSlot{HourOf(wall_ms), slot});
        pending_count_++;
    } catch (...) {
        dropped_++;
    }
}

bool KeyLedger::Flush(std::string* error) {
    try {
        std::lock_guard<std::mutex> flush_lock(flush_mutex_);
        {
            std::lock_guard<std::mutex> lock(pending_mutex_);
            if (pending_count_ == 0) {
                return true;
            }
            flushing_.swap(pending_);
            flushing_count_ = pending_count_;
            pending_count_ = 0;
        }
        // Received still finds them in flushing_ until they are committed.
        bool ok = WriteReceipts(flushing_, error);
        std::lock_guard<std::mutex> lock(pending_mutex_);
        if (!ok) {
            Requeue(&flushing_);
        }
        flushing_.clear();
        flushing_count_ = 0;
        return ok;
    } catch (...) {
        Report(error, "key ledger: out of memory");
        return false;
    }
}

void KeyLedger::Requeue(Pending* failed) {
    for (auto& [key, receipts] : *failed) {
        size_t room = kMaxPendingReceipts - std::min(kMaxPendingReceipts,
                                                     pending_count_);
        size_t take = std::min(room, receipts.size());
        dropped_ += receipts.size() - take;
        if (take == 0) {
            continue;
        }
        std::vector<HourSlot>& into = pending_[key];
        into.insert(into.end(), receipts.begin(), receipts.begin() + take);
        pending_count_ += take;
    }
}

bool KeyLedger::WriteReceipts(const Pending& pending, std::string* error) {
    return env_->Write("flush receipts", error, [&](MDB_txn* txn) {
        LmdbCursor cursor;
        int rc = cursor.Open(txn, receipts_dbi_);
        return rc != 0 ? rc : MergePending(txn, cursor.get(), pending);
    });
}

int KeyLedger::MergePending(MDB_txn* txn, MDB_cursor* cursor,
                            const Pending& pending) {
    int rc = 0;
    std::vector<HourSlot> sorted;
    std::vector<uint64_t> slots;
    for (auto it = pending.begin(); rc == 0 && it != pending.end(); ++it) {
        sorted = it->second;
        std::sort(sorted.begin(), sorted.end(),
                  [](const HourSlot& a, const HourSlot& b) {
                      return a.hour != b.hour ? a.hour < b.hour
                                              : a.slot < b.slot;
                  });
        for (size_t i = 0; rc == 0 && i < sorted.size();) {
            uint64_t hour = sorted[i].hour;
            slots.clear();
            for (; i < sorted.size() && sorted[i].hour == hour; i++) {
                if (slots.empty() || slots.back() != sorted[i].slot) {
                    slots.push_back(sorted[i].slot);
                }
            }
            rc = MergeBucket(txn, receipts_dbi_, cursor,
                             ReceiptPrefix(hour, it->first), slots);
        }
    }
    return rc;
}

bool KeyLedger::PendingHas(std::string_view key, uint64_t slot,
                           uint64_t first_hour, uint64_t last_hour) const {
    std::string name(key);
    std::lock_guard<std::mutex> lock(pending_mutex_);
    for (const Pending* pending : {&pending_, &flushing_}) {
        auto it = pending->find(name);
        if (it == pending->end()) {
            continue;
        }
        for (const HourSlot& receipt : it->second) {
            if (receipt.slot == slot && receipt.hour >= first_hour &&
                receipt.hour <= last_hour) {
                return true;
            }
        }
    }
    return false;
}

bool KeyLedger::Received(std::string_view key, uint64_t slot,
                         int64_t wall_ms) const {
    try {
        if (!ValidLedgerKey(key)) {
            return false;
        }
        uint64_t last = HourOf(wall_ms);
        uint64_t first = HourOf(Clamp(wall_ms) - kDayMs);
        // Memory first: a receipt leaves it only once committed, so a
        // transaction begun afterwards sees it.
        if (PendingHas(key, slot, first, last)) {
            return true;
        }
        bool found = false;
        env_->Read([&](MDB_txn* txn) {
            LmdbCursor cursor;
            int rc = cursor.Open(txn, receipts_dbi_);
            for (uint64_t hour = first; rc == 0 && !found && hour <= last;
                 hour++) {
                found = ChunksHave(cursor.get(), ReceiptPrefix(hour, key),
                                   slot);
            }
            return rc;
        });
        return found;
    } catch (...) {
        return false;
    }
}

// --- repeat counts ----------------------------------------------------------

bool KeyLedger::AddRepeat(std::string_view key, int64_t wall_ms,
                          std::string* error) {
    try {
        if (!ValidLedgerKey(key)) {
            return Fail(error, "key ledger: key longer than " +
                                   std::to_string(kMaxLedgerKeyBytes) +
                                   " bytes");
        }
        std::string row = RepeatKey(HourOf(wall_ms), key);
        return env_->Write("add repeat", error, [&](MDB_txn* txn) {
            return Increment(txn, repeats_dbi_, row);
        });
    } catch (...) {
        Report(error, "key ledger: out of memory");
        return false;
    }
}

uint32_t KeyLedger::RepeatCount(std::string_view key,
                                int64_t wall_ms) const {
    try {
        if (!ValidLedgerKey(key)) {
            return 0;
        }
        uint64_t last = HourOf(wall_ms);
        uint64_t first = last >= kRepeatHours - 1 ? last - kRepeatHours + 1
                                                  : 0;
        uint64_t total = 0;
        int rc = env_->Read([&](MDB_txn* txn) {
            int rc = 0;
            for (uint64_t hour = first; rc == 0 && hour <= last; hour++) {
                uint64_t count = 0;
                rc = GetNumber(txn, repeats_dbi_, RepeatKey(hour, key),
                               &count);
                total += std::min<uint64_t>(count, UINT32_MAX);
            }
            return rc;
        });
        if (rc != 0) {
            return 0;
        }
        return static_cast<uint32_t>(std::min<uint64_t>(total, UINT32_MAX));
    } catch (...) {
        return 0;
    }
}

// --- upkeep -----------------------------------------------------------------

bool KeyLedger::Prune(int64_t wall_ms, std::string* error) {
    try {
        uint64_t now = HourOf(wall_ms);
        uint64_t keep_hour = now >= kReceiptHours - 1
                                 ? now - (kReceiptHours - 1)
                                 : 0;
        std::string keep_month = MonthKey(wall_ms, true);
        auto old_hour = [keep_hour](std::string_view key) {
            return key.size() < 8 ||
                   ReadBigEndian(
                       reinterpret_cast<const unsigned char*>(key.data()),
                       8) < keep_hour;
        };
        auto old_month = [&keep_month](std::string_view key) {
            return key.size() < kMonthBytes ||
                   key.compare(0, kMonthBytes, keep_month) < 0;
        };
        for (bool more = true; more;) {
            more = false;
            size_t budget = kPruneBatch;
            auto prune = [&](MDB_txn* txn) {
                int rc = DeleteOldRows(txn, receipts_dbi_, &budget, &more,
                                       old_hour);
                if (rc == 0) {
                    rc = DeleteOldRows(txn, repeats_dbi_, &budget, &more,
                                       old_hour);
                }
                if (rc == 0) {
                    rc = DeleteOldRows(txn, allowance_dbi_, &budget, &more,
                                       old_month);
                }
                return rc;
            };
            if (!env_->Write("prune", error, prune)) {
                return false;
            }
        }
        return true;
    } catch (...) {
        Report(error, "key ledger: out of memory");
        return false;
    }
}

KeyLedger::Stats KeyLedger::GetStats() const {
    Stats stats;
    try {
        {
            std::lock_guard<std::mutex> lock(pending_mutex_);
            stats.pending_receipts = pending_count_ + flushing_count_;
        }
        stats.dropped_receipts = dropped_.load();
        env_->Read([&](MDB_txn* txn) {
            return ReadStoredStats(txn, receipts_dbi_, allowance_dbi_, &stats);
        });
    } catch (...) {
    }
    return stats;
}

}  // namespace solgate
