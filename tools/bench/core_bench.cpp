// libcore timings and figures that are measurements, not tests: each one
// runs the workload of a libcore test that checks the behaviour, and
// prints how long it took or how big it got.  Built and run by
// tools/bench/core_bench.sh against the libcore objects in build/libcore.
//
//   core_bench [glob|queue|poller_stop|receipts|scanner ...]   (default: all)
//
// One line per figure on stdout; the same as JSON, one object per line,
// on the file named by $CORE_BENCH_JSON (if set).  A figure past its
// design bound prints SLOW; core_bench exits 0 unless a workload itself
// fails.
#include <sys/mman.h>
#include <uv.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ftw.h>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unistd.h>
#include <vector>

#include "blocks/retrieval_queue.h"
#include "json/envelope_scanner.h"
#include "routing/selector.h"
#include "runtime/loop_job.h"
#include "runtime/poller_thread.h"
#include "store/key_ledger.h"
#include "support/workloads.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
    return std::chrono::duration<double>(Clock::now() - since).count();
}

FILE* g_json = nullptr;
bool g_failed = false;

// One figure: "name: value unit (note)"; SLOW when bound > 0 and the value
// is above it.
void Figure(const std::string& name, double value, const char* unit,
            double bound, const std::string& note = "") {
    bool slow = bound > 0 && value > bound;
    std::string line = name;
    line.resize(std::max<size_t>(line.size(), 50), ' ');
    char num[64];
    std::snprintf(num, sizeof num, " %12.2f %-5s", value, unit);
    line += num;
    if (bound > 0) {
        std::snprintf(num, sizeof num, "  %s %g %s", slow ? "SLOW: above" : "within",
                      bound, unit);
        line += num;
    }
    if (!note.empty()) line += "  (" + note + ")";
    line.erase(line.find_last_not_of(' ') + 1);
    std::printf("%s\n", line.c_str());
    if (g_json) {
        std::fprintf(g_json,
                     "{\"name\":\"%s\",\"value\":%.6g,\"unit\":\"%s\","
                     "\"bound\":%.6g,\"slow\":%s}\n",
                     name.c_str(), value, unit, bound, slow ? "true" : "false");
    }
}

void Fail(const std::string& what) {
    std::fprintf(stderr, "core_bench: %s\n", what.c_str());
    g_failed = true;
}

// --- glob: libcore/test/routing/selector_test.cpp, Glob.PathologicalPatterns

void BenchGlob() {
    using solgate::GlobMatch;
    std::string text(100000, 'a');
    std::string pattern;
    for (int i = 0; i < 50; i++) pattern += "a*";
    pattern += "b";
    std::string hard = text + "b";
    auto start = Clock::now();
    bool ok = !GlobMatch(pattern, text) &&
              !GlobMatch("a*a*a*a*a*a*a*a*b", text) &&
              GlobMatch(pattern.substr(0, pattern.size() - 1), text) &&
              GlobMatch(pattern, hard) &&
              !GlobMatch("*aaaaaaaaab*aaaaaaaaab", text);
    double ms = Seconds(start) * 1e3;
    if (!ok) Fail("glob: a pathological pattern gave a wrong answer");
    // the bound the test used to assert: the five matches within 1 s
    Figure("glob: 5 pathological matches, 100 kB text", ms, "ms", 1000);
}

// --- queue: libcore/test/blocks/retrieval_queue_test.cpp,
//     RetrievalQueue.PositionOnFullQueue

uint32_t FromMap(uint32_t key, void* user) {
    auto* m = static_cast<std::map<uint32_t, uint32_t>*>(user);
    auto it = m->find(key);
    return it == m->end() ? 0 : it->second;
}

