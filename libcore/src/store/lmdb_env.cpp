#include "store/lmdb_env.h"

#include "store/byte_order.h"
#include "base/error_out.h"

namespace solgate {

bool OpenLmdbEnv(const std::string& dir, const LmdbEnvSettings& settings,
                 MDB_env** env, bool* corrupt, std::string* error) {
    const char* prefix = settings.error_prefix;
    int rc = mdb_env_create(env);
    if (rc != 0) {
        *env = nullptr;
        return Fail(error, LmdbErrorText(prefix, "create", rc));
    }
    if ((rc = mdb_env_set_maxdbs(*env, settings.max_dbs)) != 0 ||
        (rc = mdb_env_set_maxreaders(*env, settings.max_readers)) != 0 ||
        (rc = mdb_env_set_mapsize(*env, settings.map_size)) != 0) {
        return Fail(error, LmdbErrorText(prefix, "configure", rc));
    }
    rc = mdb_env_open(*env, dir.c_str(), MDB_NOTLS | MDB_NOMETASYNC, 0600);
    if (rc != 0) {
        *corrupt = IsLmdbCorruption(rc);
        return Fail(error, LmdbErrorText(prefix, "open " + dir, rc));
    }
    // Reader slots of processes that died inside a read transaction.
    int dead = 0;
    mdb_reader_check(*env, &dead);
    return true;
}

bool CheckFormatAndCommit(LmdbTxn* txn, MDB_dbi meta, uint64_t found,
                          std::initializer_list<MDB_dbi> tables,
                          const LmdbEnvSettings& settings,
                          const std::string& dir, bool* corrupt,
                          std::string* error) {
    const char* prefix = settings.error_prefix;
    int rc = 0;
    if (found == 0) {
        // A new store, unless rows are there without a format.
        MDB_stat info;
        for (MDB_dbi dbi : tables) {
            if (rc == 0 && (rc = mdb_stat(txn->get(), dbi, &info)) == 0 &&
                info.ms_entries != 0) {
                *corrupt = true;
                return Fail(error, std::string(prefix) + ": " +
                                       settings.rows_noun +
                                       " without a format");
            }
        }
        if (rc == 0) {
            rc = PutLmdbNumber(txn->get(), meta, kLmdbFormatKey,
                               settings.format);
        }
    } else if (found != settings.format) {
        *corrupt = true;
        return Fail(error, std::string(prefix) + ": format " +
                               std::to_string(found) + ", expected " +
                               std::to_string(settings.format));
    }
    if (rc != 0 || (rc = txn->Commit()) != 0) {
        *corrupt = IsLmdbCorruption(rc);
        return Fail(error, LmdbErrorText(prefix, "initialise " + dir, rc));
    }
    return true;
}

void CloseLmdbEnv(MDB_env** env) noexcept {
    if (*env != nullptr) {
        mdb_env_close(*env);
        *env = nullptr;
    }
}

bool IsLmdbCorruption(int rc) noexcept {
    return rc == MDB_CORRUPTED || rc == MDB_PAGE_NOTFOUND ||
           rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH ||
           rc == MDB_INCOMPATIBLE || rc == MDB_PANIC;
}

std::string LmdbErrorText(const char* prefix, const std::string& what,
                          int rc) {
    return std::string(prefix) + ": " + what + ": " + mdb_strerror(rc);
}

MDB_val LmdbVal(const std::string& bytes) noexcept {
    MDB_val val;
    val.mv_size = bytes.size();
    val.mv_data = const_cast<char*>(bytes.data());
    return val;
}

int PutLmdbNumber(MDB_txn* txn, MDB_dbi dbi, std::string_view key,
                  uint64_t number) noexcept {
    unsigned char bytes[8];
    WriteLittleEndian(bytes, number, 8);
    MDB_val k;
    k.mv_size = key.size();
    k.mv_data = const_cast<char*>(key.data());
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
