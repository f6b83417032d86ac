// Cube Runner's region cache: one file per cached getBlock answer, keyed by
// (slot, variant), with a durable index in LMDB.
//
// Layout. Paths are derived from the key by PathFor, never stored:
//   <cache>/v/<E(variant)>/<slot / 4096>/<slot>   one answer, as served
//   <cache>/tmp/<pid>-<nonce>-<n>.tmp             being written, or removed
//   <state>/blocks/data.mdb, lock.mdb             the index
// E(variant) keeps [A-Za-z0-9-] and writes every other byte as _XX (upper
// hex): "getBlock/json/full/r1/v0" -> "getBlock_2Fjson_2Ffull_2Fr1_2Fv0".
// It is one-to-one, so two variants never share a file, and at most 192
// bytes long. A slot directory holds at most 4096 files. Only v/ and tmp/
// under the cache directory are ever written or deleted.
//
// Index. LMDB sub-database "entries" maps variant bytes, a 0 byte and the
// slot as 8 big-endian bytes (one variant's slots iterate in order) to a
// versioned 56-byte little-endian record; "meta" holds the format version
// and the totals, updated in the same write transaction as the entries, so
// they stay exact under writers in several processes (LMDB's writer lock
// serialises them). Commits are durable (MDB_NOMETASYNC: an OS crash may
// lose the last commit, never corrupt the index; kill -9 loses nothing).
//
// Files are never written in place. Commit renames a complete temp file
// (fsynced) into place and records it in the same write transaction, with
// the file's inode in BlockRecord::file_id. A file at PathFor is served
// only when its inode and size match the record (OpenVerified does that
// check): a crash or a concurrent replacement between the rename and the
// index commit can then never splice an id into another body.
//
// Processes and threads. Open the store in each process after fork, once
// per process: LMDB forbids opening one environment twice in a process,
// or using it across fork. Every method may then be called from any
// thread (MDB_NOTLS); none throws. Destroy the store when no call is in
// progress.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace solgate {

class LmdbEnv;

// A variant is 1 to 64 printable ASCII bytes other than space (0x21-0x7E).
constexpr size_t kMaxBlockVariantBytes = 64;
bool ValidBlockVariant(std::string_view variant);

// What the index knows about one cached answer.
struct BlockRecord {
    static constexpr uint8_t kBlock = 0;
    static constexpr uint8_t kSkippedSlot = 1;  // the node's skipped error

    uint64_t bytes = 0;        // file size
    uint32_t id_offset = 0;    // the JSON-RPC id value lies at
    uint32_t id_length = 0;    // [id_offset, id_offset + id_length)
    uint8_t kind = kBlock;
    int64_t stored_ms = 0;
    double score = 0;          // request score, decayed by the caller
    int64_t score_ms = 0;
    uint64_t file_id = 0;      // the file's inode; set by Commit
};

struct BlockStoreOptions {
    std::string cache_dir;
    std::string state_dir;           // the index lives in state_dir/blocks/
    size_t map_size = 1ull << 30;    // LMDB map: the index's maximum size
    bool sync_files = true;          // fsync each file before recording it
};

class BlockStore {
public:
    // Creates the directories as needed and opens the index. `reconcile`
    // (the first process to open it) then makes files and index agree,
    // holding the writer lock meanwhile: files with no entry, strays and
    // temp files but those of other live processes (by the pid in their
    // name) are deleted, entries whose file is missing or has another size
    // or inode are removed, and the totals are recomputed. An index
    // that cannot be read (corrupt, or of another format) is then moved to
    // state_dir/blocks.corrupt and recreated empty, and the cache's v/ and
    // tmp/ are cleared. Without `reconcile` such an index is an error.
    // nullptr with the reason in *error on failure.
    static std::unique_ptr<BlockStore> Open(const BlockStoreOptions& options,
                                            bool reconcile,
                                            std::string* error);
    ~BlockStore();

    BlockStore(const BlockStore&) = delete;
    BlockStore& operator=(const BlockStore&) = delete;

