#include "store/block_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "store/byte_order.h"
#include "store/dir_paths.h"
#include "base/error_out.h"
#include "store/lmdb_env.h"

namespace solgate {
namespace {

constexpr uint64_t kFormat = 1;          // of the index as a whole
constexpr uint8_t kRecordVersion = 1;    // of one entry's value
constexpr size_t kRecordSize = 56;
constexpr uint64_t kSlotsPerDir = 4096;
constexpr unsigned kMaxReaders = 1024;   // concurrent read transactions
constexpr unsigned kMaxDbs = 4;

std::string SysError(const std::string& what, int err) {
    return "block cache: " + what + ": " + std::strerror(err);
}

// --- encodings -------------------------------------------------------------

// Version 1: version u8, kind u8, 2 zero bytes, id_offset u32, id_length
// u32, 4 zero bytes, bytes u64, stored_ms i64, score f64, score_ms i64,
// file_id u64; all little-endian. A record of another version (or too
// short) reads as absent, and reconcile removes it.
std::string EncodeRecord(const BlockRecord& rec) {
    std::string out(kRecordSize, '\0');
    auto* p = reinterpret_cast<unsigned char*>(&out[0]);
    uint64_t score_bits = 0;
    std::memcpy(&score_bits, &rec.score, sizeof score_bits);
    p[0] = kRecordVersion;
    p[1] = rec.kind;
    WriteLittleEndian(p + 4, rec.id_offset, 4);
    WriteLittleEndian(p + 8, rec.id_length, 4);
    WriteLittleEndian(p + 16, rec.bytes, 8);
    WriteLittleEndian(p + 24, static_cast<uint64_t>(rec.stored_ms), 8);
    WriteLittleEndian(p + 32, score_bits, 8);
    WriteLittleEndian(p + 40, static_cast<uint64_t>(rec.score_ms), 8);
    WriteLittleEndian(p + 48, rec.file_id, 8);
    return out;
}

bool DecodeRecord(const MDB_val& value, BlockRecord* rec) {
    const auto* p = static_cast<const unsigned char*>(value.mv_data);
    if (value.mv_size < kRecordSize || p[0] != kRecordVersion) {
        return false;
    }
    uint64_t score_bits = ReadLittleEndian(p + 32, 8);
    rec->kind = p[1];
    rec->id_offset = static_cast<uint32_t>(ReadLittleEndian(p + 4, 4));
    rec->id_length = static_cast<uint32_t>(ReadLittleEndian(p + 8, 4));
    rec->bytes = ReadLittleEndian(p + 16, 8);
    rec->stored_ms = static_cast<int64_t>(ReadLittleEndian(p + 24, 8));
    std::memcpy(&rec->score, &score_bits, sizeof score_bits);
    rec->score_ms = static_cast<int64_t>(ReadLittleEndian(p + 40, 8));
    rec->file_id = ReadLittleEndian(p + 48, 8);
    return true;
}

// Variant bytes, a 0 byte, the slot as 8 big-endian bytes.
std::string MakeKey(std::string_view variant, uint64_t slot) {
    std::string key;
    key.reserve(variant.size() + 9);
    key.append(variant);
    key.push_back('\0');
    AppendBigEndian(&key, slot, 8);
    return key;
}

bool ParseKey(const MDB_val& key, uint64_t* slot, std::string* variant) {
    if (key.mv_size < 10) {
        return false;
    }
    const auto* p = static_cast<const unsigned char*>(key.mv_data);
    size_t n = key.mv_size - 9;
    std::string_view name(reinterpret_cast<const char*>(p), n);
    if (p[n] != 0 || !ValidBlockVariant(name)) {
        return false;
    }
    *slot = ReadBigEndian(p + n + 1, 8);
    variant->assign(name);
    return true;
}

bool KeepsByte(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '-';
}

// The directory name of a variant: one-to-one, see the header.
std::string EncodeVariant(std::string_view variant) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(variant.size() * 3);
    for (char c : variant) {
        if (KeepsByte(c)) {
            out.push_back(c);
        } else {
            auto byte = static_cast<unsigned char>(c);
            out.push_back('_');
            out.push_back(kHex[byte >> 4]);
            out.push_back(kHex[byte & 15]);
        }
    }
    return out;
}

int HexValue(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// The variant a directory name stands for; false unless the name is
// exactly what EncodeVariant writes for a valid variant.
bool DecodeVariant(std::string_view name, std::string* variant) {
    std::string out;
    for (size_t i = 0; i < name.size(); i++) {
        if (name[i] != '_') {
            out.push_back(name[i]);
            continue;
        }
        if (i + 2 >= name.size()) {
            return false;
        }
        int high = HexValue(name[i + 1]);
        int low = HexValue(name[i + 2]);
        if (high < 0 || low < 0) {
            return false;
        }
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
    }
    if (!ValidBlockVariant(out) || EncodeVariant(out) != name) {
        return false;
    }
    *variant = std::move(out);
    return true;
}

// A canonical decimal number (no sign, no leading zero), as written by
// std::to_string.
bool ParseDecimal(std::string_view text, uint64_t* value) {
    if (text.empty() || text.size() > 20 ||
        (text.size() > 1 && text[0] == '0')) {
        return false;
    }
    uint64_t result = 0;
    for (char c : text) {
        if (c < '0' || c > '9') {
            return false;
        }
        uint64_t digit = static_cast<uint64_t>(c - '0');
        if (result > (UINT64_MAX - digit) / 10) {
            return false;
        }
        result = result * 10 + digit;
    }
    *value = result;
    return true;
}

// --- the file system -------------------------------------------------------

bool IsDir(const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

struct DirCloser {
    void operator()(DIR* dir) const { closedir(dir); }
};

// The names in `dir` but . and ..; a missing directory is empty.
bool ListDir(const std::string& dir, std::vector<std::string>* names) {
    names->clear();
    std::unique_ptr<DIR, DirCloser> handle(opendir(dir.c_str()));
    if (handle == nullptr) {
        return errno == ENOENT;
    }
    errno = 0;
    while (const dirent* entry = readdir(handle.get())) {
        std::string_view name(entry->d_name);
        if (name != "." && name != "..") {
            names->emplace_back(name);
        }
    }
    return errno == 0;
}

// Deletes a file, or a directory and everything in it (symlinks are
// deleted, never followed). True when nothing is left.
bool RemoveTree(const std::string& path) {
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) {
        return errno == ENOENT;
    }
    if (!S_ISDIR(st.st_mode)) {
        return unlink(path.c_str()) == 0 || errno == ENOENT;
    }
    std::vector<std::string> names;
    bool ok = ListDir(path, &names);
    for (const std::string& name : names) {
        ok = RemoveTree(path + "/" + name) && ok;
    }
    return (rmdir(path.c_str()) == 0 || errno == ENOENT) && ok;
}

bool ClearDir(const std::string& dir) {
    std::vector<std::string> names;
    bool ok = ListDir(dir, &names);
    for (const std::string& name : names) {
        ok = RemoveTree(dir + "/" + name) && ok;
    }
    return ok;
}

// Whether the temp file `name` ("<pid>-...", see NewTempPath) may belong
// to a live process other than this one: then it is still being written.
bool TempOwnerAlive(const std::string& name) {
    size_t dash = name.find('-');
    uint64_t pid = 0;
    if (dash == std::string::npos ||
        !ParseDecimal(std::string_view(name).substr(0, dash), &pid) ||
        pid == 0 || pid > INT32_MAX ||
        static_cast<pid_t>(pid) == getpid()) {
        return false;
    }
    return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// Deletes what is in tmp/ but the temp files of live processes.
void ClearStaleTemps(const std::string& tmp_dir) {
    std::vector<std::string> names;
    ListDir(tmp_dir, &names);
    for (const std::string& name : names) {
        if (!TempOwnerAlive(name)) {
            RemoveTree(tmp_dir + "/" + name);
        }
    }
}

// Renames, creating the parent directories of `to` under `base` (which
// exists) when they are missing.
bool RenameInto(const std::string& from, const std::string& to,
                const std::string& base) {
    if (rename(from.c_str(), to.c_str()) == 0) {
        return true;
    }
    if (errno != ENOENT) {
        return false;
    }
    for (size_t i = base.size() + 1; i < to.size(); i++) {
        if (to[i] == '/' && !MakeDir(to.substr(0, i), 0755)) {
            return false;
        }
    }
    return rename(from.c_str(), to.c_str()) == 0;
}

void UnlinkIfInode(const std::string& path, uint64_t inode) {
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && st.st_ino == inode) {
        unlink(path.c_str());
    }
}

uint64_t RandomNonce(const void* salt) {
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) ==
        static_cast<ssize_t>(sizeof nonce)) {
        return nonce;
    }
    auto now = std::chrono::steady_clock::now().time_since_epoch();
    nonce = static_cast<uint64_t>(now.count());
    nonce ^= reinterpret_cast<uintptr_t>(salt);
    nonce ^= static_cast<uint64_t>(getpid()) << 32;
    return nonce * 0x9E3779B97F4A7C15ull;
}

