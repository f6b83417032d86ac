// The extern "C" shims of Cube Runner. As in c_api.cpp, every entry point
// catches everything; failures return SG_ERROR (or NULL). They translate
// and nothing more: what is valid is BlockConfBuilder's to say, what is
// answered and what is cached BlockService's.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "blocks/block_capture.h"
#include "blocks/block_conf.h"
#include "blocks/block_service.h"
#include "capi/c_api_util.h"
#include "capi/c_handles.h"
#include "solgate/solgate.h"

// Configured between sg_blocks_new and sg_blocks_attach (the builder),
// served from then on (the service).
struct sg_blocks_s {
    std::unique_ptr<solgate::BlockConfBuilder> builder;
    std::string default_peer_token;   // sg_blocks_new's
    std::unique_ptr<solgate::BlockService> service;
};

struct sg_block_call_s {
    solgate::BlockCall call;
    solgate::BlockDecision decision;   // backs the strings handed out
    std::string id;
};

struct sg_capture_s {
    std::unique_ptr<solgate::BlockCapture> capture;
};

namespace {

using solgate::BlockDecision;

using solgate::capi::RunReporting;
using solgate::capi::ToStr;
using solgate::capi::View;

// Fills *out from the call's decision; the strings stay owned by the call.
void Export(const solgate::BlockService& service, sg_block_call_s* call,
            sg_blocks_decision_t* out) {
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
        return;
    case BlockDecision::kPeer: {
        const solgate::BlockPeer& peer = service.conf().peers()[d.peer];
        out->action = SG_BLOCKS_PEER;
        out->peer_url = ToStr(peer.url);
        out->peer_name = ToStr(peer.name);
        out->peer_token = ToStr(service.conf().peer_token());
        return;
    }
    }
}

// One configuration step: its message in *error when it refuses, or
// because the block is already attached (and frozen).
template <typename Step>
bool Configure(sg_blocks_t* blocks, std::string* error, Step&& step) {
    if (blocks->builder == nullptr) {
        *error = "solgate_blocks is already attached";
        return false;
    }
    std::optional<std::string> bad = step(*blocks->builder);
    if (bad) {
        *error = std::move(*bad);
        return false;
    }
    return true;
}

bool Attached(const sg_blocks_t* blocks, std::string* error) {
    if (blocks->service == nullptr) {
        *error = "not attached to a network";
        return false;
    }
    return true;
}

// The settings sg_blocks_attach brings, then the frozen configuration.
std::optional<solgate::BlockServiceConf> Freeze(
    solgate::BlockConfBuilder& builder, const sg_blocks_conf_t& conf,
    const std::string& default_token) {
    std::string_view token = conf.peer_token.len > 0 ? View(conf.peer_token)
                                                     : default_token;
    solgate::BlockServiceConf frozen;
    if (builder.Region(View(conf.region)) ||
        builder.Cache(View(conf.cache_dir)) ||
        builder.State(View(conf.state_dir)) ||
        builder.MaxSize(conf.max_size) ||
        (!token.empty() && builder.PeerToken(token)) ||
        builder.Build(&frozen)) {
        return std::nullopt;
    }
    return frozen;
}

}  // namespace

