// The extern "C" shims of a network: its configuration and its shared
// zone. They fail closed: nginx refuses the configuration.
#include <new>
#include <string>
#include <vector>

#include "capi/c_api_util.h"
#include "capi/c_handles.h"
#include "conf/conf_messages.h"
#include "conf/conf_words.h"
#include "solgate/solgate.h"
#include "status/health_answer.h"
#include "store/operator_state.h"
#include "store/state_file.h"

namespace {

using solgate::capi::Configure;
using solgate::capi::BlockServers;
using solgate::capi::CopyError;
using solgate::capi::Guard;
using solgate::capi::NullArgument;
using solgate::capi::RunReporting;
using solgate::capi::ToStr;
using solgate::capi::View;
using solgate::capi::Views;

// A one-word setting of the network, checked and kept by `set`.
int SetWord(sg_network_t* net, sg_str_t value, char* err, size_t err_size,
            std::optional<std::string> (solgate::Network::*set)(
                std::string_view)) noexcept {
    if (net == nullptr) {
        return NullArgument(err, err_size);
    }
    return Configure(err, err_size,
                     [&] { return (net->network.*set)(View(value)); });
}

void Describe(const solgate::UpstreamConf& u, sg_upstream_info_t* info) {
    info->id = ToStr(u.id);
    info->url = ToStr(u.proxy.url);
    info->host = ToStr(u.proxy.host);
    info->authority = ToStr(u.proxy.authority);
    info->ws_url = ToStr(u.pubsub.url);
    info->ws_host = ToStr(u.pubsub.host);
    info->ws_authority = ToStr(u.pubsub.authority);
    info->block_server = u.block_server;
    info->warning = ToStr("");
}

}  // namespace

