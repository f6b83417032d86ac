// A SAX parse that keeps only what routing needs. Raw spans (the id) are
// cut from the input by offsets, so ids are echoed byte for byte. Plain
// bodies are lexed by plain_json.h; anything else is read by yajl, and the
// parser takes both readers' events alike (json_events.h).
#include <cstdint>
#include <new>
#include <string>
#include <optional>
#include <string_view>
#include <type_traits>

#include "json/json_events.h"
#include "json/plain_json.h"
#include "json/utf8.h"
#include "json/slot_answer.h"
#include "json/yajl_reader.h"
#include "rpc/cluster.h"
#include "rpc/rpc_request.h"

namespace solgate {
namespace {

enum class Role : uint8_t { kBatch, kCall, kParams, kConfig, kOther };

// The member names the parser looks at; any other is kOther. Kept as a
// number, not a string: a batch has thousands of keys to compare.
enum class Key : uint8_t {
    kOther,
    kJsonrpc,
    kId,
    kMethod,
    kParams,
    kCommitment,
    kMinContextSlot,
    kEncoding,
    kTransactionDetails,
    kRewards,
    kMaxVersion,
};

// Every key of every call comes here: the length and the first byte
// leave at most one name to compare (a loop over all of them cost a
// comparison per name).
Key KeyOf(std::string_view name) {
    auto is = [name](std::string_view text, Key key) {
        return name == text ? key : Key::kOther;
    };
    switch (name.size()) {
    case 2: return is("id", Key::kId);
    case 6: return name[0] == 'm' ? is("method", Key::kMethod)
                                  : is("params", Key::kParams);
    case 7: return name[0] == 'j' ? is("jsonrpc", Key::kJsonrpc)
                                  : is("rewards", Key::kRewards);
    case 8: return is("encoding", Key::kEncoding);
    case 10: return is("commitment", Key::kCommitment);
    case 14: return is("minContextSlot", Key::kMinContextSlot);
    case 18: return is("transactionDetails", Key::kTransactionDetails);
    case 30: return is("maxSupportedTransactionVersion", Key::kMaxVersion);
    default: return Key::kOther;
    }
}

using Kind = JsonKind;

// One open container. Small (16 bytes) and trivial, with no member
// initializers: the parser keeps an array of kMaxNestingDepth of them,
// which must cost nothing until a container opens (then Frame{}, all
// zeros: Key::kOther, nothing seen, and its role set).
struct Frame {
    size_t key_end;    // input offset just after the current key
    // Values seen so far (arrays); only 0, 1 and "more" matter, so it
    // stops counting at 2 (and cannot wrap on a huge array).
    uint8_t elements;
    Role role;
    Key key;           // current key (kCall and kConfig maps)
    bool saw_jsonrpc;
    bool saw_method;
    bool second_param;  // kConfig: params[1], getBlock's options
    // Keys already met in this object, one bit per Key: a member Solgate
    // reads must come once (an upstream may read the other duplicate).
    uint16_t seen;
};
static_assert(std::is_trivial_v<Frame>, "a Frame array costs nothing");
static_assert(sizeof(Frame) <= 2 * sizeof(size_t), "a Frame is small");
static_assert(static_cast<unsigned>(Key::kOther) == 0,
              "Frame{} is a frame without a key");
static_assert(static_cast<unsigned>(Key::kMaxVersion) < 16,
              "Frame::seen has a bit per Key");

// Whether `key` was met before in `frame` (and marks it met).
bool Repeated(Frame& frame, Key key) {
    auto bit = static_cast<uint16_t>(1u << static_cast<unsigned>(key));
    bool repeated = (frame.seen & bit) != 0;
    frame.seen |= bit;
    return repeated;
}

std::string_view KeyName(Key key) {
    switch (key) {
    case Key::kJsonrpc: return "jsonrpc";
    case Key::kId: return "id";
    case Key::kMethod: return "method";
    case Key::kParams: return "params";
    case Key::kCommitment: return "commitment";
    case Key::kMinContextSlot: return "minContextSlot";
    case Key::kEncoding: return "encoding";
    case Key::kTransactionDetails: return "transactionDetails";
    case Key::kRewards: return "rewards";
    case Key::kMaxVersion: return "maxSupportedTransactionVersion";
    case Key::kOther: break;
    }
    return "";
}

// The bytes HasControlByte looks for: one table lookup a byte, where two
// comparisons cost more (every call's method passes there).
constexpr struct ControlBytes {
    bool control[256] = {};
    constexpr ControlBytes() {
        for (int c = 0; c < 0x20; c++) {
            control[c] = true;
        }
        control[0x7f] = true;
    }
} kControlBytes;

// A method name is a word: no NUL or other control byte an upstream might
// stop at and read as another name. A string the plain lexer delivered
// (from_yajl false) holds no byte below 0x20 (kPlainStringBytes), so only
// DEL can be there: memchr finds it for a fraction of the byte loop.
bool HasControlByte(std::string_view text, bool from_yajl) {
    if (!from_yajl) {
        return text.find('\x7f') != std::string_view::npos;
    }
    for (char c : text) {
        if (kControlBytes.control[static_cast<unsigned char>(c)]) {
            return true;
        }
    }
    return false;
}

// to = text, for a call's id and method: clear and append cost libstdc++
// half what assign does (it goes through _M_replace, made for any overlap
// of the two).
void SetEmpty(std::string& to, std::string_view text) {
    to.clear();
    to.append(text.data(), text.size());
}

bool IsJsonSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// yajl reads a vertical tab or a form feed as space; JSON (RFC 8259) has
// neither, outside strings or raw inside them, so a node refuses the body
// and Solgate must too (or it would echo `"id"\f:1` as the id `:1`).
bool HasByteYajlTakesForSpace(std::string_view text) {
    return text.find_first_of("\v\f") != std::string_view::npos;
}

class Parser : public JsonValueEvents<Parser, kMaxNestingDepth> {
public:
    // Fills `request`, which must be as RpcRequest{} is (its calls may
    // have capacity): ParseRpcRequestInto's, parsed in place.
    Parser(const char* body, size_t len, RpcRequest& request)
        : text_(body, len), request_(request) {}

