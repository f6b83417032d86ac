// The extern "C" shims of what runs beside the requests: the poller thread
// and the operator's views (state JSON, metrics), plus the text and version
// helpers. Starting the poller fails closed (no thread is left behind);
// rendering fails closed (the module answers 500).
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <new>
#include <string>
#include <vector>

#include "capi/c_api_util.h"
#include "pubsub/ws_holders.h"
#include "capi/c_handles.h"
#include "fleet/fleet_conf.h"
#include "runtime/poller_job.h"
#include "solgate/solgate.h"
#include "status/admin_api.h"
#include "status/metrics_text.h"
#include "status/state_json.h"
#include "status/status_page.h"

struct sg_poller_s {
    std::unique_ptr<solgate::PollerThread> thread;
};

struct sg_fleet_s {
    solgate::FleetConf conf;
};

namespace {

using solgate::Network;
using solgate::capi::Configure;
using solgate::capi::CopyError;
using solgate::capi::Guard;
using solgate::capi::ToText;
using solgate::capi::Present;
using solgate::capi::View;
using solgate::capi::Views;

std::vector<const Network*> Networks(sg_network_t* const* nets, size_t n) {
    std::vector<const Network*> out;
    for (size_t i = 0; i < n; i++) {
        if (nets[i] != nullptr) {
            out.push_back(&nets[i]->network);
        }
    }
    return out;
}

}  // namespace

extern "C" {

void sg_text_free(sg_text_t* text) noexcept {
    if (text != nullptr) {
        std::free(text->data);
        *text = sg_text_t{nullptr, 0};
    }
}

const char* sg_version(void) noexcept { return SOLGATE_VERSION; }

int sg_fleet_check_host_id(sg_str_t host_id, char* err,
                           size_t err_size) noexcept {
    return Configure(err, err_size,
                     [&] { return solgate::CheckHostId(View(host_id)); });
}

int sg_fleet_new(const sg_str_t* args, size_t n, sg_str_t host_id,
                 sg_fleet_t** out, char* err, size_t err_size) noexcept {
    if (out == nullptr || (args == nullptr && n > 0)) {
        CopyError("no words or result", err, err_size);
        return SG_INVALID;
    }
    *out = nullptr;
    return Configure(err, err_size, [&]() -> std::optional<std::string> {
        auto fleet = std::make_unique<sg_fleet_s>();
        if (host_id.len > 0) {
            fleet->conf.host_id = std::string(View(host_id));
        } else {
            char name[256] = {0};
            gethostname(name, sizeof(name) - 1);
            fleet->conf.host_id = name[0] != '\0' ? name : "localhost";
        }
        if (auto error =
                solgate::ParseSharedState(Views(args, n), &fleet->conf)) {
            return error;
        }
        *out = fleet.release();
        return std::nullopt;
    });
}

void sg_fleet_free(sg_fleet_t* fleet) noexcept { delete fleet; }

int sg_poller_start(sg_network_t* const* nets, size_t n, uint32_t pid,
                    const sg_fleet_t* fleet, sg_log_pt log, void* user,
                    sg_poller_t** out, char* err, size_t err_size) noexcept {
    if (out == nullptr || log == nullptr || (nets == nullptr && n > 0)) {
        CopyError("no networks, log or result", err, err_size);
        return SG_INVALID;
    }
    *out = nullptr;
    try {
        solgate::LogSink sink = [log, user](int level,
                                            const std::string& line) {
            log(user, level, line.data(), line.size());
        };
        std::string error;
        auto thread = solgate::StartPoller(
            Networks(nets, n), pid, fleet != nullptr ? &fleet->conf : nullptr,
            std::move(sink), &error);
        if (!thread) {
            CopyError(error, err, err_size);
            return SG_ERROR;
        }
        *out = new sg_poller_s{std::move(thread)};
        return SG_OK;
    } catch (...) {
        CopyError("out of memory", err, err_size);
        return SG_ERROR;
    }
}

void sg_poller_stop(sg_poller_t* poller) noexcept {
    if (poller == nullptr) {
        return;
    }
    try {
        poller->thread->Stop();
    } catch (...) {
    }
    delete poller;
}

int sg_status_render_metrics(sg_network_t* const* nets, size_t n,
                             int64_t now_ms, sg_text_t* out) noexcept {
    if (out == nullptr || (nets == nullptr && n > 0)) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        std::vector<const solgate::Network*> networks = Networks(nets, n);
        // a killed worker's subscriptions are not shown open
        for (const solgate::Network* network : networks) {
            solgate::ReapWsHolders(*network);
        }
        return ToText(solgate::RenderMetrics(networks, now_ms), out);
    });
}

int sg_status_render_page(sg_network_t* const* nets, size_t n, int64_t now_ms,
                          int64_t wall_ms, sg_text_t* out) noexcept {
    if (out == nullptr || (nets == nullptr && n > 0)) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        return ToText(
            solgate::RenderStatusPage(Networks(nets, n), now_ms, wall_ms), out);
    });
}

int sg_admin_handle(sg_network_t* const* nets, size_t n,
                    const sg_admin_request_t* req, int64_t now_ms,
                    int64_t wall_ms, sg_admin_answer_t* out) noexcept {
    if (req == nullptr || out == nullptr || (nets == nullptr && n > 0)) {
        return SG_INVALID;
    }
    *out = sg_admin_answer_t{0, {nullptr, 0}, {nullptr, 0}, 0, {nullptr, 0}};
    return Guard(SG_ERROR, [&] {
        solgate::AdminRequest request;
        request.uri = View(req->uri);
        request.get = req->get != 0;
        request.post = req->post != 0;
        request.network = Present(req->has_network, req->network);
        request.upstream = Present(req->has_upstream, req->upstream);
        request.reason = Present(req->has_reason, req->reason);
        solgate::AdminAnswer answer =
            solgate::HandleAdmin(Networks(nets, n), request, now_ms, wall_ms);
        if (ToText(answer.body, &out->body) != SG_OK ||
            ToText(answer.log, &out->log) != SG_OK) {
            sg_text_free(&out->body);
            return SG_ERROR;
        }
        out->http_status = answer.http_status;
        out->log_level = answer.log_level;
        out->allow = sg_str_t{answer.allow.data(), answer.allow.size()};
        return SG_OK;
    });
}

}  // extern "C"
