#include "store/lmdb_env.h"

#include "store/byte_order.h"

namespace solgate {

bool LmdbEnv::Open(const std::string& dir, const LmdbEnvSettings& settings,
                   const OpenTables& open_tables, bool* corrupt,
                   std::string* error) {
    if (!OpenFiles(dir, settings, corrupt, error)) {
        return false;
    }
    // The step that failed names the error: opening the tables (Begin
    // included), or stamping and committing.
    const char* what = "open ";
    bool refused = false;
    int rc = Write([&](MDB_txn* txn) {
        LmdbLayout layout;
        int rc = open_tables(txn, &layout);
        if (rc != 0) {
            return rc;
        }
        what = "initialise ";
        return StampFormat(txn, layout, settings, &refused, error);
    });
    if (rc == 0) {
        return true;
    }
    if (refused) {
        *corrupt = true;
        return false;
    }
    *corrupt = IsLmdbCorruption(rc);
    return Fail(error, ErrorText(what + dir, rc));
}

bool LmdbEnv::OpenFiles(const std::string& dir,
                        const LmdbEnvSettings& settings, bool* corrupt,
                        std::string* error) {
    int rc = mdb_env_create(&env_);
    if (rc != 0) {
        env_ = nullptr;
        return Fail(error, ErrorText("create", rc));
    }
    if ((rc = mdb_env_set_maxdbs(env_, settings.max_dbs)) != 0 ||
        (rc = mdb_env_set_maxreaders(env_, settings.max_readers)) != 0 ||
        (rc = mdb_env_set_mapsize(env_, settings.map_size)) != 0) {
        return Fail(error, ErrorText("configure", rc));
    }
    rc = mdb_env_open(env_, dir.c_str(), MDB_NOTLS | MDB_NOMETASYNC, 0600);
    if (rc != 0) {
        *corrupt = IsLmdbCorruption(rc);
        return Fail(error, ErrorText("open " + dir, rc));
    }
    // Reader slots of processes that died inside a read transaction.
    int dead = 0;
    mdb_reader_check(env_, &dead);
    return true;
}

// Stamps a new store; refuses (*refused, *error, a non-zero code to abort
// the transaction) one that has rows but no stamp or another format.
int LmdbEnv::StampFormat(MDB_txn* txn, const LmdbLayout& layout,
                         const LmdbEnvSettings& settings, bool* refused,
                         std::string* error) const {
    if (layout.format != 0 && layout.format != settings.format) {
        *refused = true;
        Fail(error, std::string(error_prefix_) + ": format " +
                        std::to_string(layout.format) + ", expected " +
                        std::to_string(settings.format));
        return MDB_INCOMPATIBLE;
    }
    if (layout.format != 0) {
        return 0;
    }
    // A new store, unless rows are there without a format.
    for (MDB_dbi dbi : layout.tables) {
        MDB_stat info;
        int rc = mdb_stat(txn, dbi, &info);
        if (rc != 0) {
            return rc;
        }
        if (info.ms_entries != 0) {
            *refused = true;
            Fail(error, std::string(error_prefix_) + ": " +
                            settings.rows_noun + " without a format");
            return MDB_INCOMPATIBLE;
        }
    }
    return PutLmdbNumber(txn, layout.meta, kLmdbFormatKey, settings.format);
}

void LmdbEnv::Close() noexcept {
    if (env_ != nullptr) {
        mdb_env_close(env_);
        env_ = nullptr;
    }
}

std::string LmdbEnv::ErrorText(const std::string& what, int rc) const {
    return std::string(error_prefix_) + ": " + what + ": " +
           mdb_strerror(rc);
}

bool IsLmdbCorruption(int rc) noexcept {
    return rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND ||
           rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH ||
           rc == MDB_INCOMPATIBLE || rc == MDB_PANIC;
}

MDB_val LmdbVal(std::string_view bytes) noexcept {
    MDB_val val;
    val.mv_size = bytes.size();
    val.mv_data = const_cast<char*>(bytes.data());
    return val;
}

int PutLmdbNumber(MDB_txn* txn, MDB_dbi dbi, std::string_view key,
                  uint64_t number) noexcept {
    unsigned char bytes[8];
    WriteLittleEndian(bytes, number, 8);
    MDB_val k = LmdbVal(key);
    MDB_val value;
    value.mv_size = sizeof bytes;
    value.mv_data = bytes;
    return mdb_put(txn, dbi, &k, &value, 0);
}

int LmdbTxn::Begin(MDB_env* env, bool write) noexcept {
    return mdb_txn_begin(env, nullptr, write ? 0 : MDB_RDONLY, &txn_);
}

int LmdbTxn::Commit() noexcept {
    int rc = mdb_txn_commit(txn_);
    txn_ = nullptr;
    return rc;
}

void LmdbTxn::Abort() noexcept {
    if (txn_ != nullptr) {
        mdb_txn_abort(txn_);
        txn_ = nullptr;
    }
}

LmdbCursor::~LmdbCursor() {
    if (cursor_ != nullptr) {
        mdb_cursor_close(cursor_);
    }
}

int LmdbCursor::Open(MDB_txn* txn, MDB_dbi dbi) noexcept {
    return mdb_cursor_open(txn, dbi, &cursor_);
}

}  // namespace solgate