// --- the index -------------------------------------------------------------

constexpr char kMetaBytes[] = "bytes";
constexpr char kMetaEntries[] = "entries";
constexpr char kMetaEvictions[] = "evictions";

int GetMeta(MDB_txn* txn, MDB_dbi dbi, const char* name, uint64_t* out) {
    MDB_val key;
    key.mv_size = std::strlen(name);
    key.mv_data = const_cast<char*>(name);
    MDB_val value;
    int rc = mdb_get(txn, dbi, &key, &value);
    if (rc == MDB_NOTFOUND) {
        *out = 0;
        return 0;
    }
    if (rc != 0) {
        return rc;
    }
    if (value.mv_size != 8) {
        return MDB_CORRUPTED;
    }
    *out = ReadLittleEndian(
        static_cast<const unsigned char*>(value.mv_data), 8);
    return 0;
}

int ReadTotals(MDB_txn* txn, MDB_dbi dbi, BlockStore::Totals* totals) {
    int rc = GetMeta(txn, dbi, kMetaBytes, &totals->bytes);
    if (rc == 0) {
        rc = GetMeta(txn, dbi, kMetaEntries, &totals->entries);
    }
    if (rc == 0) {
        rc = GetMeta(txn, dbi, kMetaEvictions, &totals->evictions);
    }
    return rc;
}

