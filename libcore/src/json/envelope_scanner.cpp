// A byte-driven state machine.  Each state consumes as many bytes as it
// can in its own tight loop before handing over, and the states that see
// most of a getBlock body (string bodies, numbers) never look at the key
// bookkeeping, which is only consulted at depth 1 and inside "error".
#include "json/envelope_scanner.h"

#include <cstring>
#include <limits>

namespace solgate {

namespace {

enum : uint8_t {
    kSpace = 1,      // JSON whitespace
    kWordByte = 2,   // may continue a number or literal
    kWordStart = 4,  // may start one
    kPlain = 8,      // needs no attention inside a string
    kHex = 16,
};

struct ByteClasses {
    uint8_t of[256] = {};

    constexpr ByteClasses() {
        for (int c = 0x20; c < 256; c++) {
            of[c] = kPlain;
        }
        of['"'] = 0;
        of['\\'] = 0;
        of[' '] |= kSpace;
        of['\t'] |= kSpace;
        of['\n'] |= kSpace;
        of['\r'] |= kSpace;
        for (int c = '0'; c <= '9'; c++) {
            of[c] |= kWordByte | kWordStart | kHex;
        }
        for (int c = 'a'; c <= 'f'; c++) {
            of[c] |= kHex;
            of[c - 'a' + 'A'] |= kHex;
        }
        for (const char* s = "+-.eEtrufalsn"; *s != '\0'; s++) {
            of[static_cast<unsigned char>(*s)] |= kWordByte;
        }
        for (const char* s = "-tfn"; *s != '\0'; s++) {
            of[static_cast<unsigned char>(*s)] |= kWordStart;
        }
    }
};

constexpr ByteClasses kClasses;

inline bool Is(unsigned char c, uint8_t cls) {
    return (kClasses.of[c] & cls) != 0;
}

// The first byte at or after p that is '"', '\\' or a control byte, or
// end.  Eight bytes per step with the "has a zero byte" trick; its false
// positives only ever sit above a true hit, so the lowest flag is exact.
inline const unsigned char* SkipPlain(const unsigned char* p,
                                      const unsigned char* end) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    constexpr uint64_t kOnes = 0x0101010101010101ULL;
    constexpr uint64_t kHigh = 0x8080808080808080ULL;
    while (end - p >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        uint64_t quote = v ^ (kOnes * '"');
        uint64_t slash = v ^ (kOnes * '\\');
        uint64_t hit = ((quote - kOnes) & ~quote) |
                       ((slash - kOnes) & ~slash) |
                       ((v - kOnes * 0x20) & ~v);
        hit &= kHigh;
        if (hit != 0) {
            return p + (__builtin_ctzll(hit) >> 3);
        }
        p += 8;
    }
#endif
    while (p < end && Is(*p, kPlain)) {
        p++;
    }
    return p;
}

}  // namespace

// The value starting with c.  Depth 1 holds the envelope's members, and
// depth 2 inside "error" its code: only there do keys matter.
inline EnvelopeScanner::State EnvelopeScanner::BeginValue(
    unsigned char c, uint64_t pos) noexcept {
    if (Watched()) {
        return BeginWatchedValue(c, pos);
    }
    return BeginPlainValue(c);
}

inline EnvelopeScanner::State EnvelopeScanner::BeginPlainValue(
    unsigned char c) noexcept {
    switch (c) {
    case '"':
        string_next_ = State::kAfterValue;
        return State::kString;
    case '{':
        return Push(true) ? State::kKeyOrClose : State::kFailed;
    case '[':
        return Push(false) ? State::kValueOrClose : State::kFailed;
    default:
        return Is(c, kWordStart) ? State::kWord : State::kFailed;
    }
}

EnvelopeScanner::State EnvelopeScanner::BeginWatchedValue(
    unsigned char c, uint64_t pos) noexcept {
    if (depth_ == 1 && member_key_ == Key::kId) {
        if (c != '"' && c != '-' && c != 'n' && !(c >= '0' && c <= '9')) {
            return State::kFailed;  // not a string, number or null
        }
        result_.id_offset = pos;
        id_open_ = true;
    } else if (depth_ == 1 && member_key_ == Key::kError) {
        if (c != '{' || !Push(true)) {
            return State::kFailed;
        }
        in_error_ = true;
        return State::kKeyOrClose;
    } else if (depth_ == 2 && member_key_ == Key::kCode &&
               (c == '-' || (c >= '0' && c <= '9'))) {
        code_negative_ = c == '-';
        code_digits_ = !code_negative_;
        code_value_ = code_negative_ ? 0 : c - '0';
        code_ok_ = true;
        return State::kCode;
    }
    return BeginPlainValue(c);
}

