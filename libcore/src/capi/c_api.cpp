// The extern "C" shims. Every entry point catches everything: an exception
// must never unwind into nginx. Failures return SG_ERROR (or NULL) and the
// module answers 500: a request Solgate could not judge is not forwarded.
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "rpc/cluster.h"
#include "json/json_writer.h"
#include "routing/network.h"
#include "runtime/poller_job.h"
#include "slots/response_hook.h"
#include "routing/route_plan.h"
#include "routing/router.h"
#include "routing/selector.h"
#include "rpc/rpc_request.h"
#include "solgate/solgate.h"
#include "status/status_render.h"

#include "capi/c_api_util.h"
#include "capi/c_handles.h"

struct sg_response_s {
    std::unique_ptr<solgate::ResponseHook> hook;
    std::string rewritten;  // backs the rewritten body
};

struct sg_poller_s {
    std::unique_ptr<solgate::PollerThread> thread;
};

namespace {

using solgate::Network;
using solgate::capi::CopyError;
using solgate::capi::RunReporting;
using solgate::capi::ToMallocText;
using solgate::capi::ToStr;
using solgate::capi::View;

sg_route_t Answer(unsigned status, const std::string& body) {
    sg_route_t route;
    route.kind = SG_ROUTE_ANSWER;
    route.http_status = status;
    route.body = ToStr(body);
    return route;
}

std::vector<std::string> Split(sg_str_t list, char separator) {
    std::vector<std::string> items;
    std::string_view rest = View(list);
    while (!rest.empty()) {
        size_t end = rest.find(separator);
        std::string_view item = rest.substr(0, end);
        if (!item.empty()) {
            items.emplace_back(item);
        }
        rest = end == std::string_view::npos ? std::string_view()
                                             : rest.substr(end + 1);
    }
    return items;
}

std::vector<const Network*> Networks(sg_network_t* const* nets, size_t n) {
    std::vector<const Network*> out;
    for (size_t i = 0; i < n; i++) {
        out.push_back(&nets[i]->network);
    }
    return out;
}

}  // namespace

