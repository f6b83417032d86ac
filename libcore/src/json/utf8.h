// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates (U+D800 to
// U+DFFF), nothing past U+10FFFF. yajl's own check lets some of these by.
#pragma once

#include <cstddef>
#include <string_view>

namespace solgate {

// The length (1 to 4) of the well-formed sequence at p, or 0 when the
// bytes from p are none.
size_t Utf8SequenceLength(const unsigned char* p, const unsigned char* end);

bool IsStrictUtf8(std::string_view text);

// Whether a JSON text's \u escapes name only whole characters: a high
// surrogate escape followed by a low one, never either alone (yajl turns
// a lone one into '?' and reads "\ud800\u0041" as one character, where
// the upstream's reader refuses both).
bool HasOnlyPairedSurrogateEscapes(std::string_view json);

}  // namespace solgate
