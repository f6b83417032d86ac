// The extern "C" shims of Cube Runner. They translate and nothing more:
// what is valid is BlockConfBuilder's to say, what is answered and what is
// cached BlockService's. Configuration and the request path fail closed;
// counting and caching fail open (the answer goes out regardless).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blocks/block_capture.h"
#include "blocks/block_conf.h"
#include "blocks/block_service.h"
#include "capi/c_api_util.h"
#include "capi/c_handles.h"
#include "solgate/solgate.h"

// Configured between sg_blocks_new and sg_blocks_attach (the builder),
// served from then on (the service).
struct sg_blocks_s {
    std::unique_ptr<solgate::BlockConfBuilder> builder =
        std::make_unique<solgate::BlockConfBuilder>();
    std::unique_ptr<solgate::BlockService> service;
};

struct sg_block_call_s {
    solgate::BlockCall call;
    solgate::BlockDecision decision;   // backs the strings handed out
    std::string id;
};

struct sg_capture_s {
    std::unique_ptr<solgate::BlockCapture> capture;
    solgate::BlockService* service;    // commits it
};

namespace {

using solgate::BlockDecision;
using solgate::capi::Configure;
using solgate::capi::BlockServers;
using solgate::capi::CopyError;
using solgate::capi::Guard;
using solgate::capi::NullArgument;
using solgate::capi::RunReporting;
using solgate::capi::ToStr;
using solgate::capi::View;
using solgate::capi::Views;

// Fills *out from the call's decision; the strings stay owned by the call.
void Export(sg_block_call_s* call, sg_blocks_decision_t* out) {
    const BlockDecision& d = call->decision;
    std::memset(out, 0, sizeof(*out));
    switch (d.kind) {
    case BlockDecision::kPass:
        out->action = SG_BLOCKS_PASS;
        return;
    case BlockDecision::kAnswer:
        out->action = SG_BLOCKS_ANSWER;
        out->http_status = d.http_status;
        out->retry_after = d.retry_after_s;
        out->body = ToStr(d.body);
        return;
    case BlockDecision::kCache:
        out->action = SG_BLOCKS_CACHE;
        out->http_status = 200;
        out->path = ToStr(d.path);
        out->size = d.record.bytes;
        out->file_id = d.record.file_id;
        out->id_offset = d.record.id_offset;
        out->id_length = d.record.id_length;
        call->id = call->call.id_raw.empty() ? "null" : call->call.id_raw;
        out->id = ToStr(call->id);
        return;
    case BlockDecision::kLedger:
        out->action = SG_BLOCKS_LEDGER;
        out->body = ToStr(d.body);
        return;
    case BlockDecision::kPeer:
        out->action = SG_BLOCKS_PEER;
        out->body = ToStr(d.body);
        out->peer = d.peer;
        return;
    case BlockDecision::kWait:
        out->action = SG_BLOCKS_WAIT;
        out->wait_ms = static_cast<uint64_t>(d.wait_ms);
        return;
    }
}

// One directive of the block: the builder's refusal, or that the block is
// already attached (and frozen).
template <typename Step>
int Directive(sg_blocks_t* blocks, char* err, size_t err_size,
              Step&& step) noexcept {
    if (blocks == nullptr) {
        return NullArgument(err, err_size);
    }
    return Configure(err, err_size, [&]() -> std::optional<std::string> {
        if (blocks->builder == nullptr) {
            return std::string("solgate_blocks is already attached");
        }
        return step(*blocks->builder);
    });
}

bool Attached(const sg_blocks_t* blocks, std::string* error) {
    if (blocks == nullptr || blocks->service == nullptr) {
        *error = "not attached to a network";
        return false;
    }
    return true;
}

}  // namespace

