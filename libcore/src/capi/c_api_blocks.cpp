// The extern "C" shims of Cube Runner. As in c_api.cpp, every entry point
// catches everything; failures return SG_ERROR (or NULL).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "blocks/block_capture.h"
#include "blocks/block_service.h"
#include "capi/c_api_util.h"
#include "capi/c_handles.h"
#include "solgate/solgate.h"

struct sg_blocks_s {
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
        const solgate::BlockPeer& peer = service.conf().peers[d.peer];
        out->action = SG_BLOCKS_PEER;
        out->peer_url = ToStr(peer.url);
        out->peer_name = ToStr(peer.name);
        out->peer_token = ToStr(service.conf().peer_token);
        return;
    }
    }
}

}  // namespace

extern "C" {

sg_blocks_t* sg_blocks_new(const sg_blocks_conf_t* conf) {
    try {
        solgate::BlockServiceConf c;
        c.peer_token = std::string(View(conf->peer_token));
        auto* blocks = new sg_blocks_s;
        blocks->service = std::make_unique<solgate::BlockService>(std::move(c));
        return blocks;
    } catch (...) {
        return nullptr;
    }
}

int sg_blocks_attach(sg_blocks_t* blocks, sg_network_t* net,
                     const sg_blocks_conf_t* conf) {
    try {
        solgate::BlockServiceConf& c = blocks->service->mutable_conf();
        c.region = std::string(View(conf->region));
        c.cache_dir = std::string(View(conf->cache_dir));
        c.state_dir = std::string(View(conf->state_dir));
        c.max_bytes = conf->max_size;
        if (conf->peer_token.len > 0) {
            c.peer_token = std::string(View(conf->peer_token));
        }
        blocks->service->Attach(net->network);
        return SG_OK;
    } catch (...) {
        return SG_ERROR;
    }
}

void sg_blocks_free(sg_blocks_t* blocks) { delete blocks; }

int sg_blocks_add_peer(sg_blocks_t* blocks, sg_str_t name, sg_str_t url,
                       int copy, char* err, size_t err_size) {
    return RunReporting(err, err_size, SG_INVALID, [&](std::string* error) {
        auto& conf = blocks->service->mutable_conf();
        if (conf.peers.size() >= solgate::kMaxBlockPeers) {
            *error = "too many peers (at most " +
                     std::to_string(solgate::kMaxBlockPeers) + ")";
            return false;
        }
        conf.peers.push_back({std::string(View(name)),
                              std::string(View(url)), copy != 0});
        return true;
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
        solgate::BlockPlan plan;
        if (auto bad = solgate::ParsePlanDefine(View(name), list, &plan)) {
            *error = *bad;
            return false;
        }
        auto& plans = blocks->service->mutable_conf().plans;
        solgate::DefinePlan(&plans, std::move(plan));
        if (plans.size() > solgate::kMaxBlockPlans) {
            *error = "too many plans (at most " +
                     std::to_string(solgate::kMaxBlockPlans) + ")";
            return false;
        }
        return true;
    });
}

int sg_blocks_add_long_term(sg_blocks_t* blocks, sg_str_t url, char* err,
                            size_t err_size) {
    return RunReporting(err, err_size, SG_INVALID, [&](std::string* error) {
        auto& urls = blocks->service->mutable_conf().long_term_urls;
        if (urls.size() >= 8) {
            *error = "too many long_term_storage URLs (at most 8)";
            return false;
        }
        urls.emplace_back(View(url));
        return true;
    });
}

size_t sg_blocks_shared_size(const sg_blocks_t* blocks) {
    return solgate::BlocksSharedSize(blocks->service->conf());
}

int sg_blocks_bind(sg_blocks_t* blocks, void* shared, int fresh, char* err,
                   size_t err_size) {
    return RunReporting(err, err_size, SG_ERROR, [&](std::string* error) {
        return blocks->service->Bind(shared, fresh != 0, error);
    });
}

int sg_blocks_open(sg_blocks_t* blocks, int reconcile, char* err,
                   size_t err_size) {
    return RunReporting(err, err_size, SG_ERROR, [&](std::string* error) {
        return blocks->service->OpenStore(reconcile != 0, error);
    });
}

void sg_blocks_close(sg_blocks_t* blocks) {
    try {
        blocks->service->CloseStore();
    } catch (...) {
    }
}

int sg_blocks_decide(sg_blocks_t* blocks, const sg_request_t* req,
                     sg_str_t api_key, sg_str_t plan, sg_str_t peer_token,
                     int64_t now_ms, int64_t wall_ms, sg_block_call_t** call,
                     sg_blocks_decision_t* out) {
    try {
        auto state = std::make_unique<sg_block_call_s>();
        state->decision = blocks->service->Decide(
            req->request.parsed(), View(api_key), View(plan), View(peer_token), now_ms,
            wall_ms, &state->call);
        Export(*blocks->service, state.get(), out);
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
        const solgate::BlockCall& c = call->call;
        bool wanted = c.source == solgate::kSourceRegion ||
                      (c.source == solgate::kSourceLedger &&
                       blocks->service->Finalized(c.slot, now_ms));
        if (!wanted) {
            return nullptr;
        }
        auto capture = solgate::BlockCapture::Start(*blocks->service, c);
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
