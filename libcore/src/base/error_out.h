// The `std::string* error` out-parameter that failing calls fill in
// (nullptr: the caller does not want the message).
#pragma once

#include <string>

namespace solgate {

// Stores `message` in *error and returns false, for `return Fail(...)`.
inline bool Fail(std::string* error, const std::string& message) {
    if (error != nullptr) {
        *error = message;
    }
    return false;
}

// Stores a message without ever throwing (for catch blocks).
inline void Report(std::string* error, const char* message) noexcept {
    if (error == nullptr) {
        return;
    }
    try {
        *error = message;
    } catch (...) {
    }
}

}  // namespace solgate