int WriteTotals(MDB_txn* txn, MDB_dbi dbi,
                const BlockStore::Totals& totals) {
    int rc = PutLmdbNumber(txn, dbi, kMetaBytes, totals.bytes);
    if (rc == 0) {
        rc = PutLmdbNumber(txn, dbi, kMetaEntries, totals.entries);
    }
    if (rc == 0) {
        rc = PutLmdbNumber(txn, dbi, kMetaEvictions, totals.evictions);
    }
    return rc;
}

// Writes the entry `value` at `key`, replacing any previous one, and
// adjusts the totals for its file of `bytes`. An LMDB error code, 0 on
// success.
int PutEntry(MDB_txn* txn, MDB_dbi entries, MDB_dbi meta,
             const std::string& key, const std::string& value,
             uint64_t bytes) {
    BlockStore::Totals totals;
    int rc = ReadTotals(txn, meta, &totals);
    MDB_val k = LmdbVal(key);
    if (rc == 0) {
        MDB_val old;
        rc = mdb_get(txn, entries, &k, &old);
        BlockRecord previous;
        if (rc == 0 && DecodeRecord(old, &previous)) {
            totals.bytes -= std::min(totals.bytes, previous.bytes);
        } else if (rc == MDB_NOTFOUND) {
            totals.entries++;
            rc = 0;
        }
    }
    if (rc == 0) {
        totals.bytes += bytes;
        MDB_val v = LmdbVal(value);
        rc = mdb_put(txn, entries, &k, &v, 0);
    }
    return rc != 0 ? rc : WriteTotals(txn, meta, totals);
}