// A key's opening quote was read.
EnvelopeScanner::State EnvelopeScanner::BeginKey() noexcept {
    if (Watched()) {
        key_len_ = 0;
        return State::kKeyText;
    }
    string_next_ = State::kColon;
    return State::kString;
}

inline void EnvelopeScanner::AddKeyChar(unsigned char c) noexcept {
    if (key_len_ < kKeyCapacity) {
        key_[key_len_] = static_cast<char>(c);
    }
    if (key_len_ <= kKeyCapacity) {
        key_len_++;  // stops just past the capacity: matches nothing
    }
}

// A watched key's closing quote was read.
EnvelopeScanner::State EnvelopeScanner::EndKey() noexcept {
    auto is = [this](const char* name) {
        size_t n = std::strlen(name);
        return key_len_ == n && std::memcmp(key_, name, n) == 0;
    };
    if (depth_ == 2) {  // inside "error"
        member_key_ = is("code") ? Key::kCode : Key::kOther;
        return State::kColon;
    }
    member_key_ = is("jsonrpc") ? Key::kJsonrpc
                  : is("result") ? Key::kResult
                  : is("error")  ? Key::kError
                  : is("id")     ? Key::kId
                                 : Key::kOther;
    if (member_key_ == Key::kOther) {
        return State::kColon;
    }
    uint8_t bit = 1u << static_cast<int>(member_key_);
    if (seen_ & bit) {
        return State::kFailed;  // duplicate envelope member
    }
    seen_ |= bit;
    result_.has_result |= member_key_ == Key::kResult;
    result_.has_error |= member_key_ == Key::kError;
    if (result_.has_result && result_.has_error) {
        return State::kFailed;
    }
    return State::kColon;
}

// The byte after the code number (not consumed) was seen.
EnvelopeScanner::State EnvelopeScanner::EndCode() noexcept {
    result_.error_code = 0;
    if (code_ok_ && code_digits_) {
        // Two's complement: also right for -2^63.
        uint64_t bits = code_negative_ ? 0 - code_value_ : code_value_;
        std::memcpy(&result_.error_code, &bits, sizeof(bits));
    }
    return State::kAfterValue;
}

EnvelopeScanner::State EnvelopeScanner::Close(bool object) noexcept {
    if (depth_ == 0 || TopIsObject() != object) {
        return State::kFailed;
    }
    depth_--;
    if (depth_ == 0) {
        bool complete = (seen_ & (1u << static_cast<int>(Key::kId))) &&
                        (result_.has_result || result_.has_error);
        return complete ? State::kAfterTop : State::kFailed;
    }
    if (depth_ == 1) {
        in_error_ = false;
    }
    return State::kAfterValue;
}

bool EnvelopeScanner::Push(bool object) noexcept {
    if (depth_ >= kMaxDepth) {
        return false;
    }
    uint64_t bit = 1ULL << (depth_ % 64);
    if (object) {
        stack_[depth_ / 64] |= bit;
    } else {
        stack_[depth_ / 64] &= ~bit;
    }
    depth_++;
    return true;
}

inline bool EnvelopeScanner::TopIsObject() const noexcept {
    uint32_t top = depth_ - 1;
    return (stack_[top / 64] >> (top % 64)) & 1;
}

inline bool EnvelopeScanner::Watched() const noexcept {
    return depth_ == 1 || (depth_ == 2 && in_error_);
}