    // kGaveUp when the body is not plain JSON: parse it with a YajlParser
    // (on an emptied request); otherwise call Finish.
    PlainJson RunPlain() { return LexPlainJson(text_, *this, &consumed_); }
    // The request's last touches (errors, batch text); syntax_ok false for
    // a body the reader refused.
    void Finish(bool syntax_ok);

    // Forced inline (with Place) into the plain lexer's loop: out of
    // line, each value paid a call and a full register save, a sixth of
    // a getBalance parse.
    [[gnu::always_inline]] bool OnValue(Kind kind, std::string_view text);
    [[gnu::always_inline]] bool OnKey(std::string_view key);
    bool OnClose();

protected:
    std::string_view text_;
    size_t consumed_ = 0;   // where the reader is: just past the token
    // Set by YajlParser: strings may hold any byte the lexer gives up on.
    bool from_yajl_ = false;

private:
    [[gnu::always_inline]] Role Place(Kind kind, std::string_view text);
    Role PlaceInCall(Frame& call, Kind kind, std::string_view text);
    Role PlaceInParams(Frame& params, Kind kind, std::string_view text);
    void PlaceInConfig(Frame& config, Kind kind, std::string_view text);
    void PlaceBlockOption(Key key, Kind kind,
                          std::string_view text);
    void FinishCall(const Frame& call);
    std::string_view SpanFrom(size_t key_end) const;
    // The innermost open container; only while depth() > 0.
    Frame& Top() { return stack_[depth() - 1]; }
    RpcCall& Call() { return request_.calls.back(); }
    // Errors are rare: kept out of line (and cold), so the hot
    // OnValue path neither builds their strings nor saves registers for it.
    [[gnu::noinline, gnu::cold]] void FailCall(int code,
                                               std::string_view message);
    [[gnu::noinline, gnu::cold]] void FailDuplicate(int code,
                                                    std::string_view prefix,
                                                    Key key);

