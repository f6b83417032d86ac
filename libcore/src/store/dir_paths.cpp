#include "store/dir_paths.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "base/error_out.h"

namespace solgate {

std::string StripTrailingSlashes(std::string path) {
    while (path.size() > 1 && path.back() == '/') {
        path.pop_back();
    }
    return path;
}

bool MakeDir(const std::string& path, mode_t mode) {
    if (mkdir(path.c_str(), mode) == 0) {
        return true;
    }
    if (errno != EEXIST) {
        return false;
    }
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
        return false;
    }
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return false;
    }
    return true;
}

bool MakeDirs(const std::string& path, mode_t mode, const char* error_prefix,
              std::string* error) {
    for (size_t i = 1; i <= path.size(); i++) {
        if (i < path.size() && path[i] != '/') {
            continue;
        }
        std::string part = path.substr(0, i);
        if (!MakeDir(part, mode)) {
            int err = errno;
            return Fail(error, std::string(error_prefix) + ": mkdir " +
                                   part + ": " + std::strerror(err));
        }
    }
    return true;
}

}  // namespace solgate