    // Where the file of (slot, variant) lives (layout above); "" for an
    // invalid variant.
    std::string PathFor(uint64_t slot, std::string_view variant) const;

    // The entry of (slot, variant); false when absent or unreadable. Who
    // opens PathFor itself must check fstat's st_ino == file_id and
    // st_size == bytes before serving, as OpenVerified does.
    bool Lookup(uint64_t slot, std::string_view variant,
                BlockRecord* out) const;

    // Lookup, then opens the file read-only and checks that it is the one
    // the record describes (inode and size): the descriptor (the caller
    // closes it) and *out, or -1 when there is no such pair.
    int OpenVerified(uint64_t slot, std::string_view variant,
                     BlockRecord* out) const;

    // A fresh temp file path in <cache>/tmp, unique across processes and
    // threads (pid, a random nonce per store, a counter). Not created: use
    // O_CREAT | O_EXCL. "" on failure.
    std::string NewTempPath();

    // Records the complete file temp_path as (slot, variant): checks its
    // size against rec.bytes and the id span, fsyncs it (sync_files),
    // renames it to PathFor (creating directories) and writes the entry,
    // replacing any previous one and adjusting the totals, all in one
    // write transaction. rec.file_id is ignored (set from the file). False
    // with *error on failure (MDB_MAP_FULL included: skip caching); the
    // temp file is then removed.
    bool Commit(const std::string& temp_path, uint64_t slot,
                std::string_view variant, const BlockRecord& rec,
                std::string* error);

    // Sets the request score of each existing entry, in one write
    // transaction; absent entries and invalid variants are skipped.
    struct ScoreUpdate {
        uint64_t slot;
        std::string variant;
        double score;
        int64_t score_ms;
    };
    bool UpdateScores(const std::vector<ScoreUpdate>& updates,
                      std::string* error);

    // Every entry, in key order (by variant, then slot), for the eviction
    // planner and the summaries.
    struct Entry {
        uint64_t slot;
        std::string variant;
        BlockRecord rec;
    };
    bool List(std::vector<Entry>* out, std::string* error) const;

    // Removes the entries of `keys` (absent ones are ignored) in one write
    // transaction, counting each as an eviction. Their files are moved to
    // tmp/ inside it and unlinked once it commits; a reader that already
    // opened one keeps reading it.
    bool Remove(const std::vector<std::pair<uint64_t, std::string>>& keys,
                std::string* error);

    // Totals as of the last commit; zeros when the index cannot be read.
    struct Totals {
        uint64_t bytes = 0;
        uint64_t entries = 0;
        uint64_t evictions = 0;   // entries removed by Remove, ever
    };
    Totals GetTotals() const;

    // What opening found and did, for the operator's log: an index that
    // could not be read (then moved aside and the cache emptied), and what
    // the reconcile removed.
    struct Opening {
        bool reconciled = false;        // this process reconciled
        std::string damage;             // the unreadable index's error
        uint64_t items_removed = 0;     // from v/: files no entry describes
                                        // (or not as described), and stray
                                        // directories (each counts once)
        uint64_t entries_dropped = 0;   // file missing, or not the file
        uint64_t entries_kept = 0;
    };
    const Opening& opening() const { return opening_; }

private:
    BlockStore() = default;

    bool OpenEnv(size_t map_size, bool* corrupt, std::string* error);
    bool Reconcile(bool* corrupt, std::string* error);
    bool RecordFile(const std::string& temp_path, uint64_t slot,
                    std::string_view variant, const BlockRecord& rec,
                    std::string* error);

    std::string cache_dir_;
    std::string env_dir_;
    bool sync_files_ = true;
    std::unique_ptr<LmdbEnv> env_;
    unsigned int entries_dbi_ = 0;
    unsigned int meta_dbi_ = 0;
    uint64_t nonce_ = 0;
    std::atomic<uint64_t> temp_counter_{0};
    Opening opening_;
};

}  // namespace solgate
