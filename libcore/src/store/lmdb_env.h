// The LMDB plumbing that the block index (block_store) and the key ledger
// (key_ledger) share: an environment that opens and checks its format
// stamp the same way and is the one place where the stores' transactions
// begin and end, a walk over the rows under a key prefix, and error text.
//
// Transactions. LmdbEnv::Write runs a body in a write transaction and
// commits it only when the body returns 0; LmdbEnv::Read runs one in a
// read-only transaction. Either way the transaction is aborted however
// else the body ends (an error code, an exception), so a store never
// begins, commits or aborts one itself. Neither retries: a full map
// (MDB_MAP_FULL) is the caller's error like any other.
#pragma once

#include <lmdb.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/error_out.h"

namespace solgate {

// How a store opens its environment and which format it expects; what
// differs between the stores, with the error prefix given to LmdbEnv.
struct LmdbEnvSettings {
    unsigned max_dbs;           // named sub-databases
    unsigned max_readers;       // concurrent read transactions
    size_t map_size;            // the environment's maximum size, bytes
    uint64_t format;            // the version of the store's layout
    const char* rows_noun;      // its rows, in "<noun> without a format"
};

// The key of the format stamp in a store's "meta" sub-database.
constexpr char kLmdbFormatKey[] = "format";

// A store's sub-databases, as it opened them in LmdbEnv::Open, and the
// format stamp it read.
struct LmdbLayout {
    MDB_dbi meta = 0;              // holds the stamp at kLmdbFormatKey
    std::vector<MDB_dbi> tables;   // the others: rows there mean not new
    uint64_t format = 0;           // the stamp found; 0: none
};

// A transaction, aborted unless committed. LmdbEnv's Read and Write hold
// one for their body; nothing else should need to.
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

// A cursor, closed before its transaction ends (declare it inside the
// body that the transaction runs: LMDB wants a write transaction's
// cursors closed before the commit).
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

// One store's environment, closed when destroyed. Its transaction
// methods may be called from any thread once it is open (MDB_NOTLS);
// Open and Close only when no transaction is in progress.
class LmdbEnv {
public:
    // Opens the store's sub-databases into *layout (creating them) and
    // reads its format stamp into layout->format; an LMDB error code, 0
    // on success.
    using OpenTables = std::function<int(MDB_txn* txn, LmdbLayout* layout)>;

    // `error_prefix` (a literal: it is kept) starts every message, e.g.
    // "key ledger".
    explicit LmdbEnv(const char* error_prefix) noexcept
        : error_prefix_(error_prefix) {}
    LmdbEnv(const LmdbEnv&) = delete;
    LmdbEnv& operator=(const LmdbEnv&) = delete;
    ~LmdbEnv() { Close(); }

    // Creates, configures and opens the environment in the existing
    // directory `dir` (MDB_NOTLS | MDB_NOMETASYNC, mode 0600) and frees
    // the reader slots of processes that died inside a read transaction.
    // Then, in one write transaction, runs open_tables and checks the
    // stamp: stamps settings.format on a new store (every one of
    // layout.tables empty), refuses with *corrupt one that has rows but
    // no stamp or another format, and commits. False with *error (and
    // *corrupt when the files themselves are unusable) on failure; Close
    // before opening again. Throws only std::bad_alloc (error text).
    bool Open(const std::string& dir, const LmdbEnvSettings& settings,
              const OpenTables& open_tables, bool* corrupt,
              std::string* error);

    // Runs open(bool* corrupt) -> bool, which opens this environment (and
    // checks whatever else the store checks then). When that fails with
    // *corrupt and `recover`, closes the environment and runs
    // start_over() -> bool, which moves the damaged files aside, then
    // open once more. Whether the environment ended up open; it is
    // closed otherwise. What open or start_over throws propagates.
    template <typename OpenStep, typename StartOver>
    bool OpenOrStartOver(bool recover, OpenStep&& open,
                         StartOver&& start_over) {
        for (int attempt = 0;; attempt++) {
            bool corrupt = false;
            if (open(&corrupt)) {
                return true;
            }
            Close();
            if (!corrupt || !recover || attempt > 0 || !start_over()) {
                return false;
            }
        }
    }

