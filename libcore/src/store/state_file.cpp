#include "store/state_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/error_out.h"
#include "base/regular_file.h"

namespace solgate {
namespace {

// Closes a descriptor when it goes out of scope (which also drops a
// flock held through it).
class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) {
            close(fd_);
        }
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;

    int get() const { return fd_; }
    // Closes it now; false (errno set) when close reports a failure.
    bool Close() {
        int fd = fd_;
        fd_ = -1;
        return close(fd) == 0;
    }

private:
    int fd_;
};

StateFileWrite Failed(std::string* error, const std::string& path,
                      const char* step) {
    int err = errno;
    Fail(error, "cannot save \"" + path + "\": " + step + ": " +
                    std::strerror(err));
    return StateFileWrite::kFailed;
}

bool WriteAll(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        done += static_cast<size_t>(n);
    }
    return true;
}

// How long a save or a read waits for another process's lock: whoever
// holds it (anyone who may open the directory can) delays the admin
// answer or nginx's start by this much at most, never for ever.
constexpr int kLockTries = 200;
constexpr useconds_t kLockPauseUs = 10000;   // 2 s in all

int LockExclusive(int fd) {
    for (int tries = 0;; tries++) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            return 0;
        }
        if (errno != EWOULDBLOCK && errno != EINTR) {
            return -1;
        }
        if (tries + 1 >= kLockTries) {
            errno = EWOULDBLOCK;
            return -1;
        }
        usleep(kLockPauseUs);
    }
}

}  // namespace

StateFileWrite WriteStateFile(
    const std::string& dir, const std::string& name,
    const std::function<std::optional<std::string>()>& produce,
    std::string* error) {
    const std::string path = dir + "/" + name;
    Fd dir_fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir_fd.get() < 0) {
        return Failed(error, path, "open its directory");
    }
    if (LockExclusive(dir_fd.get()) != 0) {
        return Failed(error, path, "lock its directory");
    }
    const std::optional<std::string> produced = produce();
    if (!produced) {
        return StateFileWrite::kDeclined;
    }
    const std::string& text = *produced;
    const std::string temp =
        dir + "/." + name + ".tmp." + std::to_string(getpid());
    // one a process of the same pid left, or a link planted in its place:
    // gone, and the new one made, never followed
    unlink(temp.c_str());
    Fd fd(open(temp.c_str(),
               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (fd.get() < 0) {
        return Failed(error, path, "create its temp file");
    }
    const char* step = nullptr;
    if (!WriteAll(fd.get(), text)) {
        step = "write";
    } else if (fsync(fd.get()) != 0) {
        step = "fsync";
    } else if (!fd.Close()) {
        step = "close";
    } else if (rename(temp.c_str(), path.c_str()) != 0) {
        step = "rename";
    }
    if (step != nullptr) {
        int err = errno;
        unlink(temp.c_str());
        errno = err;
        return Failed(error, path, step);
    }
    // the rename itself must reach the disk before the save counts
    if (fsync(dir_fd.get()) != 0) {
        return Failed(error, path, "fsync its directory");
    }
    return StateFileWrite::kWritten;
}

StateFileRead ReadStateFile(const std::string& path, size_t max_bytes,
                            std::string* out, std::string* error) {
    // not through a symbolic link: the state is Solgate's own file
    RegularFileRead read = ReadRegularFile(path, max_bytes, false, out);
    switch (read.outcome) {
    case RegularFileRead::kRead:
        return StateFileRead::kRead;
    case RegularFileRead::kMissing:
        return StateFileRead::kMissing;
    case RegularFileRead::kCannotOpen:
        Fail(error, std::string("open: ") + std::strerror(read.error));
        break;
    case RegularFileRead::kNotRegular:
        Fail(error, "not a regular file");
        break;
    case RegularFileRead::kTooLarge:
        Fail(error, "larger than " + std::to_string(max_bytes) + " bytes");
        break;
    case RegularFileRead::kCannotRead:
        Fail(error, std::string("read: ") + std::strerror(read.error));
        break;
    }
    return StateFileRead::kFailed;
}

StateFileRead ReadStateFileLocked(const std::string& dir,
                                  const std::string& name, size_t max_bytes,
                                  std::string* out, std::string* error) {
    Fd dir_fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir_fd.get() < 0) {
        if (errno == ENOENT) {
            return StateFileRead::kMissing;
        }
        Fail(error, std::string("open its directory: ") + std::strerror(errno));
        return StateFileRead::kFailed;
    }
    if (LockExclusive(dir_fd.get()) != 0) {
        Fail(error, std::string("lock its directory: ") + std::strerror(errno));
        return StateFileRead::kFailed;
    }
    return ReadStateFile(dir + "/" + name, max_bytes, out, error);
}

std::string StateDirProblem(const std::string& dir) {
    struct stat st;
    if (stat(dir.c_str(), &st) != 0) {
        if (errno == ENOENT) {
            return "";
        }
        if (errno == ENOTDIR) {
            return "cannot be a directory: a part of its path is a file";
        }
        return std::string("cannot be looked at: ") + std::strerror(errno);
    }
    if (!S_ISDIR(st.st_mode)) {
        return "is not a directory";
    }
    if (access(dir.c_str(), W_OK | X_OK) != 0) {
        return std::string("is not writable: ") + std::strerror(errno);
    }
    return "";
}

}  // namespace solgate