    // The open containers, innermost last. On the C++ stack rather than in
    // a heap or thread_local vector: no allocation, no TLS lookup, no
    // capacity check per container. JsonValueEvents stops the read before
    // a container deeper than kMaxNestingDepth reaches OnValue, so
    // depth() (the frames pushed) never passes it; left uninitialized,
    // each frame is written whole when its container opens.
    Frame stack_[kMaxNestingDepth];
    RpcRequest& request_;
    bool opening_second_param_ = false;
};

// The Parser for a body the plain lexer gave up on, read by yajl. yajl
// takes bytes >= 0x80 (the plain lexer gives them up): its strings and
// keys are checked as strict UTF-8 (a parse error otherwise) before the
// Parser sees them. A subclass, so the plain path, inlined into the
// lexer, does not test for that on every value.
class YajlParser : public Parser {
public:
    YajlParser(const char* body, size_t len, RpcRequest& request)
        : Parser(body, len, request) {
        from_yajl_ = true;
    }
    void Run();

    // YajlReader<YajlParser> calls these in place of Parser's.
    bool OnString(std::string_view text) {
        return IsStrictUtf8(text) && Parser::OnString(text);
    }
    bool OnKey(std::string_view key) {
        return IsStrictUtf8(key) && Parser::OnKey(key);
    }
};

// --- parser ----------------------------------------------------------------

void YajlParser::Run() {
    YajlReader<YajlParser> reader(*this, &consumed_);
    YajlRead status = reader.ReadWhole(text_);
    if (status == YajlRead::kNoMemory) {
        throw std::bad_alloc();
    }
    // escapes yajl decodes its own way are not taken, nor its extra spaces
    Finish(status == YajlRead::kOk && HasOnlyPairedSurrogateEscapes(text_) &&
           !HasByteYajlTakesForSpace(text_));
}

void Parser::Finish(bool syntax_ok) {
    if (too_deep()) {
        request_.error = {kInvalidRequest,
                          "Invalid request: nesting deeper than " +
                              std::to_string(kMaxNestingDepth) + " levels"};
    } else if (!syntax_ok) {
        request_.error = {kParseError, "Parse error"};
    } else if (request_.shape == RpcRequest::Shape::kUnreadable) {
        request_.error = {kInvalidRequest, "Invalid request"};
    } else if (request_.calls.empty()) {
        request_.error = {kInvalidRequest, "Invalid request: empty batch"};
    }
    if (request_.error) {
        request_.shape = RpcRequest::Shape::kUnreadable;
        request_.calls.clear();
    } else if (request_.shape == RpcRequest::Shape::kBatch) {
        request_.batch_text = text_;
    }
}

// The nesting bound is JsonValueEvents': a container too deep never
// arrives here, and Finish reports it.
inline bool Parser::OnValue(Kind kind, std::string_view text) {
    Role role = Place(kind, text);
    if (kind != Kind::kMap && kind != Kind::kArray) {
        return true;
    }
    // a container opens: depth() does not count it yet (< kMaxNestingDepth)
    Frame& frame = stack_[depth()];
    frame = Frame{};
    frame.role = role;
    frame.second_param = opening_second_param_;
    opening_second_param_ = false;
    return true;
}

inline bool Parser::OnKey(std::string_view key) {
    Frame& top = Top();
    if (top.role == Role::kCall || top.role == Role::kConfig) {
        top.key = KeyOf(key);
        top.key_end = consumed_;
    }
    return true;
}

bool Parser::OnClose() {
    const Frame& top = Top();   // depth() drops after this returns
    if (top.role == Role::kCall) {
        Call().span_end = consumed_;
        FinishCall(top);
    }
    return true;
}

inline Role Parser::Place(Kind kind, std::string_view text) {
    if (depth() == 0) {
        if (kind == Kind::kMap) {
            request_.shape = RpcRequest::Shape::kSingle;
            request_.calls.emplace_back();
            return Role::kCall;
        }
        if (kind == Kind::kArray) {
            request_.shape = RpcRequest::Shape::kBatch;
            // growing one call at a time moves every call again and again
            request_.calls.reserve(16);
            return Role::kBatch;
        }
        return Role::kOther;  // a scalar body: not a request
    }
    Frame& parent = Top();
    switch (parent.role) {
    case Role::kBatch:
        request_.calls.emplace_back();
        if (kind == Kind::kMap) {
            Call().span_begin = consumed_ - 1;   // consumed_ is past the '{'
            return Role::kCall;
        }
        FailCall(kInvalidRequest, "Invalid request");
        return Role::kOther;
    case Role::kCall:
        return PlaceInCall(parent, kind, text);
    case Role::kParams:
        return PlaceInParams(parent, kind, text);
    case Role::kConfig:
        PlaceInConfig(parent, kind, text);
        return Role::kOther;
    case Role::kOther:
        return Role::kOther;
    }
    return Role::kOther;
}

Role Parser::PlaceInCall(Frame& call, Kind kind, std::string_view text) {
    Key key = call.key;
    bool member = key == Key::kJsonrpc || key == Key::kId ||
                  key == Key::kMethod || key == Key::kParams;
    if (member && Repeated(call, key)) {
        FailDuplicate(kInvalidRequest, "Invalid request", key);
        return Role::kOther;
    }
    if (key == Key::kJsonrpc) {
        call.saw_jsonrpc = true;
        if (kind != Kind::kString || text != "2.0") {
            FailCall(kInvalidRequest,
                     "Invalid request: \"jsonrpc\" must be \"2.0\"");
        }
    } else if (key == Key::kId) {
        if (kind == Kind::kNull || kind == Kind::kNumber ||
            kind == Kind::kString) {
            SetEmpty(Call().id_raw, SpanFrom(call.key_end));
        } else {
            Call().id_raw.clear();
            FailCall(kInvalidRequest,
                     "Invalid request: \"id\" must be a number, a string or "
                     "null");
        }
    } else if (key == Key::kMethod) {
        call.saw_method = true;
        if (kind == Kind::kString && HasControlByte(text, from_yajl_)) {
            FailCall(kInvalidRequest,
                     "Invalid request: \"method\" holds a control "
                     "character");
        } else if (kind == Kind::kString) {
            SetEmpty(Call().method, text);
        } else {
            FailCall(kInvalidRequest,
                     "Invalid request: \"method\" must be a string");
        }
    } else if (key == Key::kParams) {
        Call().has_params = true;
        if (kind == Kind::kArray) {
            return Role::kParams;
        }
        // null is none (as agave reads it); an object (JSON-RPC's params
        // by name) no Solana node takes, and its commitment and
        // minContextSlot would go unread here
        if (kind != Kind::kNull) {
            FailCall(kInvalidParams,
                     "Invalid params: \"params\" must be an array");
        }
    }
    return Role::kOther;
}

Role Parser::PlaceInParams(Frame& params, Kind kind, std::string_view text) {
    size_t index = params.elements;
    if (params.elements < 2) {
        params.elements++;
    }
    if (index == 0) {
        Call().first_param_seen = true;
        if (kind == Kind::kNumber) {
            Call().first_param_u64 = ParseSlotNumber(text);
        }
    } else if (index == 1) {
        BlockOptions& options = Call().block_options;
        options.seen = true;
        if (kind == Kind::kString) {
            options.encoding.assign(text);   // getConfirmedBlock's legacy form
        } else if (kind == Kind::kMap) {
            opening_second_param_ = true;
        } else {
            options.readable = false;
        }
    } else {
        // a third param: no block method takes one, so its options are
        // not Solgate's to read (never cached, forwarded as written: the
        // node judges the call)
        Call().block_options.readable = false;
    }
    return kind == Kind::kMap ? Role::kConfig : Role::kOther;
}

void Parser::PlaceInConfig(Frame& config, Kind kind, std::string_view text) {
    if (config.key != Key::kOther && Repeated(config, config.key)) {
        FailDuplicate(kInvalidParams, "Invalid params", config.key);
        return;
    }
    if (config.second_param) {
        PlaceBlockOption(config.key, kind, text);
    }
    if (config.key == Key::kCommitment) {
        auto level = kind == Kind::kString ? ParseCommitment(text)
                                           : std::nullopt;
        if (!level) {
            FailCall(kInvalidParams,
                     "Invalid params: unknown commitment, expected "
                     "\"processed\", \"confirmed\" or \"finalized\"");
            return;
        }
        Call().commitment = level;
    } else if (config.key == Key::kMinContextSlot) {
        auto slot = kind == Kind::kNumber ? ParseSlotNumber(text) : std::nullopt;
        if (!slot) {
            FailCall(kInvalidParams,
                     "Invalid params: \"minContextSlot\" must be a "
                     "non-negative integer");
            return;
        }
        Call().min_context_slot = slot;
    }
}

void Parser::PlaceBlockOption(Key key, Kind kind, std::string_view text) {
    BlockOptions& options = Call().block_options;
    switch (key) {
    case Key::kCommitment:
    case Key::kMinContextSlot:
        return;   // do not change the body of a finalized block
    case Key::kEncoding:
    case Key::kTransactionDetails:
    case Key::kRewards:
    case Key::kMaxVersion:
        break;
    default:
        options.unknown_option = true;
        return;
    }
    if (key == Key::kEncoding && kind == Kind::kString) {
        options.encoding.assign(text);
    } else if (key == Key::kTransactionDetails && kind == Kind::kString) {
        options.transaction_details.assign(text);
    } else if (key == Key::kRewards && kind == Kind::kBool) {
        options.rewards = text == "true";
    } else if (key == Key::kMaxVersion && kind == Kind::kNumber) {
        options.max_version.assign(text);
    } else if (kind != Kind::kNull) {
        options.readable = false;
    }
}

void Parser::FinishCall(const Frame& call) {
    if (!call.saw_jsonrpc) {
        FailCall(kInvalidRequest,
                 "Invalid request: \"jsonrpc\" must be \"2.0\"");
    } else if (!call.saw_method) {
        FailCall(kInvalidRequest, "Invalid request: missing \"method\"");
    }
}

// The raw text of the scalar value whose key ended at key_end: from the
// first byte after the colon to where the lexer stopped.
std::string_view Parser::SpanFrom(size_t key_end) const {
    size_t end = consumed_;
    size_t start = key_end;
    while (start < end && (IsJsonSpace(text_[start]) || text_[start] == ':')) {
        start++;
    }
    return text_.substr(start, end - start);
}

// The first problem found is the one reported.
void Parser::FailCall(int code, std::string_view message) {
    RpcCall& call = Call();
    if (!call.error) {
        call.error = {code, std::string(message)};
    }
}

// `prefix`: duplicate "key"
void Parser::FailDuplicate(int code, std::string_view prefix, Key key) {
    RpcCall& call = Call();
    if (!call.error) {
        call.error = {code, std::string(prefix) + ": duplicate \"" +
                                std::string(KeyName(key)) + "\""};
    }
}

}  // namespace

void ParseRpcRequestInto(const char* body, size_t len, RpcRequest& request) {
    ResetRequest(request);
    PlainJson status;
    {
        Parser plain(body, len, request);
        status = plain.RunPlain();
        if (status != PlainJson::kGaveUp) {
            plain.Finish(status == PlainJson::kDone);  // kStopped: too deep
        }
    }
    if (status == PlainJson::kGaveUp) {
        // what the lexer read before it gave up goes; its storage stays
        ResetRequest(request);
        YajlParser(body, len, request).Run();
    }
}

// `request` is the only RpcRequest of a parse, returned by name (NRVO):
// the caller's object is filled in place, never moved.
RpcRequest ParseRpcRequest(const char* body, size_t len,
                           std::vector<RpcCall> room) {
    RpcRequest request;
    request.calls = std::move(room);
    ParseRpcRequestInto(body, len, request);
    return request;
}

RpcRequest ParseRpcRequestWithYajl(const char* body, size_t len) {
    RpcRequest request;
    YajlParser(body, len, request).Run();
    return request;
}

}  // namespace solgate
