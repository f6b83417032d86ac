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

}  // namespace solgate
