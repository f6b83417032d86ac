// Directory paths of the stores: normalising them and creating them.
#pragma once

#include <sys/types.h>

#include <string>

namespace solgate {

// `path` without trailing slashes ("/" stays "/").
std::string StripTrailingSlashes(std::string path);

// Creates the directory `path` (its parent must exist); true also when it
// exists already as a directory. Else false with errno set (ENOTDIR when
// something else is there).
bool MakeDir(const std::string& path, mode_t mode);

// Creates `path` and its missing parents with `mode`. False with *error,
// "<error_prefix>: mkdir <the failing part>: <strerror>", on failure.
bool MakeDirs(const std::string& path, mode_t mode, const char* error_prefix,
              std::string* error);

}  // namespace solgate
