#include "slots/poll_reply.h"

#include <yajl/yajl_tree.h>

#include <memory>

#include "base/tls_failure.h"

namespace solgate {
namespace {

struct TreeDeleter {
    void operator()(yajl_val v) const { yajl_tree_free(v); }
};
using Tree = std::unique_ptr<std::remove_pointer_t<yajl_val>, TreeDeleter>;

Tree ParseReply(const HttpResult& reply) {
    if (reply.transport_error != 0 || reply.http_status != 200) {
        return nullptr;
    }
    Tree tree(yajl_tree_parse(reply.body.c_str(), nullptr, 0));
    if (!tree || !YAJL_IS_OBJECT(tree.get())) {
        return nullptr;
    }
    return tree;
}

yajl_val Member(yajl_val object, const char* key) {
    const char* path[] = {key, nullptr};
    return yajl_tree_get(object, path, yajl_t_any);
}

// The "result" of a successful reply, or nullptr.
yajl_val Result(const Tree& tree) {
    if (!tree || Member(tree.get(), "error") != nullptr) {
        return nullptr;
    }
    return Member(tree.get(), "result");
}

}  // namespace

std::optional<uint64_t> ReplyU64(const HttpResult& reply) {
    Tree tree = ParseReply(reply);
    yajl_val result = Result(tree);
    if (result == nullptr || !YAJL_IS_INTEGER(result) ||
        YAJL_GET_INTEGER(result) < 0) {
        return std::nullopt;
    }
    return static_cast<uint64_t>(YAJL_GET_INTEGER(result));
}

std::optional<std::string> ReplyString(const HttpResult& reply) {
    Tree tree = ParseReply(reply);
    yajl_val result = Result(tree);
    if (result == nullptr || !YAJL_IS_STRING(result)) {
        return std::nullopt;
    }
    return std::string(YAJL_GET_STRING(result));
}

bool ReplyHealthy(const HttpResult& reply) {
    Tree tree = ParseReply(reply);
    return Result(tree) != nullptr;
}

std::string RequestBody(std::string_view method, std::string_view params) {
    std::string body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"";
    body += method;
    body += "\"";
    if (!params.empty()) {
        body += ",\"params\":";
        body += params;
    }
    body += "}";
    return body;
}

std::string Excerpt(const std::string& body) {
    constexpr size_t kExcerptBytes = 160;
    std::string out;
    for (char c : body) {
        if (out.size() == kExcerptBytes) {
            break;
        }
        bool space = c == ' ' || static_cast<unsigned char>(c) < 0x20;
        // an error page's indentation would fill the excerpt: one space,
        // and none to begin it
        if (space && (out.empty() || out.back() == ' ')) {
            continue;
        }
        out.push_back(space ? ' ' : c);
    }
    // a body's last newline would end a log line's reason="..." in a space
    while (!out.empty() && out.back() == ' ') {
        out.pop_back();
    }
    return out;
}

std::string HttpFailure(const HttpResult& reply) {
    std::string tls = TlsFailureText(reply);
    if (!tls.empty()) {
        return tls;
    }
    if (reply.transport_error != 0) {
        return "transport error " + std::to_string(reply.transport_error) +
               ": " + reply.error_text;
    }
    if (reply.http_status != 200) {
        std::string excerpt = Excerpt(reply.body);
        return "HTTP " + std::to_string(reply.http_status) +
               (excerpt.empty() ? "" : ": " + excerpt);
    }
    return "";
}

}  // namespace solgate
