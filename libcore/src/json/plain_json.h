// A SAX lexer for plain JSON: the request bodies clients send almost
// always are (ASCII, no escapes). It drives the same events as yajl
// (json_events.h, yajl_reader.h), without yajl's allocations, and gives up
// on anything it does not handle itself: an escape or a byte >= 0x80 in a
// string, a malformed token, trailing bytes. The caller then parses the
// text again with yajl, the reference, so both accept and reject exactly
// the same texts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace solgate {

// The bytes a plain string holds as they are: not its closing quote, not
// an escape, no control byte, ASCII. One table lookup per byte, where the
// four comparisons cost twice as much (string bytes are most of a body).
inline constexpr struct PlainStringBytes {
    bool plain[256] = {};
    constexpr PlainStringBytes() {
        for (int c = 0x20; c < 0x80; c++) {
            plain[c] = c != '"' && c != '\\';
        }
    }
} kPlainStringBytes;

#if defined(__SSE2__)
// Which of the sixteen bytes at `at` kPlainStringBytes does not take, a
// bit each: a quote, a backslash, and (a signed compare) below 0x20 the
// control bytes and, being negative, the bytes >= 0x80; 0x7f is plain, as
// in the table.
inline unsigned PlainStringStops(const char* at) {
    __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    __m128i stop = _mm_or_si128(
        _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')),
                     _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'))),
        _mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20)));
    return static_cast<unsigned>(_mm_movemask_epi8(stop));
}

// SkipPlainStringBytes for the last 1 to 15 bytes of a text of 16 or more:
// its last sixteen judged at once, the ones before p shifted out. Out of
// line, so the lexer it is called from stays small enough to be inlined
// where it is used.
[[gnu::noinline]] inline const char* SkipLastPlainStringBytes(const char* p,
                                                             const char* end) {
    const char* last = end - 16;   // bit k: byte last + k
    unsigned mask = PlainStringStops(last) >> (p - last);
    return mask != 0 ? p + __builtin_ctz(mask) : end;
}
#endif

// The first byte at or after p that kPlainStringBytes does not take (end
// if none). Strings are most of a body's bytes: with SSE2 (every x86-64)
// sixteen bytes are judged at once, three compares and a mask, where the
// table costs six instructions a byte. The last bytes of a text of 16 or
// more (`begin` is its first) are judged as the text's last sixteen: a
// request's last strings ("confirmed") are there. Shorter texts, and
// other targets, take the table.
inline const char* SkipPlainStringBytes(const char* p, const char* end,
                                        const char* begin) {
#if defined(__SSE2__)
    while (end - p >= 16) {
        unsigned mask = PlainStringStops(p);
        if (mask != 0) {
            return p + __builtin_ctz(mask);
        }
        p += 16;
    }
    if (p < end && end - begin >= 16) {
        return SkipLastPlainStringBytes(p, end);
    }
#else
    (void)begin;
#endif
    while (p < end && kPlainStringBytes.plain[static_cast<unsigned char>(*p)]) {
        p++;
    }
    return p;
}

enum class PlainJson {
    kDone,     // a whole value, events delivered
    kGaveUp,   // not plain (or not valid): parse it with yajl
    kStopped,  // a handler returned false
};

