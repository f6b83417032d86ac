// A small file of durable state, written whole and never in place.
//
// WriteStateFile takes an exclusive flock(2) on the directory, so two
// processes (or a worker and its own poller thread, each with its own
// descriptor) never interleave their saves; it asks `produce` for the
// contents under that lock, so whoever saves last writes the newest
// state. The contents go to a temp file of the process, which is fsynced,
// renamed over the old file, and the directory fsynced: a reader, a crash
// or a power cut sees the old file or the new one, never a mix, and a
// save that returned true is on disk.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace solgate {

// Writes produce() to dir/name as said above. False with *error
// ("cannot save "PATH": write: No space left on device").
bool WriteStateFile(const std::string& dir, const std::string& name,
                    const std::function<std::string()>& produce,
                    std::string* error);

enum class StateFileRead { kRead, kMissing, kFailed };

// The whole file at `path` into *out: kMissing when there is none,
// kFailed with *error when it cannot be read or is larger than max_bytes.
StateFileRead ReadStateFile(const std::string& path, size_t max_bytes,
                            std::string* out, std::string* error);

// Why `dir` cannot hold state files, for `nginx -t`: it exists but is
// not a directory, or this process cannot create files in it. "" when it
// can, or does not exist yet (nginx creates it).
std::string StateDirProblem(const std::string& dir);

}  // namespace solgate
