#include "json/error_answer.h"

#include <charconv>

#include "base/printable.h"
#include "json/json_events.h"
#include "json/yajl_reader.h"

namespace solgate {
namespace {

constexpr size_t kMaxErrorDepth = 64;

// The error object's "code" and "message" of one response object, or
// (batch) of the first element of an array of them that has an error.
class ErrorReader : public JsonValueEvents<ErrorReader, kMaxErrorDepth> {
public:
    explicit ErrorReader(bool batch = false) : at_(batch ? 1 : 0) {}

    bool OnValue(JsonKind kind, std::string_view text) {
        if (depth() == 0) {
            // a single answer's object, or a batch's array
            return kind == (at_ == 0 ? JsonKind::kMap : JsonKind::kArray);
        }
        if (depth() == at_ + 2 && in_error_ && key_ == "code" && !done_) {
            if (kind != JsonKind::kNumber) {
                return false;
            }
            int64_t value = 0;
            auto [end, ec] =
                std::from_chars(text.data(), text.data() + text.size(), value);
            if (ec != std::errc() || end != text.data() + text.size()) {
                return false;  // a fraction or an exponent
            }
            code_ = value;
        }
        if (depth() == at_ + 2 && in_error_ && key_ == "message" &&
            kind == JsonKind::kString && !done_) {
            message_ = std::string(text);
        }
        return true;
    }
    bool OnKey(std::string_view key) {
        if (depth() == at_ + 1) {
            in_error_ = key == "error";
        } else if (depth() == at_ + 2 && in_error_) {
            key_ = key == "code" ? "code" : key == "message" ? "message" : "";
        }
        return true;
    }
    bool OnClose() {
        // a batch's element ends: the first with an error is the one read
        if (at_ == 1 && depth() == 2 && (code_ || message_)) {
            done_ = true;
        }
        return true;
    }

    std::optional<int64_t> code() const { return code_; }
    const std::optional<std::string>& message() const { return message_; }

private:
    size_t at_;              // the depth of the answer objects: 0 or 1
    bool in_error_ = false;
    bool done_ = false;
    std::string_view key_;   // a literal: the key itself is gone after
    std::optional<int64_t> code_;
    std::optional<std::string> message_;
};

bool ReadError(std::string_view body, ErrorReader* handler) {
    size_t consumed = 0;
    YajlReader<ErrorReader> reader(*handler, &consumed);
    return reader.ReadWhole(body) == YajlRead::kOk;
}

}  // namespace

std::optional<int64_t> ParseErrorCode(std::string_view body) {
    ErrorReader handler;
    if (!ReadError(body, &handler)) {
        return std::nullopt;
    }
    return handler.code();
}

std::optional<int64_t> LeadingErrorCode(std::string_view first_bytes) {
    constexpr std::string_view kAgave = R"({"jsonrpc":"2.0","error":{"code":)";
    if (first_bytes.substr(0, kAgave.size()) != kAgave) {
        return std::nullopt;
    }
    std::string_view rest = first_bytes.substr(kAgave.size());
    const char* end = rest.data() + rest.size();
    int64_t code = 0;
    auto [stop, ec] = std::from_chars(rest.data(), end, code);
    // the number must end here: a comma or the object's end
    if (ec != std::errc() || stop == end || (*stop != ',' && *stop != '}')) {
        return std::nullopt;
    }
    return code;
}

std::optional<std::string> ParseErrorMessage(std::string_view body) {
    ErrorReader handler;
    if (!ReadError(body, &handler)) {
        return std::nullopt;
    }
    return handler.message();
}

std::optional<std::string> ParseBatchErrorMessage(std::string_view body) {
    ErrorReader handler(true);
    if (!ReadError(body, &handler)) {
        return std::nullopt;
    }
    return handler.message();
}

std::string ReasonPhrase(std::string_view message) {
    std::string out = PrintableAscii(message);
    if (out.size() > kMaxReasonPhrase) {
        out.resize(kMaxReasonPhrase - 3);
        out += "...";
    }
    return out;
}

}  // namespace solgate