void BenchQueue() {
    using namespace solgate;
    void* p = mmap(nullptr, sizeof(RetrievalQueueShared),
                   PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return Fail("queue: mmap failed");
    auto* q = static_cast<RetrievalQueueShared*>(p);
    if (!InitRetrievalQueue(q)) return Fail("queue: init failed");
    constexpr char kVariant[] = "getBlock/json/full/r1/v0";
    constexpr uint32_t kLimit = 16384;
    std::map<uint32_t, uint32_t> rep;
    for (uint32_t k = 0; k < 200; ++k) rep[k] = k % 4;
    RepeatFn fn;
    fn.fn = FromMap;
    fn.user = &rep;
    auto ask = [&](uint32_t key, uint64_t slot) {
        return RequestBlock(q, key, slot, kVariant, 0, kLimit, 1.0, fn);
    };
    testing::FullQueueLast last = testing::FillFullQueue(q, ask);
    const int kRuns = 50;
    auto start = Clock::now();
    for (int i = 0; i < kRuns; ++i) ask(last.key, last.slot);
    double us = Seconds(start) * 1e6 / kRuns;
    munmap(p, sizeof(RetrievalQueueShared));
    // the test's old bound ("generous: sanitizers and -O0 builds")
    Figure("queue: RequestBlock, 10000 queued, last", us, "us", 50000,
           "position " + std::to_string(last.position));
}

// --- poller_stop: libcore/test/runtime/poller_thread_test.cpp,
//     PollerThread.StopIsIdempotentAndPrompt

struct Ticked {
    std::mutex mutex;
    std::condition_variable changed;
    int ticks = 0;
};

class TickJob : public solgate::LoopJob {
public:
    explicit TickJob(std::shared_ptr<Ticked> t) : t_(std::move(t)) {}
    void Tick() override {
        {
            std::lock_guard<std::mutex> lock(t_->mutex);
            ++t_->ticks;
        }
        t_->changed.notify_all();
    }

private:
    std::shared_ptr<Ticked> t_;
};

void BenchPollerStop() {
    constexpr int kRounds = 20;
    double worst = 0, total = 0;
    for (int r = 0; r < kRounds; ++r) {
        auto t = std::make_shared<Ticked>();
        std::string error;
        auto poller = solgate::PollerThread::Start(
            [t](uv_loop_t*) { return std::make_unique<TickJob>(t); },
            60000, &error);
        if (!poller) return Fail("poller_stop: " + error);
        {
            std::unique_lock<std::mutex> lock(t->mutex);
            if (!t->changed.wait_for(lock, std::chrono::seconds(5),
                                     [&] { return t->ticks >= 1; })) {
                return Fail("poller_stop: no first tick");
            }
        }
        auto start = Clock::now();
        poller->Stop();
        double ms = Seconds(start) * 1e3;
        total += ms;
        if (ms > worst) worst = ms;
    }
    // the bound the test used to assert: Stop() within 1000 ms
    Figure("poller_stop: Stop() with a 60 s timer, mean", total / kRounds,
           "ms", 1000, std::to_string(kRounds) + " rounds");
    Figure("poller_stop: Stop() with a 60 s timer, worst", worst, "ms", 1000);
}

// --- receipts: libcore/test/store/key_ledger_test.cpp,
//     KeyLedgerTest.ReceiptsOfManyKeysAreKept

constexpr int64_t kNow = 1796083200000 + 10 * 3600000;  // 2026-12-01T10:00Z

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
    return remove(path);
}

// The receipts workload, and the size of the file it left.
struct Receipts {
    bool ok = false;
    uint64_t rows = 0;
    uint64_t page_bytes = 0;
    uint64_t file_bytes = 0;
};

Receipts WriteReceipts(const std::string& state_dir, int keys, bool archival) {
    solgate::testing::ManyKeys m =
        solgate::testing::WriteManyReceipts(state_dir, keys, archival, kNow);
    Receipts out;
    out.rows = m.rows;
    out.page_bytes = m.page_bytes;
    struct stat fst;
    if (stat((state_dir + "/keys/data.mdb").c_str(), &fst) == 0) {
        out.file_bytes = fst.st_size;
    }
    out.ok = m.opened && m.failed_flushes == 0 && m.dropped == 0 &&
             m.page_bytes > 0;
    return out;
}

