// Workloads shared by the libcore tests and tools/bench/core_bench: the
// test checks what a workload does, the benchmark times the same work.
// (No GoogleTest here: the benchmark includes this too.)
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "blocks/retrieval_queue.h"
#include "store/key_ledger.h"

namespace solgate::testing {

// A getBlock-like body with "json" encoding: many short strings, numbers
// and small arrays, the shape that costs a scanner the most per byte.
inline std::string MakeJsonBlock(size_t min_bytes, const std::string& id) {
    uint64_t seed = 88172645463325252ULL;
    auto next = [&seed] {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        return seed;
    };
    static const char kBase58[] =
        "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    auto b58 = [&](size_t n) {
        std::string s(n, '1');
        for (char& c : s) {
            c = kBase58[next() % 58];
        }
        return s;
    };
    std::string out =
        R"({"jsonrpc":"2.0","result":{"blockHeight":270000000,)"
        R"("blockTime":1718000000,"blockhash":")" + b58(44) +
        R"(","parentSlot":290000000,"previousBlockhash":")" + b58(44) +
        R"(","rewards":[],"transactions":[)";
    for (size_t tx = 0; out.size() < min_bytes; tx++) {
        if (tx > 0) {
            out += ',';
        }
        out += R"({"meta":{"computeUnitsConsumed":)" +
               std::to_string(next() % 200000) +
               R"(,"err":null,"fee":5000,"innerInstructions":[],)"
               R"("logMessages":["Program )" + b58(44) +
               R"( invoke [1]","Program log: Instruction: Transfer \"x\"",)"
               R"("Program )" + b58(44) + R"( success"],"postBalances":[)";
        for (int i = 0; i < 6; i++) {
            out += (i ? "," : "") + std::to_string(next() % 10000000000ULL);
        }
        out += R"(],"preBalances":[)";
        for (int i = 0; i < 6; i++) {
            out += (i ? "," : "") + std::to_string(next() % 10000000000ULL);
        }
        out += R"(],"status":{"Ok":null}},"transaction":{"message":{)"
               R"("accountKeys":[)";
        for (int i = 0; i < 6; i++) {
            out += std::string(i ? "," : "") + '"' + b58(44) + '"';
        }
        out += R"(],"header":{"numReadonlySignedAccounts":0,)"
               R"("numReadonlyUnsignedAccounts":3,"numRequiredSignatures":1},)"
               R"("instructions":[{"accounts":[1,2,3,0],"data":")" +
               b58(24 + next() % 40) +
               R"(","programIdIndex":4,"stackHeight":null}],)"
               R"("recentBlockhash":")" + b58(44) +
               R"("},"signatures":[")" + b58(88) + R"("]}})";
    }
    out += R"(]},"id":)" + id + "}\n";
    return out;
}

// What writing the receipts of many keys did. (The size the receipts take,
// per key and per receipt, is printed by tools/bench/core_bench: receipts.)
struct ManyKeys {
    bool opened = false;
    int failed_flushes = 0;
    uint64_t dropped = 0;
    uint64_t rows = 0;
    uint64_t page_bytes = 0;   // the receipts sub-database's LMDB pages
};

// Receipts of `keys` keys over the 25 hours kept, 10,000 blocks per key
// and day, flushed 30 times an hour, starting at now_ms.
inline ManyKeys WriteManyReceipts(const std::string& state_dir, int keys,
                                  bool archival, int64_t now_ms) {
    ManyKeys out;
    KeyLedgerOptions options;
    options.state_dir = state_dir;
    std::string error;
    auto ledger = KeyLedger::Open(options, &error);
    if (ledger == nullptr) {
        return out;
    }
    out.opened = true;
    std::mt19937_64 random(7);
    constexpr int kPerHour = 10000 / 24 + 1;
    constexpr int kFlushes = 30;
    constexpr uint64_t kSlotsPerHour = 9000;   // 2.5 slots a second
    const uint64_t tip = 380000000;
    for (int step = 0; step < 25 * kFlushes; step++) {
        int hour = step / kFlushes;
        int part = step % kFlushes;
        for (int key = 0; key < keys; key++) {
            std::string name = "key-" + std::to_string(key) +
                               "-0123456789abcdef0123456789";
            name.resize(36, 'x');
            for (int i = part * kPerHour / kFlushes;
                 i < (part + 1) * kPerHour / kFlushes; i++) {
                uint64_t slot =
                    archival ? random() % tip
                             : tip + hour * kSlotsPerHour +
                                   random() % kSlotsPerHour;
                ledger->NoteReceipt(name, slot, now_ms + hour * int64_t{3600000});
            }
        }
        if (!ledger->Flush(&error)) {
            out.failed_flushes++;
        }
    }
    out.dropped = ledger->GetStats().dropped_receipts;
    if (!ledger->Flush(&error)) {
        out.failed_flushes++;
    }
    out.rows = ledger->GetStats().receipt_buckets;
    ledger.reset();
    MDB_env* env = nullptr;
    MDB_txn* txn = nullptr;
    MDB_dbi dbi = 0;
    MDB_stat stat;
    mdb_env_create(&env);
    mdb_env_set_maxdbs(env, 8);
    std::string dir = state_dir + "/keys";
    if (mdb_env_open(env, dir.c_str(), MDB_RDONLY, 0600) == 0 &&
        mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) == 0 &&
        mdb_dbi_open(txn, "receipts", 0, &dbi) == 0 &&
        mdb_stat(txn, dbi, &stat) == 0) {
        out.page_bytes = (stat.ms_branch_pages + stat.ms_leaf_pages +
                          stat.ms_overflow_pages) *
                         uint64_t{stat.ms_psize};
    }
    if (txn != nullptr) {
        mdb_txn_abort(txn);
    }
    mdb_env_close(env);
    return out;
}

// Where the last of a full queue's blocks stands: its slot, its position
// and the key first waiting for it.
struct FullQueueLast {
    uint32_t slot = 0;
    uint32_t position = 0;
    uint32_t key = 0;
};

// Fills the queue with 10000 blocks asked for by 200 keys (1-3 waiters
// each, in a fixed order) through ask(key, slot), and finds the block
// retrieved last.
template <class Ask>
FullQueueLast FillFullQueue(RetrievalQueueShared* q, Ask ask) {
    std::mt19937 rng(7);
    for (uint64_t s = 0; s < 10000; ++s) {
        int n = 1 + rng() % 3;
        for (int i = 0; i < n; ++i) ask(uint32_t(rng() % 200), 1000 + s);
    }
    FullQueueLast last;
    for (uint64_t s = 0; s < 10000; s += 97) {
        QueueAnswer a = ask(q->entries[s].waiters[0], q->slot[s]);
        if (a.position > last.position) {
            last.position = a.position;
            last.slot = uint32_t(q->slot[s]);
        }
    }
    for (uint32_t i = 0; i < q->used; ++i) {
        if (q->slot[i] == last.slot) last.key = q->entries[i].waiters[0];
    }
    return last;
}

}  // namespace solgate::testing
