#include "json.h"

#include <charconv>
#include <cstring>

namespace solsim {

namespace {

// yajl_tree builds and frees trees recursively; refusing absurd nesting up
// front keeps a hostile request from exhausting the stack.
constexpr int kMaxDepth = 512;

bool nesting_ok(const std::string& text) {
    int depth = 0;
    bool in_string = false;
    bool escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxDepth) return false;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return true;
}

}  // namespace

bool JsonDoc::parse(const std::string& text) {
    reset();
    if (!nesting_ok(text)) return false;
    // An embedded NUL would silently truncate the document for yajl.
    if (std::memchr(text.data(), '\0', text.size()) != nullptr) return false;
    char err[128];
    root_ = yajl_tree_parse(text.c_str(), err, sizeof(err));
    return root_ != nullptr;
}

void JsonDoc::reset() {
    if (root_ != nullptr) {
        yajl_tree_free(root_);
        root_ = nullptr;
    }
}

yajl_val json_get(yajl_val obj, const char* key) {
    if (!YAJL_IS_OBJECT(obj)) return nullptr;
    for (size_t i = 0; i < obj->u.object.len; ++i) {
        if (std::strcmp(obj->u.object.keys[i], key) == 0) return obj->u.object.values[i];
    }
    return nullptr;
}

bool json_as_u64(yajl_val v, uint64_t& out) {
    if (!YAJL_IS_NUMBER(v) || v->u.number.r == nullptr) return false;
    const char* s = v->u.number.r;
    size_t len = std::strlen(s);
    if (len == 0) return false;
    for (size_t i = 0; i < len; ++i) {
        if (s[i] < '0' || s[i] > '9') return false;
    }
    auto res = std::from_chars(s, s + len, out);
    return res.ec == std::errc() && res.ptr == s + len;
}

void json_append_string(std::string& out, std::string_view s) {
    static const char kHex[] = "0123456789abcdef";
    out.push_back('"');
    size_t run_start = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        out.append(s.data() + run_start, i - run_start);
        run_start = i + 1;
        switch (c) {
            case '"': out.append("\\\""); break;
            case '\\': out.append("\\\\"); break;
            case '\n': out.append("\\n"); break;
            case '\r': out.append("\\r"); break;
            case '\t': out.append("\\t"); break;
            case '\b': out.append("\\b"); break;
            case '\f': out.append("\\f"); break;
            default:
                out.append("\\u00");
                out.push_back(kHex[c >> 4]);
                out.push_back(kHex[c & 15]);
        }
    }
    out.append(s.data() + run_start, s.size() - run_start);
    out.push_back('"');
}

void json_append_u64(std::string& out, uint64_t v) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, res.ptr);
}

void json_append_i64(std::string& out, int64_t v) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, res.ptr);
}

void json_append_value(std::string& out, yajl_val v) {
    if (v == nullptr) {
        out.append("null");
        return;
    }
    switch (v->type) {
        case yajl_t_string: json_append_string(out, v->u.string); break;
        case yajl_t_number: out.append(v->u.number.r); break;
        case yajl_t_true: out.append("true"); break;
        case yajl_t_false: out.append("false"); break;
        case yajl_t_null: out.append("null"); break;
        case yajl_t_object:
            out.push_back('{');
            for (size_t i = 0; i < v->u.object.len; ++i) {
                if (i != 0) out.push_back(',');
                json_append_string(out, v->u.object.keys[i]);
                out.push_back(':');
                json_append_value(out, v->u.object.values[i]);
            }
            out.push_back('}');
            break;
        case yajl_t_array:
            out.push_back('[');
            for (size_t i = 0; i < v->u.array.len; ++i) {
                if (i != 0) out.push_back(',');
                json_append_value(out, v->u.array.values[i]);
            }
            out.push_back(']');
            break;
        default: out.append("null"); break;
    }
}

}  // namespace solsim
