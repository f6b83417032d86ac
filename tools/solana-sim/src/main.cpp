// solana-sim: a simulated Solana JSON-RPC node for tests and demos.
// See tools/solana-sim/README.md.
#include <uv.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "config.h"
#include "http_server.h"
#include "node.h"

namespace {

using solsim::SimConfig;

const char kUsage[] =
    "usage: solana-sim --port N [options]\n"
    "  --port N                     TCP port to listen on (required)\n"
    "  --ws-port N                  also serve WebSocket subscriptions (slotSubscribe,\n"
    "                               rootSubscribe, accountSubscribe) on this port, as\n"
    "                               agave does on port+1\n"
    "  --host ADDR                  listen address (default 127.0.0.1)\n"
    "  --cluster NAME               mainnet-beta | devnet | testnet (default mainnet-beta)\n"
    "  --slot-ms N                  slot duration in ms (default 400)\n"
    "  --skip-rate F                fraction of skipped slots, 0..0.9 (default 0.05)\n"
    "  --start-slot N               cluster slot at the anchor time (default 0)\n"
    "  --anchor-ms N                anchor, unix ms (default 1704067200000 = 2024-01-01Z)\n"
    "  --finalized-lag N            finalized = processed - N (default 32)\n"
    "  --block-bytes N              minimum getBlock result size (default 4096)\n"
    "  --first-available-block N    older blocks are 'cleaned up' (default 0)\n"
    "  --seed N                     determinism seed (default 1)\n"
    "  --archive                    getBlock acts as long-term storage: slots 0..finalized,\n"
    "                               skipped slots answer -32009\n"
    "  --getblock-latency-ms N      delay every getBlock answer by N ms (default 0)\n"
    "  --getblock-failure-rate F    fraction of getBlock calls failing with HTTP 503 and\n"
    "                               -32019, 0..1 (default 0)\n"
    "  --name NAME                  node name for logs/stats (default sim-PORT)\n"
    "  --quiet                      no log lines except the start line and errors\n"
    "  --help                       this text\n"
    "control API on the RPC port (GET or POST; see tools/solana-sim/README.md):\n"
    "  /_sim/fault/NAME?...         inject or clear a fault (stall, lag, rollback, ...)\n"
    "  /_sim/account?pubkey=K&lamports=N\n"
    "                               K holds N lamports from the processed tip on: reads\n"
    "                               at that slot or later and accountSubscribe see it\n"
    "  /_sim/stats, /_sim/reset     counters, slots and faults; zero the counters\n";

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "solana-sim: %s\n%s", message.c_str(), kUsage);
    std::exit(2);
}

bool parse_u64(const std::string& s, uint64_t& out) {
    if (s.empty() || s[0] == '-' || s[0] == '+') return false;
    errno = 0;
    char* end = nullptr;
    unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (errno != 0 || end == s.c_str() || *end != '\0') return false;
    out = v;
    return true;
}

bool parse_i64(const std::string& s, int64_t& out) {
    if (s.empty()) return false;
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno != 0 || end == s.c_str() || *end != '\0') return false;
    out = v;
    return true;
}

bool parse_double(const std::string& s, double& out) {
    if (s.empty()) return false;
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (errno != 0 || end == s.c_str() || *end != '\0') return false;
    out = v;
    return true;
}

SimConfig parse_args(int argc, char** argv) {
    SimConfig cfg;
    bool have_port = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(kUsage, stdout);
            std::exit(0);
        }
        if (arg == "--quiet") {
            cfg.quiet = true;
            continue;
        }
        if (arg == "--archive") {
            cfg.archive = true;
            continue;
        }
        if (arg.compare(0, 2, "--") != 0) usage_error("unexpected argument '" + arg + "'");
        std::string value;
        size_t eq = arg.find('=');
        if (eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        } else {
            if (i + 1 >= argc) usage_error("missing value for " + arg);
            value = argv[++i];
        }
        uint64_t u = 0;
        auto need_u64 = [&](uint64_t& field) {
            if (!parse_u64(value, u)) usage_error("invalid value for " + arg + ": '" + value + "'");
            field = u;
        };
        if (arg == "--port") {
            uint64_t port = 0;
            need_u64(port);
            if (port == 0 || port > 65535) usage_error("--port must be 1..65535");
            cfg.port = static_cast<int>(port);
            have_port = true;
        } else if (arg == "--ws-port") {
            uint64_t port = 0;
            need_u64(port);
            if (port == 0 || port > 65535) usage_error("--ws-port must be 1..65535");
            cfg.ws_port = static_cast<int>(port);
        } else if (arg == "--host") {
            if (value.empty()) usage_error("--host must not be empty");
            cfg.host = value;
        } else if (arg == "--cluster") {
            if (value != "mainnet-beta" && value != "devnet" && value != "testnet") {
                usage_error("--cluster must be mainnet-beta, devnet or testnet");
            }
            cfg.cluster = value;
        } else if (arg == "--slot-ms") {
            need_u64(cfg.slot_ms);
            if (cfg.slot_ms == 0 || cfg.slot_ms > 3600000) usage_error("--slot-ms must be 1..3600000");
        } else if (arg == "--skip-rate") {
            // Above 0.9 the chain would be mostly holes; keep it meaningful.
            if (!parse_double(value, cfg.skip_rate) || !(cfg.skip_rate >= 0.0 && cfg.skip_rate <= 0.9)) {
                usage_error("--skip-rate must be a number in 0..0.9");
            }
        } else if (arg == "--start-slot") {
            need_u64(cfg.start_slot);
            if (cfg.start_slot > (1ULL << 62)) usage_error("--start-slot too large");
        } else if (arg == "--anchor-ms") {
            if (!parse_i64(value, cfg.anchor_ms) || cfg.anchor_ms < 0) usage_error("invalid --anchor-ms");
        } else if (arg == "--finalized-lag") {
            need_u64(cfg.finalized_lag);
        } else if (arg == "--block-bytes") {
            need_u64(cfg.block_bytes);
            if (cfg.block_bytes > 256ULL * 1024 * 1024) usage_error("--block-bytes must be <= 268435456");
        } else if (arg == "--first-available-block") {
            need_u64(cfg.first_available_block);
        } else if (arg == "--seed") {
            need_u64(cfg.seed);
        } else if (arg == "--getblock-latency-ms") {
            need_u64(cfg.getblock_latency_ms);
            if (cfg.getblock_latency_ms > 600000) usage_error("--getblock-latency-ms must be <= 600000");
        } else if (arg == "--getblock-failure-rate") {
            if (!parse_double(value, cfg.getblock_failure_rate) ||
                !(cfg.getblock_failure_rate >= 0.0 && cfg.getblock_failure_rate <= 1.0)) {
                usage_error("--getblock-failure-rate must be a number in 0..1");
            }
        } else if (arg == "--name") {
            if (value.empty()) usage_error("--name must not be empty");
            cfg.name = value;
        } else {
            usage_error("unknown flag " + arg);
        }
    }
    if (!have_port) usage_error("--port is required");
    if (cfg.ws_port == cfg.port) usage_error("--ws-port must differ from --port");
    if (cfg.name.empty()) cfg.name = "sim-" + std::to_string(cfg.port);
    return cfg;
}

