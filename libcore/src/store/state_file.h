// A small file of durable state, written whole and never in place.
//
// WriteStateFile takes an exclusive flock(2) on the directory, so two
// processes (or a worker and its own poller thread, each with its own
// descriptor) never interleave their saves; it asks `produce` for the
// contents under that lock, so whoever saves last writes the newest
// state (or nothing: produce may decline). The contents go to a temp file
// of the process, which is fsynced, renamed over the old file, and the
// directory fsynced: a reader, a crash or a power cut sees the old file
// or the new one, never a mix, and a save that returned kWritten is on
// disk. ReadStateFileLocked reads under the same lock, so a reader that
// then tells writers to stop (operator_state.h) misses no save.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace solgate {

enum class StateFileWrite { kWritten, kDeclined, kFailed };

// Writes produce() to dir/name as said above; kDeclined (nothing written)
// when it gives nullopt; kFailed with *error ("cannot save "PATH": write:
// No space left on device").
StateFileWrite WriteStateFile(
    const std::string& dir, const std::string& name,
    const std::function<std::optional<std::string>()>& produce,
    std::string* error);

enum class StateFileRead { kRead, kMissing, kFailed };

// The whole file at `path` into *out: kMissing when there is none,
// kFailed with *error when it cannot be read or is larger than max_bytes.
StateFileRead ReadStateFile(const std::string& path, size_t max_bytes,
                            std::string* out, std::string* error);
// The same for dir/name, under the directory's lock (a missing directory
// is a missing file).
StateFileRead ReadStateFileLocked(const std::string& dir,
                                  const std::string& name, size_t max_bytes,
                                  std::string* out, std::string* error);

// Why `dir` cannot hold state files, for `nginx -t`: it exists but is
// not a directory, or this process cannot create files in it. "" when it
// can, or does not exist yet (nginx creates it).
std::string StateDirProblem(const std::string& dir);

}  // namespace solgate
