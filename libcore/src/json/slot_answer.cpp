// getSlot answers are tiny, so the whole body is parsed in one yajl_parse
// call; the result's digits are located by offset within that one buffer.
#include "json/slot_answer.h"

#include <yajl/yajl_parse.h>

namespace solgate {
namespace {

// The answer is a flat object; anything deeper is only skipped over, and a
// body nested this deep is not a getSlot answer.
constexpr size_t kMaxAnswerDepth = 64;

enum class Kind { kNull, kBool, kNumber, kString, kMap, kArray };
enum class Member { kJsonrpc, kId, kResult, kError, kOther };

Member MemberNamed(std::string_view key) {
    if (key == "jsonrpc") return Member::kJsonrpc;
    if (key == "id") return Member::kId;
    if (key == "result") return Member::kResult;
    if (key == "error") return Member::kError;
    return Member::kOther;
}

class AnswerParser {
public:
    explicit AnswerParser(std::string_view body) : body_(body) {}

    std::optional<SlotAnswer> Run();

    int OnValue(Kind kind, std::string_view text);
    int OnKey(std::string_view key);
    int OnClose();

private:
    int OnMember(Kind kind, std::string_view text);
    int OnResult(Kind kind, std::string_view digits);
    int Reject() {
        rejected_ = true;
        return 0;  // cancel: the answer is already known
    }