    // Closes the environment, if open.
    void Close() noexcept;

    // Runs body(MDB_txn*) -> int in a new write transaction and commits
    // it when body returns 0; else (or when body throws, which
    // propagates) aborts it. An LMDB error code: Begin's, body's or
    // Commit's; 0 once committed. body must not end the transaction
    // itself, and its cursors must be closed when it returns.
    template <typename Body>
    int Write(Body&& body) {
        LmdbTxn txn;
        int rc = txn.Begin(env_, true);
        if (rc == 0) {
            rc = body(txn.get());
        }
        return rc != 0 ? rc : txn.Commit();
    }

    // Write, for a store operation: false with *error, ErrorText(what,
    // rc), when it fails.
    template <typename Body>
    bool Write(const std::string& what, std::string* error, Body&& body) {
        int rc = Write(std::forward<Body>(body));
        return rc == 0 || Fail(error, ErrorText(what, rc));
    }

    // Runs body(MDB_txn*) -> int in a new read-only transaction, ended
    // when body returns (or throws): what it reads stays valid only
    // inside. An LMDB error code: Begin's or body's.
    template <typename Body>
    int Read(Body&& body) const {
        LmdbTxn txn;
        int rc = txn.Begin(env_, false);
        return rc != 0 ? rc : body(txn.get());
    }

    // "<error prefix>: <what>: <LMDB's text for rc>".
    std::string ErrorText(const std::string& what, int rc) const;

private:
    bool OpenFiles(const std::string& dir, const LmdbEnvSettings& settings,
                   bool* corrupt, std::string* error);
    int StampFormat(MDB_txn* txn, const LmdbLayout& layout,
                    const LmdbEnvSettings& settings, bool* refused,
                    std::string* error) const;

    const char* error_prefix_;
    MDB_env* env_ = nullptr;
};

// Whether an LMDB error means the environment's files are unusable
// (damaged, or of another version), not that the system failed.
bool IsLmdbCorruption(int rc) noexcept;

// An MDB_val over `bytes`, which must outlive it.
MDB_val LmdbVal(std::string_view bytes) noexcept;

// The bytes an MDB_val points at.
inline std::string_view LmdbView(const MDB_val& val) noexcept {
    return std::string_view(static_cast<const char*>(val.mv_data),
                            val.mv_size);
}

// Stores `number` at `key` as 8 bytes little-endian; an LMDB error code,
// 0 on success. (Readers differ in what a value of another size means.)
int PutLmdbNumber(MDB_txn* txn, MDB_dbi dbi, std::string_view key,
                  uint64_t number) noexcept;

// Calls visit(const MDB_val& key, const MDB_val& value) for each row
// whose key starts with `prefix` (every row for ""), in key order, from
// `cursor`'s database. An LMDB error code, 0 once past the last such row.
// What visit throws propagates.
template <typename Visit>
int ForEachLmdbRow(MDB_cursor* cursor, std::string_view prefix,
                   Visit&& visit) {
    MDB_val key = LmdbVal(prefix);
    MDB_val value;
    // MDB_SET_RANGE refuses an empty key.
    int rc = mdb_cursor_get(cursor, &key, &value,
                            prefix.empty() ? MDB_FIRST : MDB_SET_RANGE);
    while (rc == 0 && LmdbView(key).substr(0, prefix.size()) == prefix) {
        visit(static_cast<const MDB_val&>(key),
              static_cast<const MDB_val&>(value));
        rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT);
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

// The same over `dbi` in `txn`, with a cursor of its own.
template <typename Visit>
int ForEachLmdbRow(MDB_txn* txn, MDB_dbi dbi, std::string_view prefix,
                   Visit&& visit) {
    LmdbCursor cursor;
    int rc = cursor.Open(txn, dbi);
    return rc != 0 ? rc : ForEachLmdbRow(cursor.get(), prefix, visit);
}

}  // namespace solgate
