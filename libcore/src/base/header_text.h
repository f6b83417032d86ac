// HTTP header values as RFC 9110 reads them: tokens compare without regard
// to ASCII case, and optional whitespace (spaces, tabs) around a list's
// elements is not part of them.
#pragma once

#include <string_view>

namespace solgate {

// Without the optional whitespace around it.
inline std::string_view TrimmedOws(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

// a == lower, `lower` written in lower case.
inline bool SameToken(std::string_view a, std::string_view lower) {
    if (a.size() != lower.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); i++) {
        char x = a[i] >= 'A' && a[i] <= 'Z' ? char(a[i] - 'A' + 'a') : a[i];
        if (x != lower[i]) {
            return false;
        }
    }
    return true;
}

}  // namespace solgate
