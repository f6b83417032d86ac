#include "json/error_answer.h"

#include <charconv>

#include "json/json_events.h"
#include "json/yajl_reader.h"

namespace solgate {
namespace {

constexpr size_t kMaxErrorDepth = 64;

class ErrorCodeReader : public JsonValueEvents<ErrorCodeReader, kMaxErrorDepth> {
public:
    bool OnValue(JsonKind kind, std::string_view text) {
        if (depth() == 0) {
            return kind == JsonKind::kMap;  // a batch or a bare value: stop
        }
        if (depth() == 2 && in_error_ && key_ == "code") {
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
        return true;
    }
    bool OnKey(std::string_view key) {
        if (depth() == 1) {
            in_error_ = key == "error";
        } else if (depth() == 2 && in_error_) {
            key_ = key == "code" ? "code" : "";
        }
        return true;
    }
    bool OnClose() { return true; }

    std::optional<int64_t> code() const { return code_; }

private:
    bool in_error_ = false;
    std::string_view key_;
    std::optional<int64_t> code_;
};

}  // namespace

std::optional<int64_t> ParseErrorCode(std::string_view body) {
    ErrorCodeReader handler;
    size_t consumed = 0;
    YajlReader<ErrorCodeReader> reader(handler, &consumed);
    if (reader.ReadWhole(body) != YajlRead::kOk) {
        return std::nullopt;
    }
    return handler.code();
}

}  // namespace solgate
