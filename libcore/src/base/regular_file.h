// Reading a small regular file whole, for configuration and state read at
// start: opened without waiting (a FIFO or a device named by mistake must
// not hang nginx -t or nginx's start), refused unless it is a regular
// file, and refused past a size. Each caller words the outcome its own
// way (a directive's message, a state file's log line).
#pragma once

#include <cstddef>
#include <string>

namespace solgate {

struct RegularFileRead {
    enum Outcome { kRead, kMissing, kCannotOpen, kNotRegular, kTooLarge,
                   kCannotRead };
    Outcome outcome = kRead;
    int error = 0;   // errno, for kCannotOpen and kCannotRead

    bool ok() const { return outcome == kRead; }
};

// Reads `path` into *out (cleared on any failure). follow_symlinks false:
// a symbolic link in its place is not followed (kCannotOpen, ELOOP).
RegularFileRead ReadRegularFile(const std::string& path, size_t max_bytes,
                                bool follow_symlinks, std::string* out);

}  // namespace solgate
