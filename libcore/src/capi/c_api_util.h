// What the extern "C" shims share: string conversions, the caller's error
// buffer, and the guards that keep every exception inside libcore.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "conf/block_servers.h"
#include "solgate/solgate.h"

namespace solgate::capi {

// The servers of an upstream block, as the module lists them.
inline std::vector<BlockServer> BlockServers(const sg_block_server_t* servers,
                                             size_t n) {
    std::vector<BlockServer> list(n);
    for (size_t s = 0; s < n; s++) {
        list[s].address.assign(servers[s].address.data, servers[s].address.len);
        list[s].is_unix = servers[s].is_unix != 0;
        list[s].backup = servers[s].backup != 0;
        list[s].down = servers[s].down != 0;
    }
    return list;
}

inline sg_str_t ToStr(std::string_view s) { return {s.data(), s.size()}; }

inline std::string_view View(sg_str_t s) {
    return s.len && s.data ? std::string_view(s.data, s.len)
                           : std::string_view();
}

// The words of a directive, or the arguments of a call.
inline std::vector<std::string_view> Views(const sg_str_t* args, size_t n) {
    std::vector<std::string_view> out;
    out.reserve(n);
    for (size_t i = 0; i < n; i++) {
        out.push_back(View(args[i]));
    }
    return out;
}

// A value the caller may not have (a header, a query argument).
inline std::optional<std::string_view> Present(int present, sg_str_t value) {
    if (!present) {
        return std::nullopt;
    }
    return View(value);
}

// Copies as much of message as fits, NUL-terminated; err may be NULL.
inline void CopyError(std::string_view message, char* err,
                      size_t err_size) noexcept {
    if (err != nullptr && err_size > 0) {
        size_t n = std::min(message.size(), err_size - 1);
        std::memcpy(err, message.data(), n);
        err[n] = '\0';
    }
}

// A required pointer argument is NULL: SG_INVALID, said in err.
inline int NullArgument(char* err, size_t err_size) noexcept {
    CopyError("a required argument is NULL", err, err_size);
    return SG_INVALID;
}

// text as malloc'd NUL-terminated memory in *out (sg_text_free releases it).
inline int ToText(const std::string& text, sg_text_t* out) noexcept {
    char* data = static_cast<char*>(std::malloc(text.size() + 1));
    if (data == nullptr) {
        return SG_ERROR;
    }
    std::memcpy(data, text.data(), text.size());
    data[text.size()] = '\0';
    *out = sg_text_t{data, text.size()};
    return SG_OK;
}

// What the exception being handled says, for the caller's err: "out of
// memory" for bad_alloc, else the internal error's own text. Call it only
// inside a catch block.
inline std::string CaughtMessage() noexcept {
    try {
        throw;
    } catch (const std::bad_alloc&) {
        return "out of memory";
    } catch (const std::exception& e) {
        try {
            return std::string("internal error: ") + e.what();
        } catch (...) {
            return "internal error";
        }
    } catch (...) {
        return "internal error";
    }
}

// The body of an export that has no message to give: its status, or
// `on_throw` when it throws (fail closed: SG_ERROR; fail open: the status
// that lets the request go on).
template <typename Body>
int Guard(int on_throw, Body&& body) noexcept {
    try {
        return body();
    } catch (...) {
        return on_throw;
    }
}

// A configuration step: it returns nullopt, or the message for `nginx -t`
// (SG_INVALID). Throwing is SG_ERROR with CaughtMessage() in err.
template <typename Step>
int Configure(char* err, size_t err_size, Step&& step) noexcept {
    try {
        std::optional<std::string> message = step();
        if (message) {
            CopyError(*message, err, err_size);
            return SG_INVALID;
        }
        return SG_OK;
    } catch (...) {
        CopyError(CaughtMessage(), err, err_size);
        return SG_ERROR;
    }
}

// A step that returns false with a message on failure: SG_OK, or
// `failure` with the message in err; SG_ERROR (CaughtMessage()) when it
// throws.
template <typename Step>
int RunReporting(char* err, size_t err_size, int failure,
                 Step&& step) noexcept {
    try {
        std::string error;
        if (step(&error)) {
            return SG_OK;
        }
        CopyError(error, err, err_size);
        return failure;
    } catch (...) {
        CopyError(CaughtMessage(), err, err_size);
        return SG_ERROR;
    }
}

}  // namespace solgate::capi