extern "C" {

int sg_network_new(sg_str_t name, sg_network_t** out, char* err,
                   size_t err_size) noexcept {
    if (out == nullptr) {
        return NullArgument(err, err_size);
    }
    *out = nullptr;
    return Configure(err, err_size, [&]() -> std::optional<std::string> {
        if (auto bad = solgate::conf::CheckName(View(name))) {
            return "invalid network name \"" + std::string(View(name)) +
                   "\": " + std::string(*bad);
        }
        *out = new sg_network_s{
            solgate::Network(std::string(View(name)), {}), {}, {}};
        return std::nullopt;
    });
}

void sg_network_free(sg_network_t* net) noexcept { delete net; }

int sg_network_set_cluster(sg_network_t* net, sg_str_t value, char* err,
                           size_t err_size) noexcept {
    return SetWord(net, value, err, err_size, &solgate::Network::SetCluster);
}

int sg_network_set_commitment(sg_network_t* net, sg_str_t value, char* err,
                              size_t err_size) noexcept {
    return SetWord(net, value, err, err_size,
                   &solgate::Network::SetCommitment);
}

int sg_network_set_default_selector(sg_network_t* net, sg_str_t value,
                                    char* err, size_t err_size) noexcept {
    return SetWord(net, value, err, err_size,
                   &solgate::Network::SetDefaultSelector);
}

int sg_network_set_policy(sg_network_t* net, sg_str_t policy,
                          const sg_str_t* args, size_t nargs, char* err,
                          size_t err_size) noexcept {
    if (net == nullptr || (args == nullptr && nargs > 0)) {
        return NullArgument(err, err_size);
    }
    net->warning.clear();
    return Configure(err, err_size, [&]() -> std::optional<std::string> {
        std::string_view name = View(policy);
        if (auto error = net->network.SetPolicy(name, Views(args, nargs))) {
            return error;
        }
        const solgate::NetworkSettings& s = net->network.settings();
        const std::vector<std::string>& methods =
            name == "broadcast"   ? s.broadcast.methods
            : name == "consensus" ? s.consensus.methods
                                  : s.hedge.methods;
        net->warning =
            solgate::conf::PolicyMethodsWarning(name, methods).value_or("");
        return std::nullopt;
    });
}

sg_str_t sg_network_warning(const sg_network_t* net) noexcept {
    return net != nullptr ? ToStr(net->warning) : sg_str_t{nullptr, 0};
}

int sg_check_policy(sg_str_t policy, const sg_str_t* args, size_t nargs,
                    char* err, size_t err_size) noexcept {
    if (args == nullptr && nargs > 0) {
        return NullArgument(err, err_size);
    }
    return Configure(err, err_size, [&] {
        return solgate::Network::CheckPolicy(View(policy), Views(args, nargs));
    });
}

int sg_network_set_conf_prefix(sg_network_t* net, sg_str_t prefix, char* err,
                               size_t err_size) noexcept {
    if (net == nullptr) {
        return NullArgument(err, err_size);
    }
    return Configure(err, err_size, [&]() -> std::optional<std::string> {
        net->network.SetConfPrefix(View(prefix));
        return std::nullopt;
    });
}

int sg_network_add_upstream(sg_network_t* net, const sg_str_t* args,
                            size_t nargs, sg_upstream_info_t* info, char* err,
                            size_t err_size) noexcept {
    if (net == nullptr || (args == nullptr && nargs > 0) || info == nullptr) {
        return NullArgument(err, err_size);
    }
    return Configure(err, err_size, [&]() -> std::optional<std::string> {
        size_t index = 0;
        if (auto error =
                net->network.AddUpstreamArgs(Views(args, nargs), &index)) {
            return error;
        }
        const solgate::UpstreamConf& u = net->network.upstream(index);
        Describe(u, info);
        net->warning = solgate::conf::UnknownMethodsWarning(
                           u.id, u.methods, u.ignore_methods)
                           .value_or("");
        info->warning = ToStr(net->warning);
        return std::nullopt;
    });
}

int sg_network_reach_through_block(sg_network_t* net, size_t upstream,
                                   const sg_block_server_t* servers, size_t n,
                                   size_t* nodes, char* err,
                                   size_t err_size) noexcept {
    if (net == nullptr || servers == nullptr || n == 0 || nodes == nullptr) {
        return NullArgument(err, err_size);
    }
    if (upstream >= net->network.size()) {
        CopyError("no such upstream", err, err_size);
        return SG_INVALID;
    }
    return Configure(err, err_size, [&] {
        return net->network.ReachThroughBlock(upstream,
                                              BlockServers(servers, n), nodes);
    });
}

void sg_network_settings_default(sg_network_settings_t* out) noexcept {
    if (out == nullptr) {
        return;
    }
    *out = sg_network_settings_t{};
    out->debounce_ms = SG_DEFAULT_DEBOUNCE_MS;
    out->max_finalized_slot_lag = SG_DEFAULT_MAX_FINALIZED_LAG;
    out->enforce_block_availability = SG_DEFAULT_ENFORCE_BLOCK_AVAILABILITY;
    out->max_slot_lag = SG_DEFAULT_MAX_SLOT_LAG;
    out->use_upstream_from_client = SG_DEFAULT_USE_UPSTREAM_FROM_CLIENT;
    out->retry_missing_data = SG_DEFAULT_RETRY_MISSING_DATA;
    out->retry_attempts = SG_DEFAULT_RETRY_ATTEMPTS;
    out->retry_delay_ms = SG_DEFAULT_RETRY_DELAY_MS;
    out->max_batch_size = SG_DEFAULT_MAX_BATCH_SIZE;
}

int sg_parse_retry_missing_data(const sg_str_t* args, size_t nargs, int* on,
                                uint32_t* attempts, uint32_t* delay_ms,
                                char* err, size_t err_size) noexcept {
    if ((args == nullptr && nargs > 0) || on == nullptr ||
        attempts == nullptr || delay_ms == nullptr) {
        return NullArgument(err, err_size);
    }
    return Configure(err, err_size, [&]() -> std::optional<std::string> {
        solgate::conf::RetryMissingData parsed;
        if (auto error = solgate::conf::ParseRetryMissingData(
                Views(args, nargs), &parsed)) {
            return error;
        }
        *on = parsed.on ? 1 : 0;
        *attempts = parsed.attempts;
        *delay_ms = parsed.delay_ms;
        return std::nullopt;
    });
}

int sg_network_upstream(const sg_network_t* net, size_t i,
                        sg_upstream_info_t* info) noexcept {
    if (net == nullptr || info == nullptr || i >= net->network.size()) {
        return SG_INVALID;
    }
    Describe(net->network.upstream(i), info);
    return SG_OK;
}

int sg_network_configure(sg_network_t* net,
                         const sg_network_settings_t* settings, char* err,
                         size_t err_size) noexcept {
    if (net == nullptr || settings == nullptr) {
        return NullArgument(err, err_size);
    }
    return Configure(err, err_size, [&] {
        solgate::NetworkTuning tuning;
        tuning.debounce_ms = settings->debounce_ms;
        tuning.max_finalized_slot_lag = settings->max_finalized_slot_lag;
        tuning.enforce_block_availability =
            settings->enforce_block_availability != 0;
        tuning.max_slot_lag = settings->max_slot_lag;
        tuning.use_upstream_from_client =
            settings->use_upstream_from_client != 0;
        tuning.retry_missing_data.on = settings->retry_missing_data != 0;
        tuning.retry_missing_data.attempts = settings->retry_attempts;
        tuning.retry_missing_data.delay_ms = settings->retry_delay_ms;
        tuning.max_batch_size = settings->max_batch_size;
        tuning.ws_max_connections = settings->ws_max_connections;
        return net->network.Configure(tuning);
    });
}

int sg_network_check_default_selector(sg_network_t* net, char* err,
                                      size_t err_size) noexcept {
    if (net == nullptr) {
        return NullArgument(err, err_size);
    }
    return Configure(err, err_size,
                     [&] { return net->network.CheckDefaultSelector(); });
}

int sg_network_check_consensus(sg_network_t* net, char* err,
                               size_t err_size) noexcept {
    if (net == nullptr) {
        return NullArgument(err, err_size);
    }
    return Configure(err, err_size,
                     [&] { return net->network.CheckConsensusReach(); });
}

int sg_network_set_state(sg_network_t* net, sg_str_t dir, char* err,
                         size_t err_size) noexcept {
    if (net == nullptr) {
        return NullArgument(err, err_size);
    }
    return Configure(err, err_size, [&]() -> std::optional<std::string> {
        if (auto refused = net->network.SetStateDir(View(dir))) {
            return refused;
        }
        const std::string& path = net->network.settings().state_dir;
        std::string problem = solgate::StateDirProblem(path);
        if (!problem.empty()) {
            return "state directory " + solgate::conf::Quoted(path) +
                   " of network " +
                   solgate::conf::Quoted(net->network.name()) + " " + problem;
        }
        net->state_file = solgate::OperatorStatePath(net->network);
        return std::nullopt;
    });
}

sg_str_t sg_network_state_file(const sg_network_t* net) noexcept {
    return net == nullptr ? ToStr("") : ToStr(net->state_file);
}

size_t sg_network_shared_size(void) noexcept {
    return sizeof(solgate::NetworkShared);
}

int sg_network_bind(sg_network_t* net, void* shared, int fresh,
                    int64_t now_ms, char* err, size_t err_size) noexcept {
    if (net == nullptr || shared == nullptr) {
        CopyError("no network or no shared memory", err, err_size);
        return SG_INVALID;
    }
    return RunReporting(err, err_size, SG_ERROR, [&](std::string* error) {
        return net->network.Bind(shared, fresh != 0, now_ms, error);
    });
}

void sg_network_supersede(void* old_shared, int64_t now_ms) noexcept {
    solgate::Network::Supersede(old_shared, now_ms);
}

int sg_network_restore(sg_network_t* net, int64_t now_ms, int64_t wall_ms,
                       int* level, sg_text_t* line) noexcept {
    if (net == nullptr || level == nullptr || line == nullptr) {
        return SG_INVALID;
    }
    *line = sg_text_t{nullptr, 0};
    return Guard(SG_ERROR, [&] {
        auto report =
            solgate::RestoreOperatorState(net->network, now_ms, wall_ms);
        if (!report) {
            return static_cast<int>(SG_NONE);
        }
        *level = report->level;
        return solgate::capi::ToText(report->line, line);
    });
}

int sg_network_health(const sg_network_t* net, int64_t now_ms,
                      sg_health_t* out) noexcept {
    if (net == nullptr || out == nullptr) {
        return SG_INVALID;
    }
    return Guard(SG_ERROR, [&] {
        solgate::HealthAnswer answer = solgate::AnswerHealth(
            net->network, now_ms, out->body, sizeof(out->body));
        out->http_status = answer.http_status;
        out->eligible = answer.eligible;
        out->len = answer.len;
        return static_cast<int>(SG_OK);
    });
}

}  // extern "C"