// Handler: the nine events of json_events.h; false stops the lex.
// *consumed is set, before each event, to the offset just past the token
// (as YajlReader sets it). kMaxDepth bounds the nesting the lexer itself
// tracks (deeper: kGaveUp). With complete false the text is the first part
// of a longer one: a number that reaches its end may go on, so the lexer
// gives up there rather than deliver it.
template <typename Handler, size_t kMaxDepth = 128>
PlainJson LexPlainJson(std::string_view text, Handler& handler,
                       size_t* consumed, bool complete = true) {
    const char* const begin = text.data();
    const char* const end = begin + text.size();
    const char* p = begin;
    bool in_object[kMaxDepth];
    size_t depth = 0;
    bool expect_key = false;   // inside an object, before a key

    // Most bodies are compact: a byte above ' ' (no space) ends the skip
    // with a single compare.
    auto skip_space = [&] {
        while (p < end && static_cast<unsigned char>(*p) <= ' ' &&
               (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) {
            p++;
        }
    };
    auto at = [&](const char* q) {
        *consumed = static_cast<size_t>(q - begin);
    };
    auto digits = [&] {
        const char* start = p;
        while (p < end && *p >= '0' && *p <= '9') {
            p++;
        }
        return p > start;
    };
    // A string from its opening quote, p left past the closing one; false
    // for what yajl must decode or judge (escapes, control bytes, UTF-8,
    // no closing quote).
    auto plain_string = [&](std::string_view* body) {
        const char* s = ++p;
        p = SkipPlainStringBytes(p, end, begin);
        if (p >= end || *p != '"') {
            return false;   // no closing quote, or a byte yajl must judge
        }
        *body = std::string_view(s, static_cast<size_t>(p++ - s));
        return true;
    };
    auto literal = [&](std::string_view word) {
        if (static_cast<size_t>(end - p) < word.size() ||
            std::string_view(p, word.size()) != word) {
            return false;
        }
        p += word.size();
        return true;
    };

    skip_space();
    for (;;) {
        // A value (or, in an object, a key and its colon first).
        if (p >= end) {
            return PlainJson::kGaveUp;
        }
        if (expect_key) {
            std::string_view key;
            if (*p != '"' || !plain_string(&key)) {
                return PlainJson::kGaveUp;
            }
            at(p);
            if (!handler.OnKey(key)) {
                return PlainJson::kStopped;
            }
            // in a compact body the colon follows the key: no space skip
            if (p >= end || *p != ':') {
                skip_space();
                if (p >= end || *p != ':') {
                    return PlainJson::kGaveUp;
                }
            }
            p++;
            skip_space();
            expect_key = false;
            if (p >= end) {
                return PlainJson::kGaveUp;
            }
        }
        char c = *p;
        if (c == '{' || c == '[') {
            if (depth >= kMaxDepth) {
                return PlainJson::kGaveUp;
            }
            at(++p);
            bool object = c == '{';
            if (!(object ? handler.OnStartMap() : handler.OnStartArray())) {
                return PlainJson::kStopped;
            }
            in_object[depth++] = object;
            skip_space();
            if (p < end && *p == (object ? '}' : ']')) {
                at(++p);
                depth--;
                if (!(object ? handler.OnEndMap() : handler.OnEndArray())) {
                    return PlainJson::kStopped;
                }
            } else {
                expect_key = object;
                continue;
            }
        } else if (c == '"') {
            std::string_view string;
            if (!plain_string(&string)) {
                return PlainJson::kGaveUp;
            }
            at(p);
            if (!handler.OnString(string)) {
                return PlainJson::kStopped;
            }
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
            const char* s = p;
            if (*p == '-') {
                p++;
            }
            if (p < end && *p == '0') {
                p++;
            } else if (!digits()) {
                return PlainJson::kGaveUp;
            }
            if (p < end && *p == '.') {
                p++;
                if (!digits()) {
                    return PlainJson::kGaveUp;
                }
            }
            if (p < end && (*p == 'e' || *p == 'E')) {
                p++;
                if (p < end && (*p == '+' || *p == '-')) {
                    p++;
                }
                if (!digits()) {
                    return PlainJson::kGaveUp;
                }
            }
            if (p == end && !complete) {
                return PlainJson::kGaveUp;
            }
            // "01", "1x": the next byte must end the token
            if (p < end && ((*p >= '0' && *p <= '9') ||
                            (*p >= 'a' && *p <= 'z') ||
                            (*p >= 'A' && *p <= 'Z') || *p == '.')) {
                return PlainJson::kGaveUp;
            }
            at(p);
            if (!handler.OnNumber(std::string_view(s, p - s))) {
                return PlainJson::kStopped;
            }
        } else if (literal("true") || literal("false")) {
            at(p);
            if (!handler.OnBool(p[-1] == 'e' && p[-2] == 'u')) {
                return PlainJson::kStopped;
            }
        } else if (literal("null")) {
            at(p);
            if (!handler.OnNull()) {
                return PlainJson::kStopped;
            }
        } else {
            return PlainJson::kGaveUp;
        }

        // After a value: a comma, a close, or the end of the text.
        for (;;) {
            skip_space();
            if (depth == 0) {
                return p == end ? PlainJson::kDone : PlainJson::kGaveUp;
            }
            if (p >= end) {
                return PlainJson::kGaveUp;
            }
            bool object = in_object[depth - 1];
            if (*p == ',') {
                p++;
                skip_space();
                expect_key = object;
                break;
            }
            if (*p != (object ? '}' : ']')) {
                return PlainJson::kGaveUp;
            }
            at(++p);
            depth--;
            if (!(object ? handler.OnEndMap() : handler.OnEndArray())) {
                return PlainJson::kStopped;
            }
        }
    }
}

}  // namespace solgate