struct App {
    solsim::HttpServer* server = nullptr;
    solsim::HttpServer* ws_server = nullptr;
    solsim::SimNode* node = nullptr;
    uv_signal_t sigint;
    uv_signal_t sigterm;
    bool stopping = false;
    bool quiet = false;
    std::string name;
};

void on_signal(uv_signal_t* handle, int signum) {
    auto* app = static_cast<App*>(handle->data);
    if (app->stopping) return;
    app->stopping = true;
    if (!app->quiet) std::fprintf(stderr, "solana-sim %s: signal %d, shutting down\n", app->name.c_str(), signum);
    // Closing every handle lets uv_run return, so teardown is orderly.
    app->server->close_all();
    if (app->ws_server != nullptr) app->ws_server->close_all();
    app->node->stop_pubsub();
    uv_close(reinterpret_cast<uv_handle_t*>(&app->sigint), nullptr);
    uv_close(reinterpret_cast<uv_handle_t*>(&app->sigterm), nullptr);
}

int run(int argc, char** argv) {
    const SimConfig cfg = parse_args(argc, argv);
    // A peer resetting mid-write must surface as EPIPE, not kill the process.
    std::signal(SIGPIPE, SIG_IGN);

    uv_loop_t loop;
    uv_loop_init(&loop);
    solsim::SimNode node(cfg);
    solsim::HttpServer server(&loop, [&node](const solsim::HttpRequest& r) { return node.handle(r); }, cfg.quiet);

    solsim::HttpServer ws_server(&loop, [&node](const solsim::HttpRequest& r) { return node.handle(r); }, cfg.quiet);
    if (cfg.ws_port != 0) ws_server.set_websocket_handler(&node.start_pubsub(&loop));

    int port = cfg.port;
    int rc = server.listen(cfg.host, port);
    if (rc == 0 && cfg.ws_port != 0) rc = ws_server.listen(cfg.host, port = cfg.ws_port);
    if (rc != 0) {
        std::fprintf(stderr, "solana-sim %s: cannot listen on %s:%d: %s\n", cfg.name.c_str(), cfg.host.c_str(),
                     port, uv_strerror(rc));
        server.close_all();
        ws_server.close_all();
        node.stop_pubsub();
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_loop_close(&loop);
        return 1;
    }

    App app;
    app.server = &server;
    app.ws_server = cfg.ws_port != 0 ? &ws_server : nullptr;
    app.node = &node;
    app.quiet = cfg.quiet;
    app.name = cfg.name;
    uv_signal_init(&loop, &app.sigint);
    uv_signal_init(&loop, &app.sigterm);
    app.sigint.data = &app;
    app.sigterm.data = &app;
    uv_signal_start(&app.sigint, on_signal, SIGINT);
    uv_signal_start(&app.sigterm, on_signal, SIGTERM);

    const std::string pubsub = cfg.ws_port != 0 ? " pubsub=" + std::to_string(cfg.ws_port) : "";
    std::fprintf(stderr, "solana-sim %s listening on %s:%d cluster=%s slot-ms=%llu%s%s\n", cfg.name.c_str(),
                 cfg.host.c_str(), cfg.port, cfg.cluster.c_str(), static_cast<unsigned long long>(cfg.slot_ms),
                 cfg.archive ? " archive" : "", pubsub.c_str());
    std::fflush(stderr);

    uv_run(&loop, UV_RUN_DEFAULT);
    uv_loop_close(&loop);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "solana-sim: fatal: %s\n", e.what());
    } catch (...) {
        std::fprintf(stderr, "solana-sim: fatal: unknown exception\n");
    }
    return 1;
}
