// A scratch directory for a test, gone with everything in it afterwards.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace solgate {

// A fresh directory /tmp/<name>.XXXXXX, removed with everything in it
// when destroyed. path() is "" when it could not be created.
class TempDir {
public:
    explicit TempDir(const std::string& name) {
        std::string pattern = "/tmp/" + name + ".XXXXXX";
        if (mkdtemp(&pattern[0]) != nullptr) {
            path_ = pattern;
        }
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ignored;
        if (!path_.empty()) {
            std::filesystem::remove_all(path_, ignored);
        }
    }

    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace solgate