extern "C" {

sg_blocks_t* sg_blocks_new(const sg_blocks_conf_t* conf) {
    try {
        auto blocks = std::make_unique<sg_blocks_s>();
        blocks->builder = std::make_unique<solgate::BlockConfBuilder>();
        blocks->default_peer_token = std::string(View(conf->peer_token));
        return blocks.release();
    } catch (...) {
        return nullptr;
    }
}

int sg_blocks_attach(sg_blocks_t* blocks, sg_network_t* net,
                     const sg_blocks_conf_t* conf) {
    try {
        if (blocks->builder == nullptr) {
            return SG_ERROR;
        }
        std::optional<solgate::BlockServiceConf> frozen =
            Freeze(*blocks->builder, *conf, blocks->default_peer_token);
        if (!frozen) {
            return SG_ERROR;
        }
        blocks->service = std::make_unique<solgate::BlockService>(
            std::move(*frozen), net->network);
        blocks->builder.reset();
        return SG_OK;
    } catch (...) {
        return SG_ERROR;
    }
}

void sg_blocks_free(sg_blocks_t* blocks) { delete blocks; }

int sg_blocks_add_peer(sg_blocks_t* blocks, sg_str_t name, sg_str_t url,
                       int copy, char* err, size_t err_size) {
    return RunReporting(err, err_size, SG_INVALID, [&](std::string* error) {
        return Configure(blocks, error, [&](solgate::BlockConfBuilder& b) {
            return b.Peer(View(name), View(url), copy != 0);
        });
    });
}

int sg_blocks_define_plan(sg_blocks_t* blocks, sg_str_t name,
                          const sg_str_t* args, size_t nargs, char* err,
                          size_t err_size) {
    return RunReporting(err, err_size, SG_INVALID, [&](std::string* error) {
        std::vector<std::string_view> list;
        for (size_t i = 0; i < nargs; i++) {
            list.push_back(View(args[i]));
        }
        return Configure(blocks, error, [&](solgate::BlockConfBuilder& b) {
            return b.PlanDefine(View(name), list);
        });
    });
}

int sg_blocks_add_long_term(sg_blocks_t* blocks, sg_str_t url, char* err,
                            size_t err_size) {
    return RunReporting(err, err_size, SG_INVALID, [&](std::string* error) {
        return Configure(blocks, error, [&](solgate::BlockConfBuilder& b) {
            return b.LongTermStorage(View(url));
        });
    });
}

size_t sg_blocks_shared_size(const sg_blocks_t* blocks) {
    // Known once the configuration is whole, at sg_blocks_attach.
    return blocks->service ? solgate::BlocksSharedSize(blocks->service->conf())
                           : 0;
}

int sg_blocks_bind(sg_blocks_t* blocks, void* shared, int fresh, char* err,
                   size_t err_size) {
    return RunReporting(err, err_size, SG_ERROR, [&](std::string* error) {
        return Attached(blocks, error) &&
               blocks->service->Bind(shared, fresh != 0, error);
    });
}

int sg_blocks_open(sg_blocks_t* blocks, int reconcile, char* err,
                   size_t err_size) {
    return RunReporting(err, err_size, SG_ERROR, [&](std::string* error) {
        return Attached(blocks, error) &&
               blocks->service->OpenStore(reconcile != 0, error);
    });
}

void sg_blocks_close(sg_blocks_t* blocks) {
    try {
        if (blocks->service) {
            blocks->service->CloseStore();
        }
    } catch (...) {
    }
}

int sg_blocks_decide(sg_blocks_t* blocks, const sg_request_t* req,
                     sg_str_t api_key, sg_str_t plan, sg_str_t peer_token,
                     int64_t now_ms, int64_t wall_ms, sg_block_call_t** call,
                     sg_blocks_decision_t* out) {
    try {
        auto state = std::make_unique<sg_block_call_s>();
        if (blocks->service) {
            state->decision = blocks->service->Decide(
                req->request.parsed(), View(api_key), View(plan), View(peer_token),
                now_ms, wall_ms, &state->call);
            Export(*blocks->service, state.get(), out);
        } else {
            std::memset(out, 0, sizeof(*out));
            out->action = SG_BLOCKS_PASS;
        }
        *call = out->action == SG_BLOCKS_PASS ? nullptr : state.release();
        return SG_OK;
    } catch (...) {
        return SG_ERROR;
    }
}

int sg_blocks_next(sg_blocks_t* blocks, sg_block_call_t* call,
                   int64_t now_ms, sg_blocks_decision_t* out) {
    try {
        call->decision =
            blocks->service->AfterPeerFailure(&call->call, now_ms);
        Export(*blocks->service, call, out);
        return SG_OK;
    } catch (...) {
        return SG_ERROR;
    }
}

void sg_blocks_served(sg_blocks_t* blocks, sg_block_call_t* call,
                      int64_t wall_ms) {
    try {
        blocks->service->CountServed(call->call, call->call.source, wall_ms);
    } catch (...) {
    }
}

void sg_block_call_free(sg_block_call_t* call) { delete call; }

sg_capture_t* sg_blocks_capture_start(sg_blocks_t* blocks,
                                      const sg_block_call_t* call,
                                      int64_t now_ms) {
    try {
        auto capture = blocks->service->StartCapture(call->call, now_ms);
        if (!capture) {
            return nullptr;
        }
        return new sg_capture_s{std::move(capture)};
    } catch (...) {
        return nullptr;
    }
}

int sg_capture_write(sg_capture_t* capture, const char* data, size_t len) {
    try {
        return capture->capture->Write(data, len) ? SG_OK : SG_INVALID;
    } catch (...) {
        return SG_ERROR;
    }
}

void sg_capture_commit(sg_blocks_t* blocks, sg_capture_t* capture,
                       int64_t wall_ms) {
    std::unique_ptr<sg_capture_s> owned(capture);
    try {
        blocks->service->CommitLater(std::move(owned->capture), wall_ms);
    } catch (...) {
    }
}

void sg_capture_free(sg_capture_t* capture) { delete capture; }

}  // extern "C"