void BenchReceipts() {
    constexpr int kKeys = 256;
    char tmpl[] = "/tmp/core_bench.XXXXXX";
    if (!mkdtemp(tmpl)) return Fail("receipts: mkdtemp failed");
    std::string root = tmpl;
    for (bool archival : {false, true}) {
        const char* what = archival ? "archival" : "near tip";
        auto start = Clock::now();
        Receipts r = WriteReceipts(root + (archival ? "/arch" : "/tip"),
                                   kKeys, archival);
        double secs = Seconds(start);
        if (!r.ok) {
            Fail(std::string("receipts (") + what + "): the workload failed");
            continue;
        }
        std::string n = std::string("receipts ") + what + ": ";
        std::string note = std::to_string(kKeys) +
                           " keys x 10,000 blocks/day, 25 h, " +
                           std::to_string(r.rows) + " rows";
        Figure(n + "pages", r.page_bytes / 1e6, "MB", 0, note);
        Figure(n + "bytes per key", double(r.page_bytes) / kKeys, "B", 0);
        Figure(n + "bytes per receipt",
               double(r.page_bytes) / (kKeys * 25.0 * 417), "B", 0);
        Figure(n + "data.mdb", r.file_bytes / 1e6, "MB", 0);
        Figure(n + "4096 keys (scaled)", r.page_bytes * (4096.0 / kKeys) / 1e6,
               "MB", 0);
        Figure(n + "time to write", secs, "s", 0);
    }
    nftw(root.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS);
}

// --- scanner: libcore/test/json/envelope_scanner_test.cpp,
//     EnvelopeScanner.FiveMegabyteBlock and FiveMegabyteBase64Block

double MegabytesPerSecond(const std::string& body, size_t piece, int rounds) {
    auto start = Clock::now();
    for (int r = 0; r < rounds; r++) {
        solgate::EnvelopeScanner scanner;
        for (size_t at = 0; at < body.size(); at += piece) {
            scanner.Feed(body.data() + at, std::min(piece, body.size() - at));
        }
        if (!scanner.Finish()) {
            Fail("scanner: a block did not scan");
            return 0;
        }
    }
    return body.size() * double(rounds) / Seconds(start) / 1e6;
}

void BenchScanner() {
    std::string body =
        solgate::testing::MakeJsonBlock(5 << 20, R"("cube-\"runner\"-1")");
    Figure("scanner: json-encoded 5 MB block, 16 KB chunks",
           MegabytesPerSecond(body, 16384, 5), "MB/s", 0);
    std::string base64 = R"({"jsonrpc":"2.0","result":{"transactions":[)";
    while (base64.size() < (5u << 20)) {
        base64 += R"({"transaction":[")" + std::string(1200, 'A') +
                  R"(","base64"],"meta":{"fee":5000,"err":null}},)";
    }
    base64 += R"({}]},"id":9})";
    Figure("scanner: base64-encoded 5 MB block, 16 KB chunks",
           MegabytesPerSecond(base64, 16384, 5), "MB/s", 0);
}

}  // namespace

int main(int argc, char** argv) {
    const std::map<std::string, std::function<void()>> benches = {
        {"glob", BenchGlob},           {"queue", BenchQueue},
        {"poller_stop", BenchPollerStop}, {"receipts", BenchReceipts},
        {"scanner", BenchScanner},
    };
    std::vector<std::string> names(argv + 1, argv + argc);
    if (names.empty()) {
        names = {"glob", "queue", "poller_stop", "receipts", "scanner"};
    }
    if (const char* path = std::getenv("CORE_BENCH_JSON")) {
        g_json = std::fopen(path, "w");
        if (!g_json) std::fprintf(stderr, "core_bench: cannot write %s\n", path);
    }
    for (const std::string& n : names) {
        auto it = benches.find(n);
        if (it == benches.end()) {
            std::fprintf(stderr, "core_bench: unknown figure '%s' (glob, queue, "
                         "poller_stop, receipts, scanner)\n", n.c_str());
            return 2;
        }
        it->second();
        std::fflush(stdout);
    }
    if (g_json) std::fclose(g_json);
    return g_failed ? 1 : 0;
}