// Sets the score of the entry `update` names, if it exists and can be
// read. An LMDB error code, 0 on success.
int PutScore(MDB_txn* txn, MDB_dbi entries,
             const BlockStore::ScoreUpdate& update) {
    if (!ValidBlockVariant(update.variant)) {
        return 0;
    }
    std::string key = MakeKey(update.variant, update.slot);
    MDB_val k = LmdbVal(key);
    MDB_val value;
    BlockRecord rec;
    int rc = mdb_get(txn, entries, &k, &value);
    if (rc == MDB_NOTFOUND) {
        return 0;
    }
    if (rc != 0 || !DecodeRecord(value, &rec)) {
        return rc;
    }
    rec.score = update.score;
    rec.score_ms = update.score_ms;
    std::string encoded = EncodeRecord(rec);
    MDB_val v = LmdbVal(encoded);
    return mdb_put(txn, entries, &k, &v, 0);
}

// Walks <cache>/v and deletes whatever is not the file of a valid entry
// (strays, orphans, files of another size or inode), counting in *deleted
// what it removed (a file, or a stray directory with what it held); the
// keys of the files kept go to *kept. An LMDB error code, 0 on success.
int ReconcileFiles(MDB_txn* txn, MDB_dbi dbi, const std::string& v_dir,
                   std::unordered_set<std::string>* kept,
                   uint64_t* deleted) {
    std::vector<std::string> variants;
    if (!ListDir(v_dir, &variants)) {
        return errno != 0 ? errno : EIO;
    }
    std::vector<std::string> groups;
    std::vector<std::string> files;
    for (const std::string& encoded : variants) {
        std::string variant_dir = v_dir + "/" + encoded;
        std::string variant;
        if (!IsDir(variant_dir) || !DecodeVariant(encoded, &variant)) {
            *deleted += RemoveTree(variant_dir) ? 1 : 0;
            continue;
        }
        ListDir(variant_dir, &groups);
        for (const std::string& group_name : groups) {
            std::string group_dir = variant_dir + "/" + group_name;
            uint64_t group = 0;
            if (!IsDir(group_dir) || !ParseDecimal(group_name, &group)) {
                *deleted += RemoveTree(group_dir) ? 1 : 0;
                continue;
            }
            ListDir(group_dir, &files);
            for (const std::string& name : files) {
                std::string path = group_dir + "/" + name;
                uint64_t slot = 0;
                if (!ParseDecimal(name, &slot) ||
                    slot / kSlotsPerDir != group) {
                    *deleted += RemoveTree(path) ? 1 : 0;
                    continue;
                }
                std::string key = MakeKey(variant, slot);
                MDB_val k = LmdbVal(key);
                MDB_val value;
                int rc = mdb_get(txn, dbi, &k, &value);
                if (rc != 0 && rc != MDB_NOTFOUND) {
                    return rc;
                }
                BlockRecord rec;
                struct stat st;
                bool good = rc == 0 && DecodeRecord(value, &rec) &&
                            lstat(path.c_str(), &st) == 0 &&
                            S_ISREG(st.st_mode) &&
                            static_cast<uint64_t>(st.st_size) ==
                                rec.bytes &&
                            st.st_ino == rec.file_id;
                if (good) {
                    kept->insert(std::move(key));
                } else {
                    *deleted += RemoveTree(path) ? 1 : 0;
                }
            }
            rmdir(group_dir.c_str());   // only when empty
        }
        rmdir(variant_dir.c_str());
    }
    return 0;
}

