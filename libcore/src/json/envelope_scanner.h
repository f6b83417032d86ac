// Finds where a JSON-RPC response's top-level "id" value lies, while the
// body streams past in chunks split anywhere, so a cached getBlock answer
// (5-50 MB) can later be served with another client's id by splicing that
// byte range.  Also tells a "result" envelope from an "error" one and reads
// the error's integer "code".
//
// What is checked, and what is not:
//  * Structure is checked: one top-level object, then only whitespace;
//    balanced objects and arrays; "key": value pairs and commas in their
//    places (no trailing commas); strings closed, with valid escape
//    letters, and no raw control bytes (< 0x20) inside.
//  * The envelope is checked: an "id" member, exactly one of "result" and
//    "error", none of "jsonrpc", "result", "error", "id" twice at the top
//    level; "error" must be an object; "id" must be a string, a number or
//    null (first byte '"', '-', a digit or 'n').  Top-level keys are
//    compared after decoding escapes, so "\u0069d" is "id".
//  * Not checked: the grammar of numbers and literals (any run of
//    [0-9+-.eE] and the letters of true/false/null passes), the four hex
//    digits of \u escapes outside top-level keys, UTF-8 validity.
//  * Nesting deeper than kMaxDepth is reported as malformed.
//
// Work: one pass, nothing allocated, nothing copied; string bodies are
// skipped 8 bytes at a time.  Only the few keys at the top level and in
// the top-level "error" object are looked at.
#pragma once

#include <cstddef>
#include <cstdint>

namespace solgate {

class EnvelopeScanner {
public:
    static constexpr uint32_t kMaxDepth = 1024;

    // Feeds the next chunk (any size, including 0).  Returns false once
    // the input is known to be malformed, and from then on, without
    // reading data.
    bool Feed(const char* data, size_t len) noexcept;

    // Call after the last chunk: true when a complete, valid envelope was
    // seen and nothing but whitespace followed it.  Only reads the state,
    // so it may be called again.
    bool Finish() const noexcept;

    struct Result {
        bool has_result = false;
        bool has_error = false;
        // The top-level error object's "code" when it is an integer that
        // fits int64; 0 otherwise.  The last "code" member wins.
        int64_t error_code = 0;
        // The id value's first byte, counted over the whole stream, and
        // its length: 1 for `1`, 5 for `"abc"` (quotes included), 4 for
        // `null`.
        uint64_t id_offset = 0;
        uint64_t id_length = 0;
        uint64_t total = 0;  // bytes fed
    };

    // Valid after Finish() returned true.
    const Result& result() const noexcept { return result_; }

private:
    enum class State : uint8_t {
        kBeforeTop,      // whitespace, then '{'
        kKeyOrClose,     // just after '{'
        kKey,            // after ',' in an object
        kColon,
        kValue,          // after ':' or ',' in an array
        kValueOrClose,   // just after '['
        kAfterValue,     // ',' or a closing bracket
        kString,         // skipped string body; ends in string_next_
        kStringEscape,
        kKeyText,        // a watched key, decoded into key_
        kKeyEscape,
        kKeyHex,         // the 4 hex digits of \u in a watched key
        kWord,           // number or literal
        kCode,           // the error code number, parsed
        kAfterTop,       // trailing whitespace
        kFailed,
    };
    // The keys that matter: at the top level, and "code" inside "error".
    enum class Key : uint8_t { kOther, kJsonrpc, kResult, kError, kId, kCode };

    static constexpr size_t kKeyCapacity = 8;  // longest watched key + 1

    State Run(const unsigned char* p, const unsigned char* end,
              uint64_t base) noexcept;
    State BeginValue(unsigned char c, uint64_t pos) noexcept;
    State BeginPlainValue(unsigned char c) noexcept;
    State BeginWatchedValue(unsigned char c, uint64_t pos) noexcept;
    State BeginKey() noexcept;
    State EndKey() noexcept;
    State EndCode() noexcept;
    State Close(bool object) noexcept;
    bool Push(bool object) noexcept;
    bool TopIsObject() const noexcept;
    bool Watched() const noexcept;
    void AddKeyChar(unsigned char c) noexcept;

    Result result_;
    State state_ = State::kBeforeTop;
    State string_next_ = State::kAfterValue;  // where a string body ends
    Key member_key_ = Key::kOther;  // the last watched key read
    uint8_t seen_ = 0;              // bit per top-level Key already read
    bool in_error_ = false;         // depth 2 is the top-level error object
    bool id_open_ = false;          // the id value is being read
    bool code_negative_ = false;
    bool code_ok_ = false;          // digits only so far, no overflow
    bool code_digits_ = false;      // at least one digit read
    uint32_t depth_ = 0;
    uint32_t hex_left_ = 0;
    uint32_t hex_value_ = 0;
    uint32_t key_len_ = 0;          // may exceed kKeyCapacity: no match
    uint64_t code_value_ = 0;
    char key_[kKeyCapacity] = {};
    uint64_t stack_[kMaxDepth / 64] = {};  // bit set: object, clear: array
};

}  // namespace solgate