extern "C" {

int sg_blocks_new(sg_blocks_t** out) noexcept {
    if (out == nullptr) {
        return SG_INVALID;
    }
    *out = nullptr;
    return Guard(SG_ERROR, [&] {
        *out = new sg_blocks_s;
        return SG_OK;
    });
}

void sg_blocks_free(sg_blocks_t* blocks) noexcept { delete blocks; }

int sg_blocks_set_region(sg_blocks_t* blocks, sg_str_t name, char* err,
                         size_t err_size) noexcept {
    return Directive(blocks, err, err_size, [&](solgate::BlockConfBuilder& b) {
        return b.Region(View(name));
    });
}

int sg_blocks_set_cache(sg_blocks_t* blocks, sg_str_t dir, uint64_t max_size,
                        char* err, size_t err_size) noexcept {
    return Directive(blocks, err, err_size,
                     [&](solgate::BlockConfBuilder& b) {
                         auto bad = b.Cache(View(dir));
                         return bad ? bad : b.MaxSize(max_size);
                     });
}

int sg_blocks_set_state(sg_blocks_t* blocks, sg_str_t dir, char* err,
                        size_t err_size) noexcept {
    return Directive(blocks, err, err_size, [&](solgate::BlockConfBuilder& b) {
        return b.State(View(dir));
    });
}

int sg_blocks_set_keyless_plan(sg_blocks_t* blocks, sg_str_t name,
                               char* err, size_t err_size) noexcept {
    return Directive(blocks, err, err_size, [&](solgate::BlockConfBuilder& b) {
        return b.KeylessPlan(View(name));
    });
}

int sg_blocks_set_cache_lock_timeout(sg_blocks_t* blocks, sg_str_t time,
                                     char* err, size_t err_size) noexcept {
    return Directive(blocks, err, err_size, [&](solgate::BlockConfBuilder& b) {
        return b.CacheLockTimeout(View(time));
    });
}

int sg_blocks_set_peer_token(sg_blocks_t* blocks, sg_str_t token, char* err,
                             size_t err_size) noexcept {
    return Directive(blocks, err, err_size, [&](solgate::BlockConfBuilder& b) {
        return b.PeerToken(View(token));
    });
}

int sg_blocks_add_peer(sg_blocks_t* blocks, const sg_str_t* args,
                       size_t nargs, sg_upstream_info_t* info, char* err,
                       size_t err_size) noexcept {
    if (info == nullptr || (args == nullptr && nargs > 0)) {
        return NullArgument(err, err_size);
    }
    return Directive(blocks, err, err_size,
                     [&](solgate::BlockConfBuilder& b)
                         -> std::optional<std::string> {
                         if (auto bad = b.PeerArgs(Views(args, nargs))) {
                             return bad;
                         }
                         const solgate::BlockPeer& peer = b.last_peer();
                         *info = sg_upstream_info_t{};   // no ws=, no block
                         info->id = ToStr(peer.name);
                         info->url = ToStr(peer.target.url);
                         info->host = ToStr(peer.target.host);
                         info->authority = ToStr(peer.target.authority);
                         return std::nullopt;
                     });
}

int sg_blocks_add_long_term(sg_blocks_t* blocks, sg_str_t url, char* err,
                            size_t err_size) noexcept {
    return Directive(blocks, err, err_size, [&](solgate::BlockConfBuilder& b) {
        return b.LongTermStorage(View(url));
    });
}

sg_str_t sg_blocks_long_term_authority(const sg_blocks_t* blocks,
                                       size_t i) noexcept {
    if (blocks == nullptr || blocks->builder == nullptr) {
        return ToStr("");
    }
    return ToStr(blocks->builder->LongTermAuthority(i));
}

int sg_blocks_long_term_through_block(sg_blocks_t* blocks, size_t i,
                                      const sg_block_server_t* servers,
                                      size_t n, char* err,
                                      size_t err_size) noexcept {
    if (servers == nullptr || n == 0) {
        return NullArgument(err, err_size);
    }
    return Directive(blocks, err, err_size, [&](solgate::BlockConfBuilder& b) {
        return b.LongTermThroughBlock(i, BlockServers(servers, n));
    });
}

int sg_blocks_peer_through_block(sg_blocks_t* blocks, size_t peer,
                                 const sg_block_server_t* servers, size_t n,
                                 char* err, size_t err_size) noexcept {
    if (servers == nullptr || n == 0) {
        return NullArgument(err, err_size);
    }
    return Directive(blocks, err, err_size, [&](solgate::BlockConfBuilder& b) {
        return b.PeerThroughBlock(peer, BlockServers(servers, n));
    });
}

int sg_blocks_define_plan(sg_blocks_t* blocks, const sg_str_t* args,
                          size_t nargs, char* err, size_t err_size) noexcept {
    if (args == nullptr || nargs == 0) {
        CopyError("\"plan_define\" needs a plan name", err, err_size);
        return SG_INVALID;
    }
    return Directive(blocks, err, err_size, [&](solgate::BlockConfBuilder& b) {
        std::vector<std::string_view> list = Views(args + 1, nargs - 1);
        return b.PlanDefine(View(args[0]), list);
    });
}

int sg_blocks_check(const sg_blocks_t* blocks, int has_api_key,
                    int has_plan, char* err, size_t err_size) noexcept {
    if (blocks == nullptr || blocks->builder == nullptr) {
        return NullArgument(err, err_size);
    }
    return Configure(err, err_size, [&] {
        return blocks->builder->Check(has_api_key != 0, has_plan != 0);
    });
}

int sg_blocks_attach(sg_blocks_t* blocks, sg_network_t* net, char* err,
                     size_t err_size) noexcept {
    if (net == nullptr) {
        return NullArgument(err, err_size);
    }
    return Directive(blocks, err, err_size,
                     [&](solgate::BlockConfBuilder& b)
                         -> std::optional<std::string> {
                         solgate::BlockServiceConf frozen;
                         if (auto bad = b.Build(&frozen)) {
                             return bad;
                         }
                         blocks->service =
                             std::make_unique<solgate::BlockService>(
                                 std::move(frozen), net->network);
                         blocks->builder.reset();
                         return std::nullopt;
                     });
}

size_t sg_blocks_shared_size(const sg_blocks_t* blocks) noexcept {
    // Known once the configuration is whole, at sg_blocks_attach.
    return blocks != nullptr && blocks->service
               ? solgate::BlocksSharedSize(blocks->service->conf())
               : 0;
}

int sg_blocks_bind(sg_blocks_t* blocks, void* shared, int fresh, char* err,
                   size_t err_size) noexcept {
    return RunReporting(err, err_size, SG_ERROR, [&](std::string* error) {
        return Attached(blocks, error) &&
               blocks->service->Bind(shared, fresh != 0, error);
    });
}

int sg_blocks_open(sg_blocks_t* blocks, int reconcile, char* err,
                   size_t err_size) noexcept {
    return RunReporting(err, err_size, SG_ERROR, [&](std::string* error) {
        return Attached(blocks, error) &&
               blocks->service->OpenStore(reconcile != 0, error);
    });
}

void sg_blocks_opening(const sg_blocks_t* blocks,
                       sg_blocks_opening_t* out) noexcept {
    if (out == nullptr) {
        return;
    }
    *out = sg_blocks_opening_t{};
    if (blocks == nullptr || !blocks->service) {
        return;
    }
    const solgate::BlockStore::Opening& cache =
        blocks->service->cache().opening();
    out->reconciled = cache.reconciled ? 1 : 0;
    out->items_removed = cache.items_removed;
    out->entries_dropped = cache.entries_dropped;
    out->entries_kept = cache.entries_kept;
    out->index_damage = ToStr(cache.damage);
    out->ledger_damage = ToStr(blocks->service->LedgerDamage());
}

void sg_blocks_close(sg_blocks_t* blocks) noexcept {
    if (blocks == nullptr || !blocks->service) {
        return;
    }
    Guard(SG_OK, [&] {
        blocks->service->CloseStore();
        return SG_OK;
    });
}

int sg_blocks_decide(sg_blocks_t* blocks, const sg_request_t* req,
                     sg_str_t api_key, sg_str_t plan, sg_str_t peer_token,
                     sg_str_t client, int may_wait, int64_t now_ms,
                     int64_t wall_ms, sg_block_call_t** call,
                     sg_blocks_decision_t* out) noexcept {
    if (blocks == nullptr || req == nullptr || call == nullptr ||
        out == nullptr) {
        return SG_INVALID;
    }
    *call = nullptr;
    return Guard(SG_ERROR, [&] {
        auto state = std::make_unique<sg_block_call_s>();
        state->call.may_wait = may_wait != 0;
        if (blocks->service) {
            state->decision = blocks->service->Decide(
                req->request.parsed(), View(api_key), View(plan),
                View(peer_token), now_ms, wall_ms, &state->call,
                View(client));
        }
        Export(state.get(), out);
        if (out->action != SG_BLOCKS_PASS) {
            *call = state.release();
        }
        return SG_OK;
    });
}

int sg_blocks_next(sg_blocks_t* blocks, sg_block_call_t* call,
                   int64_t now_ms, sg_blocks_decision_t* out) noexcept {
    if (blocks == nullptr || !blocks->service || call == nullptr ||
        out == nullptr) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        call->decision =
            blocks->service->AfterSourceFailure(&call->call, now_ms);
        Export(call, out);
        return SG_OK;
    });
}

