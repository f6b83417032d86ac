// getSlot answers are tiny, so the whole body is read at once; the
// result's digits are located by offset within that one buffer.  Three
// readers, fastest first, each for what the one before cannot judge: the
// canonical shape Solana nodes answer with, the plain lexer (plain_json.h),
// and yajl.  The last two drive the same parser (json_events.h).
#include "json/slot_answer.h"

#include "json/json_events.h"
#include "json/plain_json.h"
#include "json/yajl_reader.h"

namespace solgate {
namespace {

// The answer is a flat object; anything deeper is only skipped over, and a
// body nested this deep is not a getSlot answer.
constexpr size_t kMaxAnswerDepth = 64;

using Kind = JsonKind;
enum class Member { kJsonrpc, kId, kResult, kError, kOther };

Member MemberNamed(std::string_view key) {
    if (key == "jsonrpc") return Member::kJsonrpc;
    if (key == "id") return Member::kId;
    if (key == "result") return Member::kResult;
    if (key == "error") return Member::kError;
    return Member::kOther;
}

// A body nested too deep stops the read (JsonValueEvents), which rejects.
class AnswerParser : public JsonValueEvents<AnswerParser, kMaxAnswerDepth> {
public:
    explicit AnswerParser(std::string_view body) : body_(body) {}

    // kGaveUp: the body is not plain JSON; read it with ReadYajl instead.
    PlainJson LexPlain();
    YajlRead ReadYajl();
    // What a read found; only one that reached the end of a valid body
    // (kDone, kOk) can carry an answer, since every rejection stops it.
    std::optional<SlotAnswer> Answer(bool read_to_end) const;

    bool OnValue(Kind kind, std::string_view text);
    bool OnKey(std::string_view key);
    bool OnClose() { return true; }

private:
    bool OnMember(Kind kind, std::string_view text);
    bool OnResult(Kind kind, std::string_view digits);
    static bool Reject() {
        return false;  // stop: the answer is already known
    }

