// What the extern "C" shims share: string conversions, error text for the
// caller's buffer, and a wrapper that turns a failing step into a status.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "solgate/solgate.h"

namespace solgate::capi {

inline sg_str_t ToStr(std::string_view s) { return {s.data(), s.size()}; }

inline std::string_view View(sg_str_t s) {
    return s.len ? std::string_view(s.data, s.len) : std::string_view();
}

// Copies as much of message as fits, NUL-terminated.
inline void CopyError(const std::string& message, char* err,
                      size_t err_size) {
    if (err_size > 0) {
        size_t n = std::min(message.size(), err_size - 1);
        std::memcpy(err, message.data(), n);
        err[n] = '\0';
    }
}

// text as a malloc'd NUL-terminated copy (free with sg_text_free).
inline char* ToMallocText(const std::string& text, size_t* len) {
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out != nullptr) {
        std::memcpy(out, text.data(), text.size());
        out[text.size()] = '\0';
        *len = text.size();
    }
    return out;
}

// Runs step(&error), which returns false with a message on failure: SG_OK,
// or `failure` with the message in err; SG_ERROR ("out of memory") when it
// throws, so no exception crosses into C.
template <typename Step>
int RunReporting(char* err, size_t err_size, int failure, Step&& step) {
    try {
        std::string error;
        if (step(&error)) {
            return SG_OK;
        }
        CopyError(error, err, err_size);
        return failure;
    } catch (...) {
        CopyError("out of memory", err, err_size);
        return SG_ERROR;
    }
}

}  // namespace solgate::capi
