// The LMDB plumbing that the block index (block_store) and the key ledger
// (key_ledger) share: opening an environment and checking its format
// stamp the same way, transactions and cursors that clean up after
// themselves, and error text.
#pragma once

#include <lmdb.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace solgate {

// How a store opens its environment and which format it expects; what
// differs between the stores.
struct LmdbEnvSettings {
    const char* error_prefix;   // starts every message, e.g. "key ledger"
    unsigned max_dbs;           // named sub-databases
    unsigned max_readers;       // concurrent read transactions
    size_t map_size;            // the environment's maximum size, bytes
    uint64_t format;            // the version of the store's layout
    const char* rows_noun;      // its rows, in "<noun> without a format"
};

// The key of the format stamp in a store's "meta" sub-database.
constexpr char kLmdbFormatKey[] = "format";

// A transaction, aborted unless committed.
class LmdbTxn {
public:
    LmdbTxn() = default;
    LmdbTxn(const LmdbTxn&) = delete;
    LmdbTxn& operator=(const LmdbTxn&) = delete;
    ~LmdbTxn() { Abort(); }

    // A write transaction when `write`, else a read-only one; an LMDB
    // error code, 0 on success.
    int Begin(MDB_env* env, bool write) noexcept;
    // Ends the transaction either way; an LMDB error code, 0 on success.
    int Commit() noexcept;
    // Ends the transaction, if any, discarding its writes.
    void Abort() noexcept;
    MDB_txn* get() const noexcept { return txn_; }

private:
    MDB_txn* txn_ = nullptr;
};

// A cursor, closed before its transaction ends (declare it after).
class LmdbCursor {
public:
    LmdbCursor() = default;
    LmdbCursor(const LmdbCursor&) = delete;
    LmdbCursor& operator=(const LmdbCursor&) = delete;
    ~LmdbCursor();

    // An LMDB error code, 0 on success.
    int Open(MDB_txn* txn, MDB_dbi dbi) noexcept;
    MDB_cursor* get() const noexcept { return cursor_; }

private:
    MDB_cursor* cursor_ = nullptr;
};

// Creates, configures and opens the environment in the existing
// directory `dir` into *env (MDB_NOTLS | MDB_NOMETASYNC, mode 0600), then
// frees the reader slots of processes that died inside a read
// transaction. False with *error (and *corrupt when the files themselves
// are unusable) on failure. Whatever the outcome, *env is the caller's to
// close with CloseLmdbEnv. Throws only std::bad_alloc (error text).
bool OpenLmdbEnv(const std::string& dir, const LmdbEnvSettings& settings,
                 MDB_env** env, bool* corrupt, std::string* error);

// Ends opening in the write transaction `txn` that read the stamp
// `found` (0: none) from `meta`: stamps settings.format on a new store
// (all of `tables` empty), refuses with *corrupt one that has rows but no
// stamp or another format, then commits. False with *error on failure.
// Throws only std::bad_alloc (error text).
bool CheckFormatAndCommit(LmdbTxn* txn, MDB_dbi meta, uint64_t found,
                          std::initializer_list<MDB_dbi> tables,
                          const LmdbEnvSettings& settings,
                          const std::string& dir, bool* corrupt,
                          std::string* error);

// Closes *env, if open, and clears it.
void CloseLmdbEnv(MDB_env** env) noexcept;

// Whether an LMDB error means the environment's files are unusable
// (damaged, or of another version), not that the system failed.
bool IsLmdbCorruption(int rc) noexcept;

// "<prefix>: <what>: <LMDB's text for rc>".
std::string LmdbErrorText(const char* prefix, const std::string& what,
                          int rc);

// An MDB_val over the bytes of `bytes`, which must outlive it.
MDB_val LmdbVal(const std::string& bytes) noexcept;

// Stores `number` at `key` as 8 bytes little-endian; an LMDB error code,
// 0 on success. (Readers differ in what a value of another size means.)
int PutLmdbNumber(MDB_txn* txn, MDB_dbi dbi, std::string_view key,
                  uint64_t number) noexcept;

}  // namespace solgate