int sg_blocks_recheck(sg_blocks_t* blocks, sg_block_call_t* call,
                      int64_t now_ms, sg_blocks_decision_t* out) noexcept {
    if (blocks == nullptr || !blocks->service || call == nullptr ||
        out == nullptr) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        call->decision = blocks->service->AfterWait(&call->call, now_ms);
        Export(call, out);
        return SG_OK;
    });
}

void sg_blocks_served(sg_blocks_t* blocks, sg_block_call_t* call,
                      int64_t wall_ms) noexcept {
    if (blocks == nullptr || !blocks->service || call == nullptr) {
        return;
    }
    Guard(SG_OK, [&] {
        blocks->service->CountServed(call->call, call->call.source, wall_ms);
        return SG_OK;
    });
}

void sg_block_call_free(sg_block_call_t* call) noexcept { delete call; }

int sg_capture_start(sg_blocks_t* blocks, sg_block_call_t* call,
                     int content_encoded, int64_t now_ms,
                     sg_capture_t** out) noexcept {
    if (out == nullptr) {
        return SG_INVALID;
    }
    *out = nullptr;
    if (blocks == nullptr || !blocks->service || call == nullptr) {
        return SG_NONE;
    }
    return Guard(SG_NONE, [&] {
        auto capture = blocks->service->StartCapture(call->call,
                                                     content_encoded != 0,
                                                     now_ms);
        if (!capture) {
            return SG_NONE;
        }
        *out = new sg_capture_s{std::move(capture), blocks->service.get()};
        return SG_OK;
    });
}

int sg_capture_write(sg_capture_t* capture, const char* data,
                     size_t len) noexcept {
    if (capture == nullptr || (data == nullptr && len > 0)) {
        return SG_NONE;
    }
    return Guard(SG_NONE, [&] {
        return capture->capture->Write(data, len) ? SG_OK : SG_NONE;
    });
}

void sg_capture_commit(sg_capture_t* capture, int64_t wall_ms) noexcept {
    std::unique_ptr<sg_capture_s> owned(capture);
    if (!owned) {
        return;
    }
    Guard(SG_OK, [&] {
        owned->service->CommitLater(std::move(owned->capture), wall_ms);
        return SG_OK;
    });
}

void sg_capture_free(sg_capture_t* capture) noexcept { delete capture; }

}  // extern "C"
