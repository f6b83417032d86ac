#include "base/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace solgate {
namespace {

RegularFileRead Failed(RegularFileRead::Outcome outcome, int error,
                       std::string* out) {
    out->clear();
    return {outcome, error};
}

}  // namespace

RegularFileRead ReadRegularFile(const std::string& path, size_t max_bytes,
                                bool follow_symlinks, std::string* out) {
    int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK |
                (follow_symlinks ? 0 : O_NOFOLLOW);
    int fd = open(path.c_str(), flags);
    if (fd < 0) {
        int e = errno;
        return Failed(e == ENOENT ? RegularFileRead::kMissing
                                  : RegularFileRead::kCannotOpen,
                      e, out);
    }
    RegularFileRead result;
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        result = Failed(RegularFileRead::kCannotOpen, errno, out);
    } else if (!S_ISREG(st.st_mode)) {
        result = Failed(RegularFileRead::kNotRegular, 0, out);
    } else {
        out->clear();
        char buf[16384];
        for (;;) {
            ssize_t n = read(fd, buf, sizeof(buf));
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n < 0) {
                result = Failed(RegularFileRead::kCannotRead, errno, out);
                break;
            }
            if (n == 0) {
                break;
            }
            if (out->size() + static_cast<size_t>(n) > max_bytes) {
                result = Failed(RegularFileRead::kTooLarge, 0, out);
                break;
            }
            out->append(buf, static_cast<size_t>(n));
        }
    }
    close(fd);
    return result;
}

}  // namespace solgate
