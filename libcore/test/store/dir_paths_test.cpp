// Directory paths of the stores: normalising them and creating them.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "store/dir_paths.h"
#include "support/temp_dir.h"

namespace solgate {
namespace {

bool IsDirectory(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

mode_t Mode(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

void Touch(const std::string& path) {
    std::ofstream out(path);
    out << "x";
}

// Leaves the process's umask as it was, whatever the test set.
class UmaskFor {
public:
    explicit UmaskFor(mode_t mask) : old_(umask(mask)) {}
    ~UmaskFor() { umask(old_); }

private:
    mode_t old_;
};

TEST(StripTrailingSlashes, KeepsTheRootAndEverythingElse) {
    EXPECT_EQ(StripTrailingSlashes("/var/cache/solgate/"),
              "/var/cache/solgate");
    EXPECT_EQ(StripTrailingSlashes("/var/cache//"), "/var/cache");
    EXPECT_EQ(StripTrailingSlashes("/var/cache"), "/var/cache");
    EXPECT_EQ(StripTrailingSlashes("relative/dir/"), "relative/dir");
    EXPECT_EQ(StripTrailingSlashes("/"), "/");
    EXPECT_EQ(StripTrailingSlashes("///"), "/");
    EXPECT_EQ(StripTrailingSlashes(""), "");
    // Only trailing ones: a doubled slash inside stays.
    EXPECT_EQ(StripTrailingSlashes("/a//b/"), "/a//b");
}

TEST(MakeDir, CreatesOrFindsADirectory) {
    TempDir dir("solgate-dir-paths");
    std::string path = dir.path() + "/new";
    EXPECT_TRUE(MakeDir(path, 0700));
    EXPECT_TRUE(IsDirectory(path));
    EXPECT_TRUE(MakeDir(path, 0700));   // already there
}

TEST(MakeDir, SomethingElseInTheWayIsNotADirectory) {
    TempDir dir("solgate-dir-paths");
    std::string path = dir.path() + "/file";
    Touch(path);
    errno = 0;
    EXPECT_FALSE(MakeDir(path, 0700));
    EXPECT_EQ(errno, ENOTDIR);
}

TEST(MakeDir, NeedsItsParent) {
    TempDir dir("solgate-dir-paths");
    errno = 0;
    EXPECT_FALSE(MakeDir(dir.path() + "/missing/child", 0700));
    EXPECT_EQ(errno, ENOENT);
}

TEST(MakeDir, UsesTheModeGiven) {
    TempDir dir("solgate-dir-paths");
    UmaskFor no_mask(0);
    ASSERT_TRUE(MakeDir(dir.path() + "/private", 0700));
    ASSERT_TRUE(MakeDir(dir.path() + "/shared", 0755));
    EXPECT_EQ(Mode(dir.path() + "/private"), 0700u);
    EXPECT_EQ(Mode(dir.path() + "/shared"), 0755u);
}

TEST(MakeDirs, CreatesEveryMissingParent) {
    TempDir dir("solgate-dir-paths");
    UmaskFor no_mask(0);
    std::string path = dir.path() + "/a/b/c";
    std::string error;
    EXPECT_TRUE(MakeDirs(path, 0750, "test", &error)) << error;
    EXPECT_EQ(error, "");
    EXPECT_TRUE(IsDirectory(path));
    EXPECT_EQ(Mode(dir.path() + "/a"), 0750u);
    EXPECT_EQ(Mode(dir.path() + "/a/b"), 0750u);
    EXPECT_EQ(Mode(path), 0750u);
    // Existing directories keep their mode.
    EXPECT_EQ(Mode(dir.path()), 0700u);
    EXPECT_TRUE(MakeDirs(path, 0700, "test", &error)) << error;
    EXPECT_EQ(Mode(path), 0750u);
}

TEST(MakeDirs, ToleratesATrailingSlash) {
    TempDir dir("solgate-dir-paths");
    std::string error;
    EXPECT_TRUE(MakeDirs(dir.path() + "/x/y/", 0700, "test", &error))
        << error;
    EXPECT_TRUE(IsDirectory(dir.path() + "/x/y"));
}

TEST(MakeDirs, NamesThePartThatFailed) {
    TempDir dir("solgate-dir-paths");
    Touch(dir.path() + "/file");
    std::string error;
    EXPECT_FALSE(MakeDirs(dir.path() + "/file/sub/leaf", 0700, "block cache",
                          &error));
    EXPECT_EQ(error, "block cache: mkdir " + dir.path() + "/file: " +
                         std::strerror(ENOTDIR));
    EXPECT_FALSE(IsDirectory(dir.path() + "/file/sub"));
    // Without a place for the message it still fails.
    EXPECT_FALSE(MakeDirs(dir.path() + "/file/sub", 0700, "x", nullptr));
}

}  // namespace
}  // namespace solgate