extern "C" {

int sg_cluster_parse(const char* name, size_t len, sg_cluster_t* out) {
    auto cluster = solgate::ParseCluster({name, len});
    if (!cluster) {
        return SG_DECLINED;
    }
    *out = *cluster;
    return SG_OK;
}

sg_str_t sg_cluster_name(sg_cluster_t cluster) {
    return ToStr(solgate::ClusterName(cluster));
}

sg_str_t sg_cluster_genesis_hash(sg_cluster_t cluster) {
    return ToStr(solgate::GenesisHash(cluster));
}

int sg_commitment_parse(const char* name, size_t len, sg_commitment_t* out) {
    auto level = solgate::ParseCommitment({name, len});
    if (!level) {
        return SG_DECLINED;
    }
    *out = *level;
    return SG_OK;
}

sg_str_t sg_commitment_name(sg_commitment_t commitment) {
    return ToStr(solgate::CommitmentName(commitment));
}

sg_network_t* sg_network_new(const char* name, size_t name_len,
                             const sg_network_conf_t* conf) {
    try {
        solgate::NetworkSettings settings;
        settings.cluster = conf->cluster;
        settings.default_commitment = conf->default_commitment;
        settings.debounce_ms = conf->debounce_ms;
        settings.max_finalized_slot_lag = conf->max_finalized_slot_lag;
        settings.enforce_block_availability =
            conf->enforce_block_availability != 0;
        return new sg_network_s{Network(std::string(name, name_len), settings)};
    } catch (...) {
        return nullptr;
    }
}

void sg_network_free(sg_network_t* net) { delete net; }

int sg_network_add_upstream(sg_network_t* net,
                            const sg_upstream_conf_t* upstream) {
    try {
        solgate::UpstreamConf conf;
        conf.id = std::string(View(upstream->id));
        conf.poll.url = std::string(View(upstream->poll_url));
        conf.poll.host_header = std::string(View(upstream->host_header));
        conf.poll.connect_to = std::string(View(upstream->connect_to));
        conf.tags = Split(upstream->tags, ',');
        conf.methods = Split(upstream->methods, '|');
        conf.ignore_methods = Split(upstream->ignore_methods, '|');
        net->network.AddUpstream(std::move(conf));
        return SG_OK;
    } catch (...) {
        return SG_ERROR;
    }
}

const char* sg_selector_check(const char* text, size_t len) {
    static thread_local std::string message;
    try {
        if (solgate::Selector::Parse({text, len}, &message)) {
            return nullptr;
        }
        return message.c_str();
    } catch (...) {
        return "out of memory";
    }
}

size_t sg_network_shared_size(void) { return sizeof(solgate::NetworkShared); }

int sg_network_bind(sg_network_t* net, void* shared, int fresh, int64_t now_ms,
                    char* err, size_t err_size) {
    return RunReporting(err, err_size, SG_ERROR, [&](std::string* error) {
        return net->network.Bind(shared, fresh != 0, now_ms, error);
    });
}

sg_request_t* sg_request_parse(const char* body, size_t len) {
    try {
        auto* req = new sg_request_s;
        req->parsed = solgate::ParseRpcRequest(body, len);
        return req;
    } catch (...) {
        return nullptr;
    }
}

void sg_request_free(sg_request_t* req) { delete req; }

int sg_request_route(sg_request_t* req, const sg_network_t* net,
                     sg_str_t selector, int64_t now_ms, sg_route_t* out) {
    try {
        req->plan = solgate::PlanRoute(net->network, req->parsed, View(selector));
        solgate::RouteDecision decision = solgate::RouteRequest(
            req->parsed, net->network, req->plan, now_ms);
        if (decision.forward) {
            *out = sg_route_t{SG_ROUTE_FORWARD, 0, {nullptr, 0}};
            return SG_OK;
        }
        req->answer = std::move(decision.answer);
        *out = Answer(decision.http_status, req->answer);
        return SG_OK;
    } catch (...) {
        return SG_ERROR;
    }
}

int sg_network_pick(const sg_network_t* net, const sg_request_t* req,
                    const unsigned char* tried, size_t* picked,
                    int* all_cordoned) {
    try {
        std::optional<uint64_t> min_context_slot;
        const auto& parsed = req->parsed;
        if (parsed.shape == solgate::RpcRequest::Shape::kSingle) {
            min_context_slot = parsed.calls[0].min_context_slot;
        }
        bool all = false;
        auto index = net->network.Pick(tried, min_context_slot, &all,
                                       &req->plan.allowed);
        *all_cordoned = all ? 1 : 0;
        if (all && index) {
            net->network.shared().all_cordoned_fallbacks.fetch_add(1);
        }
        if (!index) {
            return SG_DECLINED;
        }
        *picked = *index;
        return SG_OK;
    } catch (...) {
        return SG_ERROR;
    }
}

int sg_request_fail(sg_request_t* req, unsigned http_status, int code,
                    const char* message, size_t message_len,
                    sg_route_t* out) {
    try {
        req->answer =
            solgate::FailRequest(req->parsed, code, {message, message_len});
        *out = Answer(http_status, req->answer);
        return SG_OK;
    } catch (...) {
        return SG_ERROR;
    }
}

sg_str_t sg_request_lane(const sg_request_t* req) {
    return ToStr(req->plan.lane_name);
}

sg_str_t sg_request_method(const sg_request_t* req) {
    return ToStr(solgate::RequestMethodName(req->parsed));
}

size_t sg_request_call_count(const sg_request_t* req) {
    return req->parsed.calls.size();
}

size_t sg_write_error(char* buf, size_t size, int code, const char* message,
                      size_t message_len) {
    try {
        std::string out;
        solgate::AppendErrorEnvelope(out, {}, code, {message, message_len});
        if (out.size() > size) {
            return 0;
        }
        std::memcpy(buf, out.data(), out.size());
        return out.size();
    } catch (...) {
        return 0;
    }
}

sg_response_t* sg_response_new(const sg_network_t* net,
                               const sg_request_t* req, size_t upstream) {
    try {
        auto hook = solgate::ResponseHook::For(net->network, req->parsed,
                                               req->plan, upstream);
        if (!hook) {
            return nullptr;
        }
        return new sg_response_s{std::move(hook), {}};
    } catch (...) {
        return nullptr;
    }
}

sg_response_kind_t sg_response_kind(const sg_response_t* resp) {
    return resp->hook->kind() == solgate::ResponseHook::Kind::kRewriteSlot
               ? SG_RESPONSE_REWRITE
               : SG_RESPONSE_HARVEST;
}

int sg_response_feed(sg_response_t* resp, const char* data, size_t len,
                     int64_t now_ms) {
    try {
        return resp->hook->Feed(data, len, now_ms) ? SG_OK : SG_DECLINED;
    } catch (...) {
        return SG_OK;  // stop feeding; the response itself is unaffected
    }
}

void sg_response_finish(sg_response_t* resp, int64_t now_ms) {
    try {
        resp->hook->Finish(now_ms);
    } catch (...) {
    }
}

int sg_response_rewrite(sg_response_t* resp, const char* body, size_t len,
                        int64_t now_ms, sg_str_t* out, uint64_t* from,
                        uint64_t* to) {
    try {
        auto correction = resp->hook->Rewrite({body, len}, now_ms);
        if (!correction) {
            return SG_DECLINED;
        }
        resp->rewritten = std::move(correction->body);
        *out = ToStr(resp->rewritten);
        *from = correction->from;
        *to = correction->to;
        return SG_OK;
    } catch (...) {
        return SG_DECLINED;
    }
}

void sg_response_free(sg_response_t* resp) { delete resp; }

sg_poller_t* sg_poller_start(sg_network_t* const* nets, size_t n, uint32_t pid,
                             sg_log_pt log, void* user, char* err,
                             size_t err_size) {
    try {
        solgate::LogSink sink = [log, user](int level, const std::string& line) {
            log(user, level, line.data(), line.size());
        };
        std::string error;
        auto thread =
            solgate::StartPoller(Networks(nets, n), pid, std::move(sink), &error);
        if (!thread) {
            CopyError(error, err, err_size);
            return nullptr;
        }
        return new sg_poller_s{std::move(thread)};
    } catch (...) {
        CopyError("out of memory", err, err_size);
        return nullptr;
    }
}

void sg_poller_stop(sg_poller_t* poller) {
    try {
        if (poller != nullptr) {
            poller->thread->Stop();
        }
    } catch (...) {
    }
    delete poller;
}

int sg_network_cordon(sg_network_t* net, sg_str_t id, sg_str_t reason) {
    try {
        auto index = net->network.FindUpstream(View(id));
        if (!index) {
            return SG_DECLINED;
        }
        solgate::UpstreamSlot& slot = net->network.slot(*index);
        solgate::SystemClock clock;
        // Operators type reasons into URLs: keep printable ASCII only, so the
        // reason is always valid in JSON and in Prometheus labels.
        std::string text(View(reason));
        for (char& c : text) {
            if (c < 0x20 || c > 0x7e) c = '?';
        }
        slot.cordon_note.Write(text.empty() ? "cordoned by the operator" : text);
        // The operator's cordon replaces the poller's; it is never lifted
        // by the poller.
        solgate::CordonState next{solgate::CordonOwner::kOperator,
                                  solgate::CordonCause::kOperator,
                                  clock.WallMs()};
        for (auto owner : {solgate::CordonOwner::kNone,
                           solgate::CordonOwner::kPoller,
                           solgate::CordonOwner::kOperator}) {
            if (slot.SwapCordon(owner, next)) {
                slot.cordon_events.fetch_add(1);
                break;
            }
        }
        return SG_OK;
    } catch (...) {
        return SG_ERROR;
    }
}

int sg_network_uncordon(sg_network_t* net, sg_str_t id) {
    try {
        auto index = net->network.FindUpstream(View(id));
        if (!index) {
            return SG_DECLINED;
        }
        solgate::UpstreamSlot& slot = net->network.slot(*index);
        for (auto owner : {solgate::CordonOwner::kOperator,
                           solgate::CordonOwner::kPoller}) {
            slot.SwapCordon(owner, solgate::CordonState{});
        }
        return SG_OK;
    } catch (...) {
        return SG_ERROR;
    }
}

char* sg_render_state(sg_network_t* const* nets, size_t n, size_t* len) {
    try {
        solgate::SystemClock clock;
        return ToMallocText(solgate::RenderState(Networks(nets, n),
                                                 clock.MonotonicMs(),
                                                 clock.WallMs()),
                            len);
    } catch (...) {
        return nullptr;
    }
}

char* sg_render_metrics(sg_network_t* const* nets, size_t n, size_t* len) {
    try {
        solgate::SystemClock clock;
        return ToMallocText(
            solgate::RenderMetrics(Networks(nets, n), clock.MonotonicMs()), len);
    } catch (...) {
        return nullptr;
    }
}

void sg_text_free(char* text) { std::free(text); }

const char* sg_version(void) { return SOLGATE_VERSION; }

}  // extern "C"
