#include "json/json_writer.h"

#include <algorithm>

#include "json/utf8.h"

namespace solgate {

namespace {

// Bytes written as they are: printable ASCII but the quote and backslash.
bool Plain(unsigned char u) {
    return u >= 0x20 && u < 0x80 && u != '"' && u != '\\';
}

}  // namespace

void AppendJsonString(std::string& out, std::string_view value) {
    static const char kHex[] = "0123456789abcdef";
    const auto* bytes = reinterpret_cast<const unsigned char*>(value.data());
    const unsigned char* end = bytes + value.size();
    out.push_back('"');
    size_t i = 0;
    while (i < value.size()) {
        // a run of plain bytes in one append (messages are mostly that)
        size_t run = i;
        while (run < value.size() && Plain(bytes[run])) {
            run++;
        }
        if (run > i) {
            out.append(value.data() + i, run - i);
            i = run;
            continue;
        }
        char c = value[i];
        unsigned char u = static_cast<unsigned char>(c);
        if (u >= 0x80) {
            // what came from outside may be any bytes: only well-formed
            // UTF-8 goes out, anything else as U+FFFD
            size_t n = Utf8SequenceLength(bytes + i, end);
            if (n == 0) {
                out += "\\ufffd";
                i++;
            } else {
                out.append(value.data() + i, n);
                i += n;
            }
            continue;
        }
        switch (c) {
        case '"':  out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            out += "\\u00";
            out.push_back(kHex[u >> 4]);
            out.push_back(kHex[u & 0xf]);
        }
        i++;
    }
    out.push_back('"');
}

static void AppendId(std::string& out, std::string_view id_raw) {
    out += ",\"id\":";
    out += id_raw.empty() ? std::string_view("null") : id_raw;
    out += "}";
}

void AppendResultEnvelope(std::string& out, std::string_view id_raw,
                          std::string_view result_raw) {
    out += "{\"jsonrpc\":\"2.0\",\"result\":";
    out += result_raw;
    AppendId(out, id_raw);
}

void AppendErrorEnvelope(std::string& out, std::string_view id_raw, int code,
                         std::string_view message, std::string_view data_raw) {
    // room for the whole envelope at once (a message without escapes),
    // not a reallocation for each piece as the string doubles
    constexpr size_t kFraming = sizeof(
        "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-2147483648,\"message\":\"\","
        "\"data\":},\"id\":}");
    size_t need = out.size() + kFraming + message.size() + data_raw.size() +
                  std::max<size_t>(id_raw.size(), 4);
    if (need > out.capacity()) {
        // geometric, as appends grow it: a batch's answers append many
        out.reserve(std::max(need, 2 * out.capacity()));
    }
    out += "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":";
    out += std::to_string(code);
    out += ",\"message\":";
    AppendJsonString(out, message);
    if (!data_raw.empty()) {
        out += ",\"data\":";
        out += data_raw;
    }
    out += "}";
    AppendId(out, id_raw);
}

}  // namespace solgate