// Deletes the entries whose file ReconcileFiles did not keep (or whose
// record cannot be read), counting them in *dropped, and counts the totals
// again. An LMDB error code, 0 on success.
int DropStaleEntries(MDB_txn* txn, MDB_dbi entries, MDB_dbi meta,
                     const std::unordered_set<std::string>& kept,
                     uint64_t* dropped) {
    BlockStore::Totals totals;
    std::vector<std::string> stale;
    int rc = ForEachLmdbRow(
        txn, entries, "", [&](const MDB_val& key, const MDB_val& value) {
            std::string name(LmdbView(key));
            BlockRecord rec;
            if (kept.count(name) != 0 && DecodeRecord(value, &rec)) {
                totals.bytes += rec.bytes;
                totals.entries++;
            } else {
                stale.push_back(std::move(name));
            }
        });
    for (size_t i = 0; rc == 0 && i < stale.size(); i++) {
        MDB_val key = LmdbVal(stale[i]);
        rc = mdb_del(txn, entries, &key, nullptr);
    }
    *dropped = stale.size();
    if (rc == 0) {
        rc = GetMeta(txn, meta, kMetaEvictions, &totals.evictions);
    }
    return rc != 0 ? rc : WriteTotals(txn, meta, totals);
}

// Moves the damaged index out of the way and empties the cache, so that
// nothing it described can be served.
bool StartOver(const std::string& env_dir, const std::string& cache_dir,
               std::string* error) {
    std::string aside = env_dir + ".corrupt";
    if (!RemoveTree(aside)) {
        return Fail(error, SysError("remove " + aside, errno));
    }
    if (rename(env_dir.c_str(), aside.c_str()) != 0 && errno != ENOENT) {
        return Fail(error, SysError("rename " + env_dir, errno));
    }
    std::string v_dir = cache_dir + "/v";
    if (!RemoveTree(v_dir) || !ClearDir(cache_dir + "/tmp")) {
        return Fail(error, SysError("clear " + cache_dir, errno));
    }
    return MakeDirs(env_dir, 0700, "block cache", error) &&
           MakeDirs(v_dir, 0755, "block cache", error);
}

}  // namespace

bool ValidBlockVariant(std::string_view variant) {
    if (variant.empty() || variant.size() > kMaxBlockVariantBytes) {
        return false;
    }
    for (char c : variant) {
        if (c < 0x21 || c > 0x7E) {
            return false;
        }
    }
    return true;
}

std::unique_ptr<BlockStore> BlockStore::Open(
    const BlockStoreOptions& options, bool reconcile, std::string* error) {
    try {
        if (options.cache_dir.empty() || options.state_dir.empty()) {
            Fail(error, "block cache: cache_dir and state_dir are required");
            return nullptr;
        }
        std::unique_ptr<BlockStore> store(new BlockStore());
        store->cache_dir_ = StripTrailingSlashes(options.cache_dir);
        store->env_dir_ = StripTrailingSlashes(options.state_dir) + "/blocks";
        store->sync_files_ = options.sync_files;
        store->nonce_ = RandomNonce(store.get());
        store->env_ = std::make_unique<LmdbEnv>("block index");
        if (!MakeDirs(store->cache_dir_ + "/v", 0755, "block cache",
                      error) ||
            !MakeDirs(store->cache_dir_ + "/tmp", 0755, "block cache",
                      error) ||
            !MakeDirs(store->env_dir_, 0700, "block cache", error)) {
            return nullptr;
        }
        auto open = [&](bool* corrupt) {
            return store->OpenEnv(options.map_size, corrupt, error) &&
                   (!reconcile || store->Reconcile(corrupt, error));
        };
        auto start_over = [&] {
            store->opening_.damage = *error;
            return StartOver(store->env_dir_, store->cache_dir_, error);
        };
        if (!store->env_->OpenOrStartOver(reconcile, open, start_over)) {
            return nullptr;
        }
        return store;
    } catch (...) {
        Report(error, "block cache: out of memory");
        return nullptr;
    }
}