bool EnvelopeScanner::Feed(const char* data, size_t len) noexcept {
    if (state_ == State::kFailed) {
        return false;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(data);
    uint64_t base = result_.total;
    result_.total += len;
    if (len > 0) {
        state_ = Run(p, p + len, base);
    }
    return state_ != State::kFailed;
}

bool EnvelopeScanner::Finish() const noexcept {
    return state_ == State::kAfterTop;
}

// `base` is the stream offset of p[0].
EnvelopeScanner::State EnvelopeScanner::Run(const unsigned char* p,
                                            const unsigned char* end,
                                            uint64_t base) noexcept {
    const unsigned char* const begin = p;
    State s = state_;
    while (p < end) {
        switch (s) {
        case State::kString:
            p = SkipPlain(p, end);
            if (p == end) {
                break;
            }
            if (*p == '"') {
                p++;
                s = string_next_;
                if (id_open_) {
                    result_.id_length =
                        base + (p - begin) - result_.id_offset;
                    id_open_ = false;
                }
            } else if (*p == '\\') {
                p++;
                s = State::kStringEscape;
            } else {
                return State::kFailed;  // raw control byte
            }
            break;

        case State::kStringEscape:
            // \uXXXX: the hex digits are plain bytes to the string loop.
            if (std::strchr("\"\\/bfnrtu", *p) == nullptr || *p == 0) {
                return State::kFailed;
            }
            p++;
            s = State::kString;
            break;

        case State::kWord:
            while (p < end && Is(*p, kWordByte)) {
                p++;
            }
            if (p < end) {
                s = State::kAfterValue;
                if (id_open_) {
                    result_.id_length =
                        base + (p - begin) - result_.id_offset;
                    id_open_ = false;
                }
            }
            break;

        case State::kAfterValue: {
            unsigned char c = *p++;
            if (c == ',') {
                s = TopIsObject() ? State::kKey : State::kValue;
            } else if (c == '}' || c == ']') {
                s = Close(c == '}');
                if (s == State::kFailed) {
                    return s;
                }
            } else if (!Is(c, kSpace)) {
                return State::kFailed;
            }
            break;
        }

        case State::kValue:
        case State::kValueOrClose: {
            unsigned char c = *p;
            if (Is(c, kSpace)) {
                p++;
                break;
            }
            if (c == ']' && s == State::kValueOrClose) {
                p++;
                s = Close(false);
            } else {
                s = BeginValue(c, base + (p - begin));
                p++;
            }
            if (s == State::kFailed) {
                return s;
            }
            break;
        }

        case State::kKey:
        case State::kKeyOrClose: {
            unsigned char c = *p++;
            if (c == '"') {
                s = BeginKey();
            } else if (c == '}' && s == State::kKeyOrClose) {
                s = Close(true);
                if (s == State::kFailed) {
                    return s;
                }
            } else if (!Is(c, kSpace)) {
                return State::kFailed;
            }
            break;
        }

        case State::kColon: {
            unsigned char c = *p++;
            if (c == ':') {
                s = State::kValue;
            } else if (!Is(c, kSpace)) {
                return State::kFailed;
            }
            break;
        }

        case State::kKeyText: {
            unsigned char c = *p++;
            if (c == '"') {
                s = EndKey();
                if (s == State::kFailed) {
                    return s;
                }
            } else if (c == '\\') {
                s = State::kKeyEscape;
            } else if (Is(c, kPlain)) {
                AddKeyChar(c);
            } else {
                return State::kFailed;
            }
            break;
        }

        case State::kKeyEscape: {
            unsigned char c = *p++;
            static constexpr char kFrom[] = "\"\\/bfnrt";
            static constexpr char kTo[] = "\"\\/\b\f\n\r\t";
            const char* at = c == 0 ? nullptr : std::strchr(kFrom, c);
            if (at != nullptr) {
                AddKeyChar(static_cast<unsigned char>(kTo[at - kFrom]));
                s = State::kKeyText;
            } else if (c == 'u') {
                hex_left_ = 4;
                hex_value_ = 0;
                s = State::kKeyHex;
            } else {
                return State::kFailed;
            }
            break;
        }

        case State::kKeyHex: {
            unsigned char c = *p++;
            if (!Is(c, kHex)) {
                return State::kFailed;
            }
            uint32_t digit = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
            hex_value_ = hex_value_ * 16 + digit;
            if (--hex_left_ == 0) {
                // Watched keys are ASCII: anything else just never matches.
                AddKeyChar(hex_value_ < 0x80 ? hex_value_ : 0xff);
                s = State::kKeyText;
            }
            break;
        }

        case State::kCode: {
            unsigned char c = *p;
            if (!Is(c, kWordByte)) {
                s = EndCode();
                break;
            }
            p++;
            if (c >= '0' && c <= '9') {
                uint64_t limit = code_negative_ ? (1ULL << 63)
                                                : (1ULL << 63) - 1;
                uint64_t digit = c - '0';
                code_digits_ = true;
                if (code_value_ > (limit - digit) / 10) {
                    code_ok_ = false;
                } else {
                    code_value_ = code_value_ * 10 + digit;
                }
            } else {
                code_ok_ = false;  // a fraction, an exponent, a stray sign
            }
            break;
        }

        case State::kBeforeTop: {
            unsigned char c = *p++;
            if (c == '{') {
                Push(true);
                s = State::kKeyOrClose;
            } else if (!Is(c, kSpace)) {
                return State::kFailed;
            }
            break;
        }

        case State::kAfterTop:
            if (!Is(*p++, kSpace)) {
                return State::kFailed;
            }
            break;

        case State::kFailed:
            return s;
        }
    }
    return s;
}

}  // namespace solgate
