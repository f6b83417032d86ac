// The extern "C" shims. Every entry point catches everything: an exception
// must never unwind into nginx. On failure they return SG_ERROR and the
// module answers 500 (fail closed: a request Solgate could not judge is not
// forwarded).
#include <cstring>
#include <new>
#include <string>

#include "cluster.h"
#include "json_writer.h"
#include "router.h"
#include "rpc_request.h"
#include "solgate/solgate.h"
#include "upstream_pick.h"

struct sg_request_s {
    solgate::RpcRequest parsed;
    std::string answer;  // backs sg_route_t::body until the next call
};

namespace {

sg_str_t ToStr(std::string_view s) { return {s.data(), s.size()}; }

sg_route_t Answer(unsigned status, const std::string& body) {
    sg_route_t route;
    route.kind = SG_ROUTE_ANSWER;
    route.http_status = status;
    route.body = ToStr(body);
    return route;
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

int sg_request_route(sg_request_t* req, const sg_network_conf_t* conf,
                     sg_route_t* out) {
    try {
        solgate::RouteDecision decision =
            solgate::RouteRequest(req->parsed, *conf);
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

sg_str_t sg_request_method(const sg_request_t* req) {
    return ToStr(solgate::RequestMethodName(req->parsed));
}

size_t sg_request_call_count(const sg_request_t* req) {
    return req->parsed.calls.size();
}

sg_commitment_t sg_request_commitment(const sg_request_t* req,
                                      const sg_network_conf_t* conf) {
    const auto& parsed = req->parsed;
    if (parsed.shape == solgate::RpcRequest::Shape::kSingle &&
        parsed.calls[0].commitment) {
        return *parsed.calls[0].commitment;
    }
    return conf->default_commitment;
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

int sg_pick_round_robin(size_t count, uint64_t turn,
                        const unsigned char* tried, size_t* picked) {
    auto index = solgate::PickRoundRobin(count, turn, tried);
    if (!index) {
        return SG_DECLINED;
    }
    *picked = *index;
    return SG_OK;
}

const char* sg_version(void) { return SOLGATE_VERSION; }

}  // extern "C"