    std::string_view body_;
    yajl_handle handle_ = nullptr;
    size_t depth_ = 0;
    Member member_ = Member::kOther;  // the current top-level key
    bool saw_jsonrpc_ = false;
    bool saw_id_ = false;
    bool rejected_ = false;
    std::optional<SlotAnswer> answer_;
};

// --- yajl glue -------------------------------------------------------------

AnswerParser* Self(void* ctx) { return static_cast<AnswerParser*>(ctx); }

std::string_view View(const unsigned char* s, size_t len) {
    return {reinterpret_cast<const char*>(s), len};
}

int OnNull(void* ctx) { return Self(ctx)->OnValue(Kind::kNull, {}); }
int OnBool(void* ctx, int) { return Self(ctx)->OnValue(Kind::kBool, {}); }
int OnNumber(void* ctx, const char* s, size_t len) {
    return Self(ctx)->OnValue(Kind::kNumber, {s, len});
}
int OnString(void* ctx, const unsigned char* s, size_t len) {
    return Self(ctx)->OnValue(Kind::kString, View(s, len));
}
int OnStartMap(void* ctx) { return Self(ctx)->OnValue(Kind::kMap, {}); }
int OnMapKey(void* ctx, const unsigned char* s, size_t len) {
    return Self(ctx)->OnKey(View(s, len));
}
int OnStartArray(void* ctx) { return Self(ctx)->OnValue(Kind::kArray, {}); }
int OnEnd(void* ctx) { return Self(ctx)->OnClose(); }

const yajl_callbacks kCallbacks = {
    OnNull, OnBool, nullptr, nullptr, OnNumber, OnString,
    OnStartMap, OnMapKey, OnEnd, OnStartArray, OnEnd,
};

// --- parser ----------------------------------------------------------------

std::optional<SlotAnswer> AnswerParser::Run() {
    handle_ = yajl_alloc(&kCallbacks, nullptr, this);
    if (handle_ == nullptr) {
        return std::nullopt;
    }
    const auto* bytes = reinterpret_cast<const unsigned char*>(body_.data());
    // yajl refuses anything after the top-level value but whitespace, and
    // yajl_complete_parse refuses a body that ends early.
    yajl_status status = yajl_parse(handle_, bytes, body_.size());
    if (status == yajl_status_ok) {
        status = yajl_complete_parse(handle_);
    }
    yajl_free(handle_);
    handle_ = nullptr;

    bool complete = status == yajl_status_ok && !rejected_ && saw_jsonrpc_ &&
                    saw_id_;
    return complete ? answer_ : std::nullopt;
}

int AnswerParser::OnValue(Kind kind, std::string_view text) {
    if (depth_ == 0 && kind != Kind::kMap) {
        return Reject();  // a batch or a bare value
    }
    if (depth_ == 1 && OnMember(kind, text) == 0) {
        return 0;
    }
    if (kind == Kind::kMap || kind == Kind::kArray) {
        if (depth_ >= kMaxAnswerDepth) {
            return Reject();
        }
        depth_++;
    }
    return 1;
}

int AnswerParser::OnKey(std::string_view key) {
    if (depth_ == 1) {
        member_ = MemberNamed(key);
        if (member_ == Member::kError) {
            return Reject();
        }
    }
    return 1;
}

int AnswerParser::OnClose() {
    depth_--;
    return 1;
}

// A value of the response object itself.
int AnswerParser::OnMember(Kind kind, std::string_view text) {
    switch (member_) {
    case Member::kJsonrpc:
        if (kind != Kind::kString || text != "2.0") {
            return Reject();
        }
        saw_jsonrpc_ = true;
        return 1;
    case Member::kId:
        if (kind != Kind::kNumber && kind != Kind::kString &&
            kind != Kind::kNull) {
            return Reject();
        }
        saw_id_ = true;
        return 1;
    case Member::kResult:
        return OnResult(kind, text);
    case Member::kError:
    case Member::kOther:
        return 1;
    }
    return 1;
}

// yajl hands numbers over as their raw text, and the lexer has stopped just
// past the last digit, so the span ends at the bytes consumed so far.
int AnswerParser::OnResult(Kind kind, std::string_view digits) {
    if (answer_ || kind != Kind::kNumber) {
        return Reject();  // a second "result" would make the span ambiguous
    }
    auto slot = ParseSlotNumber(digits);
    size_t end = yajl_get_bytes_consumed(handle_);
    if (!slot || end < digits.size() || end > body_.size()) {
        return Reject();
    }
    size_t begin = end - digits.size();
    if (body_.substr(begin, digits.size()) != digits) {
        return Reject();  // never expected: the span must be the digits
    }
    answer_ = SlotAnswer{*slot, begin, end};
    return 1;
}

}  // namespace

namespace {

// The shape Solana nodes answer getSlot with, byte for byte:
// {"jsonrpc":"2.0","result":N,"id":ID} with ID a number, null, or a string
// without escapes. Read without a parser; anything else goes to yajl.
std::optional<SlotAnswer> CanonicalSlotAnswer(std::string_view body) {
    constexpr std::string_view kPrefix = "{\"jsonrpc\":\"2.0\",\"result\":";
    constexpr std::string_view kIdKey = ",\"id\":";
    if (body.substr(0, kPrefix.size()) != kPrefix) {
        return std::nullopt;
    }
    size_t begin = kPrefix.size();
    size_t end = begin;
    while (end < body.size() && body[end] >= '0' && body[end] <= '9') {
        end++;
    }
    bool leading_zero = end - begin > 1 && body[begin] == '0';
    auto slot = ParseSlotNumber(body.substr(begin, end - begin));
    if (!slot || leading_zero || body.substr(end, kIdKey.size()) != kIdKey) {
        return std::nullopt;
    }
    std::string_view id = body.substr(end + kIdKey.size());
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ' ||
                           id.back() == '\r' || id.back() == '\t')) {
        id.remove_suffix(1);
    }
    if (id.size() < 2 || id.back() != '}') {
        return std::nullopt;
    }
    id.remove_suffix(1);
    bool plain_string = id.size() >= 2 && id.front() == '"' &&
                        id.back() == '"' &&
                        id.substr(1, id.size() - 2).find_first_of("\"\\") ==
                            std::string_view::npos;
    bool digits = !id.empty() && id.find_first_not_of("0123456789") ==
                                     std::string_view::npos &&
                  (id.size() == 1 || id[0] != '0');
    if (!plain_string && !digits && id != "null") {
        return std::nullopt;
    }
    for (char c : id) {
        unsigned char u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x80) {
            return std::nullopt;  // control bytes or UTF-8: let yajl judge
        }
    }
    return SlotAnswer{*slot, begin, end};
}

}  // namespace

std::optional<SlotAnswer> ParseSlotAnswer(std::string_view body) {
    if (auto answer = CanonicalSlotAnswer(body)) {
        return answer;
    }
    return AnswerParser(body).Run();
}

std::string ReplaceSlot(std::string_view body, const SlotAnswer& answer,
                        uint64_t slot) {
    if (answer.begin > answer.end || answer.end > body.size()) {
        return std::string(body);
    }
    std::string digits = std::to_string(slot);
    std::string out;
    out.reserve(body.size() - (answer.end - answer.begin) + digits.size());
    out.append(body.substr(0, answer.begin));
    out.append(digits);
    out.append(body.substr(answer.end));
    return out;
}

std::optional<uint64_t> ParseSlotNumber(std::string_view number_token) {
    // 20 digits is the most a uint64 can take (18446744073709551615).
    if (number_token.empty() || number_token.size() > 20) {
        return std::nullopt;
    }
    uint64_t value = 0;
    for (char c : number_token) {
        if (c < '0' || c > '9') {
            return std::nullopt;  // '-', '.', 'e': not a slot
        }
        auto digit = static_cast<uint64_t>(c - '0');
        if (value > (UINT64_MAX - digit) / 10) {
            return std::nullopt;
        }
        value = value * 10 + digit;
    }
    return value;
}

}  // namespace solgate