BlockStore::~BlockStore() = default;

bool BlockStore::OpenEnv(size_t map_size, bool* corrupt,
                         std::string* error) {
    const LmdbEnvSettings settings{kMaxDbs, kMaxReaders, map_size, kFormat,
                                   "entries"};
    auto open_tables = [this](MDB_txn* txn, LmdbLayout* layout) {
        int rc = mdb_dbi_open(txn, "entries", MDB_CREATE, &entries_dbi_);
        if (rc == 0) {
            rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &meta_dbi_);
        }
        if (rc == 0) {
            rc = GetMeta(txn, meta_dbi_, kLmdbFormatKey, &layout->format);
        }
        layout->meta = meta_dbi_;
        layout->tables = {entries_dbi_};
        return rc;
    };
    return env_->Open(env_dir_, settings, open_tables, corrupt, error);
}

bool BlockStore::Reconcile(bool* corrupt, std::string* error) {
    // The writer lock is held throughout, so no Commit is between its
    // rename and its index write: a file in v/ without an entry is an
    // orphan. Temp files of other live processes (a reload's old workers)
    // are being written and stay.
    std::string what = "reconcile";
    Opening found;
    int rc = env_->Write([&](MDB_txn* txn) {
        ClearStaleTemps(cache_dir_ + "/tmp");
        std::unordered_set<std::string> kept;
        found = Opening{};
        int rc = ReconcileFiles(txn, entries_dbi_, cache_dir_ + "/v", &kept,
                                &found.items_removed);
        if (rc != 0) {
            what = "reconcile " + cache_dir_;
            return rc;
        }
        found.entries_kept = kept.size();
        return DropStaleEntries(txn, entries_dbi_, meta_dbi_, kept,
                                &found.entries_dropped);
    });
    if (rc != 0) {
        *corrupt = IsLmdbCorruption(rc);
        return Fail(error, env_->ErrorText(what, rc));
    }
    found.reconciled = true;
    found.damage = std::move(opening_.damage);   // a start over's, if any
    opening_ = std::move(found);
    return true;
}

std::string BlockStore::PathFor(uint64_t slot,
                                std::string_view variant) const {
    try {
        if (!ValidBlockVariant(variant)) {
            return std::string();
        }
        return cache_dir_ + "/v/" + EncodeVariant(variant) + "/" +
               std::to_string(slot / kSlotsPerDir) + "/" +
               std::to_string(slot);
    } catch (...) {
        return std::string();
    }
}

bool BlockStore::Lookup(uint64_t slot, std::string_view variant,
                        BlockRecord* out) const {
    try {
        if (!ValidBlockVariant(variant)) {
            return false;
        }
        std::string key = MakeKey(variant, slot);
        MDB_val k = LmdbVal(key);
        bool found = false;
        env_->Read([&](MDB_txn* txn) {
            MDB_val value;
            int rc = mdb_get(txn, entries_dbi_, &k, &value);
            found = rc == 0 && DecodeRecord(value, out);
            return rc;
        });
        return found;
    } catch (...) {
        return false;
    }
}

int BlockStore::OpenVerified(uint64_t slot, std::string_view variant,
                             BlockRecord* out) const {
    try {
        std::string path = PathFor(slot, variant);
        // A second try covers a replacement caught between its rename and
        // its index commit.
        for (int attempt = 0; attempt < 2; attempt++) {
            BlockRecord rec;
            if (path.empty() || !Lookup(slot, variant, &rec)) {
                return -1;
            }
            int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
            if (fd < 0) {
                continue;
            }
            struct stat st;
            if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                st.st_ino == rec.file_id &&
                static_cast<uint64_t>(st.st_size) == rec.bytes) {
                *out = rec;
                return fd;
            }
            close(fd);
        }
        return -1;
    } catch (...) {
        return -1;
    }
}

