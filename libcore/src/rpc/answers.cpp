#include "rpc/answers.h"

#include "json/json_writer.h"

namespace solgate {
namespace {

struct StatusText {
    unsigned status;
    int code;
    std::string_view message;
};

// Statuses with their own words; the rest fall into the classes below.
constexpr StatusText kStatusTexts[] = {
    {405, kInvalidRequest,
     "Invalid request: JSON-RPC requests must be sent with POST"},
    {408, kInvalidRequest,
     "Invalid request: timed out reading the request body"},
    {413, kInvalidRequest,
     "Invalid request: body larger than client_max_body_size"},
};

}  // namespace

std::string ErrorAnswer(int code, std::string_view message) {
    std::string out;
    AppendErrorEnvelope(out, {}, code, message);
    return out;
}

std::string_view StatusAnswer(unsigned http_status) {
    static const std::string kClientError =
        ErrorAnswer(kInvalidRequest, "Invalid request");
    static const std::string kServerError =
        ErrorAnswer(kInternalError, "Internal error");
    static const std::string kSpecific[] = {
        ErrorAnswer(kStatusTexts[0].code, kStatusTexts[0].message),
        ErrorAnswer(kStatusTexts[1].code, kStatusTexts[1].message),
        ErrorAnswer(kStatusTexts[2].code, kStatusTexts[2].message),
    };
    for (size_t i = 0; i < std::size(kStatusTexts); i++) {
        if (kStatusTexts[i].status == http_status) {
            return kSpecific[i];
        }
    }
    return http_status < 500 ? kClientError : kServerError;
}

std::string FailRequest(const RpcRequest& request, int code,
                        std::string_view message) {
    std::string out;
    if (request.shape != RpcRequest::Shape::kBatch) {
        std::string_view id = request.calls.empty()
                                  ? std::string_view()
                                  : request.calls[0].id_raw;
        AppendErrorEnvelope(out, id, code, message);
        return out;
    }
    out.push_back('[');
    for (size_t i = 0; i < request.calls.size(); i++) {
        if (i > 0) {
            out.push_back(',');
        }
        AppendErrorEnvelope(out, request.calls[i].id_raw, code, message);
    }
    out.push_back(']');
    return out;
}

bool LooksLikeRpcError(std::string_view first_bytes) {
    // What agave writes, first: {"jsonrpc":"2.0","result": or "error":
    constexpr std::string_view kAgave = R"({"jsonrpc":"2.0",")";
    if (first_bytes.size() > kAgave.size() &&
        first_bytes.substr(0, kAgave.size()) == kAgave) {
        return first_bytes.substr(kAgave.size(), 6) == "error\"";
    }
    std::string_view head = first_bytes.substr(0, 256);
    size_t start = head.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos || head[start] != '{') {
        return false;
    }
    size_t error = head.find("\"error\":");
    size_t result = head.find("\"result\":");
    return error != std::string_view::npos &&
           (result == std::string_view::npos || error < result);
}

std::string WriteNotRetriedMessage(std::string_view upstream_cause) {
    return "Internal error: the upstream failed (" +
           std::string(upstream_cause) +
           ") after the request may have reached it; not retried on "
           "another upstream, so that a transaction is never sent twice";
}

std::string WriteNotRetriedAnswer(const RpcRequest& request,
                                  std::string_view upstream_cause) {
    return FailRequest(request, kInternalError,
                       WriteNotRetriedMessage(upstream_cause));
}

std::string AllFailedMessage(size_t attempts) {
    return "Internal error: no upstream could serve the request (" +
           std::to_string(attempts) + " tried)";
}

std::string AllFailedAnswer(const RpcRequest& request, size_t attempts) {
    return FailRequest(request, kInternalError, AllFailedMessage(attempts));
}

}  // namespace solgate