    std::string_view body_;
    size_t consumed_ = 0;   // where the reader is: just past the token
    Member member_ = Member::kOther;  // the current top-level key
    bool saw_jsonrpc_ = false;
    bool saw_id_ = false;
    std::optional<SlotAnswer> answer_;
};

// --- parser ----------------------------------------------------------------

PlainJson AnswerParser::LexPlain() {
    return LexPlainJson<AnswerParser, kMaxAnswerDepth + 1>(body_, *this,
                                                           &consumed_);
}

// yajl refuses anything after the top-level value but whitespace, and a
// body that ends early.
YajlRead AnswerParser::ReadYajl() {
    YajlReader<AnswerParser> reader(*this, &consumed_);
    return reader.ReadWhole(body_);
}

std::optional<SlotAnswer> AnswerParser::Answer(bool read_to_end) const {
    bool complete = read_to_end && saw_jsonrpc_ && saw_id_;
    return complete ? answer_ : std::nullopt;
}

bool AnswerParser::OnValue(Kind kind, std::string_view text) {
    if (depth() == 0 && kind != Kind::kMap) {
        return Reject();  // a batch or a bare value
    }
    return depth() != 1 || OnMember(kind, text);
}

bool AnswerParser::OnKey(std::string_view key) {
    if (depth() == 1) {
        member_ = MemberNamed(key);
        if (member_ == Member::kError) {
            return Reject();
        }
    }
    return true;
}

// A value of the response object itself.
bool AnswerParser::OnMember(Kind kind, std::string_view text) {
    switch (member_) {
    case Member::kJsonrpc:
        if (kind != Kind::kString || text != "2.0") {
            return Reject();
        }
        saw_jsonrpc_ = true;
        return true;
    case Member::kId:
        if (kind != Kind::kNumber && kind != Kind::kString &&
            kind != Kind::kNull) {
            return Reject();
        }
        saw_id_ = true;
        return true;
    case Member::kResult:
        return OnResult(kind, text);
    case Member::kError:
    case Member::kOther:
        return true;
    }
    return true;
}

// Numbers arrive as their raw text, and the reader has stopped just past
// the last digit, so the span ends at the bytes consumed so far.
bool AnswerParser::OnResult(Kind kind, std::string_view digits) {
    if (answer_ || kind != Kind::kNumber) {
        return Reject();  // a second "result" would make the span ambiguous
    }
    auto slot = ParseSlotNumber(digits);
    size_t end = consumed_;
    if (!slot || end < digits.size() || end > body_.size()) {
        return Reject();
    }
    size_t begin = end - digits.size();
    if (body_.substr(begin, digits.size()) != digits) {
        return Reject();  // never expected: the span must be the digits
    }
    answer_ = SlotAnswer{*slot, begin, end};
    return true;
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
    // the digits read as they are found (19 always fit; more go to
    // ParseSlotNumber, which knows where a uint64 ends)
    size_t begin = kPrefix.size();
    size_t end = begin;
    uint64_t value = 0;
    for (unsigned digit; end < body.size() &&
                         (digit = static_cast<unsigned char>(body[end] - '0')) <= 9;
         end++) {
        value = value * 10 + digit;
    }
    size_t length = end - begin;
    if (length == 0 || (length > 1 && body[begin] == '0')) {
        return std::nullopt;
    }
    if (length > 19) {
        auto wide = ParseSlotNumber(body.substr(begin, length));
        if (!wide) {
            return std::nullopt;
        }
        value = *wide;
    }
    if (body.substr(end, kIdKey.size()) != kIdKey) {
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
    // a number without a leading zero, null, or a string of printable
    // ASCII without quotes or escapes inside (else yajl judges)
    bool quoted = id.size() >= 2 && id.front() == '"' && id.back() == '"';
    bool digits = !id.empty() && (id.size() == 1 || id[0] != '0');
    std::string_view inside = quoted ? id.substr(1, id.size() - 2) : id;
    for (char c : inside) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x80 || c == '"' || c == '\\') {
            return std::nullopt;
        }
        digits = digits && c >= '0' && c <= '9';
    }
    if (!quoted && !digits && id != "null") {
        return std::nullopt;
    }
    return SlotAnswer{value, begin, end};
}

}  // namespace

namespace {

// Any other shape.  Out of line so that the canonical answers, almost all
// of them, do not pay for the lexer's frame.
[[gnu::noinline]] std::optional<SlotAnswer> ReadSlotAnswer(
    std::string_view body) {
    // The plain lexer's events are a prefix of yajl's, so a body it stops
    // on is one yajl would stop on (or refuse) too: not an answer.
    AnswerParser plain(body);
    PlainJson lexed = plain.LexPlain();
    if (lexed != PlainJson::kGaveUp) {
        return plain.Answer(lexed == PlainJson::kDone);
    }
    return ParseSlotAnswerWithYajl(body);
}

}  // namespace

std::optional<SlotAnswer> ParseSlotAnswer(std::string_view body) {
    if (auto answer = CanonicalSlotAnswer(body)) {
        return answer;
    }
    return ReadSlotAnswer(body);
}

std::optional<SlotAnswer> ParseSlotAnswerWithYajl(std::string_view body) {
    AnswerParser parser(body);
    return parser.Answer(parser.ReadYajl() == YajlRead::kOk);
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
        auto digit = static_cast<unsigned char>(c - '0');
        if (digit > 9) {
            return std::nullopt;  // '-', '.', 'e': not a slot
        }
        value = value * 10 + digit;
    }
    // 19 digits always fit (20 with a leading zero); of 20 others, those up
    // to UINT64_MAX begin with 1, and a value that wrapped is below 10^19
    constexpr uint64_t kTen19 = 10000000000000000000ULL;
    if (number_token.size() == 20 && number_token[0] != '0' &&
        (number_token[0] != '1' || value < kTen19)) {
        return std::nullopt;
    }
    return value;
}

}  // namespace solgate