std::string BlockStore::NewTempPath() {
    try {
        char name[80];
        std::snprintf(name, sizeof name, "/tmp/%ld-%016llx-%llu.tmp",
                      static_cast<long>(getpid()),
                      static_cast<unsigned long long>(nonce_),
                      static_cast<unsigned long long>(
                          temp_counter_.fetch_add(1)));
        return cache_dir_ + name;
    } catch (...) {
        return std::string();
    }
}

bool BlockStore::Commit(const std::string& temp_path, uint64_t slot,
                        std::string_view variant, const BlockRecord& rec,
                        std::string* error) {
    bool ok = false;
    try {
        ok = RecordFile(temp_path, slot, variant, rec, error);
    } catch (...) {
        Report(error, "block cache: out of memory");
    }
    if (!ok) {
        unlink(temp_path.c_str());
    }
    return ok;
}

bool BlockStore::RecordFile(const std::string& temp_path, uint64_t slot,
                            std::string_view variant, const BlockRecord& rec,
                            std::string* error) {
    if (!ValidBlockVariant(variant)) {
        return Fail(error, "block cache: invalid variant");
    }
    if (rec.kind > BlockRecord::kSkippedSlot) {
        return Fail(error, "block cache: unknown kind " +
                               std::to_string(rec.kind));
    }
    if (static_cast<uint64_t>(rec.id_offset) + rec.id_length > rec.bytes) {
        return Fail(error, "block cache: id span outside the file");
    }
    int fd = open(temp_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        return Fail(error, SysError("open " + temp_path, errno));
    }
    struct stat st;
    int err = 0;
    if (fstat(fd, &st) != 0 || (sync_files_ && fsync(fd) != 0)) {
        err = errno;
    }
    close(fd);
    if (err != 0) {
        return Fail(error, SysError("sync " + temp_path, err));
    }
    if (!S_ISREG(st.st_mode) ||
        static_cast<uint64_t>(st.st_size) != rec.bytes) {
        return Fail(error, "block cache: " + temp_path + " holds " +
                               std::to_string(st.st_size) +
                               " bytes, the record says " +
                               std::to_string(rec.bytes));
    }
    BlockRecord stored = rec;
    stored.file_id = st.st_ino;
    std::string key = MakeKey(variant, slot);
    std::string value = EncodeRecord(stored);
    std::string path = PathFor(slot, variant);

    // The file goes into place inside the transaction, after its entry
    // is written and before the commit; how far it got names the error.
    enum { kRecording, kRenaming, kCommitting } step = kRecording;
    int rename_errno = 0;
    int rc = env_->Write([&](MDB_txn* txn) {
        int rc = PutEntry(txn, entries_dbi_, meta_dbi_, key, value,
                          rec.bytes);
        if (rc != 0) {
            return rc;
        }
        step = kRenaming;
        if (!RenameInto(temp_path, path, cache_dir_)) {
            rename_errno = errno;
            return EIO;   // any code: the entry must not be committed
        }
        step = kCommitting;
        return 0;
    });
    if (rc == 0) {
        return true;
    }
    if (step == kRenaming) {
        return Fail(error, SysError("rename to " + path, rename_errno));
    }
    if (step == kCommitting) {
        // Not recorded: never leave the file where a record could match.
        UnlinkIfInode(path, stored.file_id);
        return Fail(error, env_->ErrorText("commit", rc));
    }
    return Fail(error, env_->ErrorText("record", rc));
}

bool BlockStore::UpdateScores(const std::vector<ScoreUpdate>& updates,
                              std::string* error) {
    try {
        if (updates.empty()) {
            return true;
        }
        return env_->Write("update scores", error, [&](MDB_txn* txn) {
            int rc = 0;
            for (size_t i = 0; rc == 0 && i < updates.size(); i++) {
                rc = PutScore(txn, entries_dbi_, updates[i]);
            }
            return rc;
        });
    } catch (...) {
        Report(error, "block cache: out of memory");
        return false;
    }
}

bool BlockStore::List(std::vector<Entry>* out, std::string* error) const {
    try {
        out->clear();
        auto add = [out](const MDB_val& key, const MDB_val& value) {
            Entry entry;
            if (ParseKey(key, &entry.slot, &entry.variant) &&
                DecodeRecord(value, &entry.rec)) {
                out->push_back(std::move(entry));
            }
        };
        int rc = env_->Read([&](MDB_txn* txn) {
            return ForEachLmdbRow(txn, entries_dbi_, "", add);
        });
        if (rc != 0) {
            out->clear();
            return Fail(error, env_->ErrorText("list", rc));
        }
        return true;
    } catch (...) {
        out->clear();
        Report(error, "block cache: out of memory");
        return false;
    }
}

bool BlockStore::Remove(
    const std::vector<std::pair<uint64_t, std::string>>& keys,
    std::string* error) {
    // Files moved to tmp/ inside the transaction: (where now, where from).
    std::vector<std::pair<std::string, std::string>> moved;
    int rc = 0;
    try {
        if (keys.empty()) {
            return true;
        }
        moved.reserve(keys.size());
        rc = env_->Write([&](MDB_txn* txn) {
            Totals totals;
            int rc = ReadTotals(txn, meta_dbi_, &totals);
            for (size_t i = 0; rc == 0 && i < keys.size(); i++) {
                const std::string& variant = keys[i].second;
                if (!ValidBlockVariant(variant)) {
                    continue;
                }
                std::string key = MakeKey(variant, keys[i].first);
                MDB_val k = LmdbVal(key);
                MDB_val value;
                BlockRecord rec;
                rc = mdb_get(txn, entries_dbi_, &k, &value);
                if (rc == MDB_NOTFOUND) {
                    rc = 0;
                    continue;
                }
                if (rc != 0) {
                    break;
                }
                uint64_t bytes = DecodeRecord(value, &rec) ? rec.bytes : 0;
                rc = mdb_del(txn, entries_dbi_, &k, nullptr);
                if (rc != 0) {
                    break;
                }
                totals.bytes -= std::min(totals.bytes, bytes);
                totals.entries -= totals.entries > 0 ? 1 : 0;
                totals.evictions++;
                std::string path = PathFor(keys[i].first, variant);
                std::string trash = NewTempPath();
                if (!trash.empty() &&
                    rename(path.c_str(), trash.c_str()) == 0) {
                    moved.emplace_back(std::move(trash), std::move(path));
                }
            }
            return rc != 0 ? rc : WriteTotals(txn, meta_dbi_, totals);
        });
    } catch (...) {
        rc = ENOMEM;
    }
    if (rc != 0) {
        // The entries stay: put their files back unless a newer commit
        // took the place meanwhile.
        for (const auto& [trash, path] : moved) {
            if (renameat2(AT_FDCWD, trash.c_str(), AT_FDCWD, path.c_str(),
                          RENAME_NOREPLACE) != 0) {
                unlink(trash.c_str());
            }
        }
        try {
            return Fail(error, env_->ErrorText("remove", rc));
        } catch (...) {
            Report(error, "block index: remove failed");
            return false;
        }
    }
    for (const auto& moved_file : moved) {
        unlink(moved_file.first.c_str());
    }
    return true;
}

BlockStore::Totals BlockStore::GetTotals() const {
    Totals totals;
    int rc = env_->Read([&](MDB_txn* txn) {
        return ReadTotals(txn, meta_dbi_, &totals);
    });
    return rc == 0 ? totals : Totals();
}

}  // namespace solgate
