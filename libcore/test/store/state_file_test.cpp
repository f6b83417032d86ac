// Small state files written whole: atomically, one writer at a time
// across processes, with the contents decided under the lock.
#include "store/state_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace solgate {
namespace {

std::string ReadOrEmpty(const std::string& path) {
    std::string text, error;
    return ReadStateFile(path, 1 << 20, &text, &error) == StateFileRead::kRead
               ? text
               : "";
}

// Everything in dir, dot files (a temp file) included.
size_t Entries(const std::string& dir) {
    size_t n = 0;
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) {
        return 0;
    }
    while (dirent* e = readdir(d)) {
        std::string name = e->d_name;
        n += name != "." && name != ".." ? 1 : 0;
    }
    closedir(d);
    return n;
}

TEST(StateFile, WritesWholeAndLeavesNoTempFile) {
    TempDir dir("state-file");
    std::string error;
    auto text = [](const char* t) {
        return [t]() -> std::optional<std::string> { return t; };
    };
    ASSERT_EQ(StateFileWrite::kWritten,
              WriteStateFile(dir.path(), "s.json", text("first\n"), &error))
        << error;
    ASSERT_EQ(StateFileWrite::kWritten,
              WriteStateFile(dir.path(), "s.json", text("second\n"), &error))
        << error;
    EXPECT_EQ(ReadOrEmpty(dir.path() + "/s.json"), "second\n");
    EXPECT_EQ(Entries(dir.path()), 1u);
}

TEST(StateFile, AFailedSaveSaysWhatAndWhere) {
    TempDir dir("state-file");
    std::string error;
    auto x = []() -> std::optional<std::string> { return "x"; };
    EXPECT_EQ(StateFileWrite::kFailed,
              WriteStateFile(dir.path() + "/missing", "s.json", x, &error));
    EXPECT_EQ(error, "cannot save \"" + dir.path() +
                         "/missing/s.json\": open its directory: No such "
                         "file or directory");
    // the file's name is taken by a directory: the rename fails, and the
    // temp file is gone
    ASSERT_EQ(mkdir((dir.path() + "/s.json").c_str(), 0755), 0);
    EXPECT_EQ(StateFileWrite::kFailed,
              WriteStateFile(dir.path(), "s.json", x, &error));
    EXPECT_EQ(error, "cannot save \"" + dir.path() +
                         "/s.json\": rename: Is a directory");
    EXPECT_EQ(Entries(dir.path()), 1u);
}

// produce() may decline under the lock: nothing is written.
TEST(StateFile, ADeclinedSaveWritesNothing) {
    TempDir dir("state-file");
    std::string error;
    ASSERT_EQ(StateFileWrite::kWritten,
              WriteStateFile(dir.path(), "s.json",
                             []() -> std::optional<std::string> {
                                 return "kept";
                             },
                             &error));
    EXPECT_EQ(StateFileWrite::kDeclined,
              WriteStateFile(dir.path(), "s.json",
                             []() -> std::optional<std::string> {
                                 return std::nullopt;
                             },
                             &error));
    EXPECT_EQ(ReadOrEmpty(dir.path() + "/s.json"), "kept");
    EXPECT_EQ(Entries(dir.path()), 1u);
    std::string text;
    EXPECT_EQ(ReadStateFileLocked(dir.path(), "s.json", 100, &text, &error),
              StateFileRead::kRead);
    EXPECT_EQ(text, "kept");
    EXPECT_EQ(ReadStateFileLocked(dir.path() + "/none", "s.json", 100, &text,
                                  &error),
              StateFileRead::kMissing);
}

TEST(StateFile, ReadsWhatIsThereAndRefusesTheRest) {
    TempDir dir("state-file");
    std::string text, error;
    EXPECT_EQ(ReadStateFile(dir.path() + "/none", 100, &text, &error),
              StateFileRead::kMissing);
    std::ofstream(dir.path() + "/big") << std::string(101, 'x');
    EXPECT_EQ(ReadStateFile(dir.path() + "/big", 100, &text, &error),
              StateFileRead::kFailed);
    EXPECT_EQ(error, "larger than 100 bytes");
    EXPECT_EQ(ReadStateFile(dir.path(), 100, &text, &error),
              StateFileRead::kFailed);
    EXPECT_EQ(error, "not a regular file");
    EXPECT_EQ(ReadStateFile(dir.path() + "/big", 101, &text, &error),
              StateFileRead::kRead);
    EXPECT_EQ(text.size(), 101u);
}

TEST(StateFile, DirectoryProblemsForNginxT) {
    TempDir dir("state-file");
    std::ofstream(dir.path() + "/file") << "x";
    EXPECT_EQ(StateDirProblem(dir.path()), "");
    EXPECT_EQ(StateDirProblem(dir.path() + "/not-yet"), "");
    EXPECT_EQ(StateDirProblem(dir.path() + "/file"), "is not a directory");
    EXPECT_EQ(StateDirProblem(dir.path() + "/file/sub"),
              "cannot be a directory: a part of its path is a file");
    if (geteuid() != 0) {   // root may write anywhere
        ASSERT_EQ(mkdir((dir.path() + "/ro").c_str(), 0555), 0);
        EXPECT_EQ(StateDirProblem(dir.path() + "/ro"),
                  "is not writable: Permission denied");
    }
}

// Each of two processes adds 1 to the number in the file 100 times: the
// contents are decided under the lock, so no addition is lost.
TEST(StateFile, SavesFromSeveralProcessesNeverInterleave) {
    TempDir dir("state-file");
    const std::string path = dir.path() + "/count";
    auto add_one = [&] {
        std::string error;
        return WriteStateFile(
                   dir.path(), "count",
                   [&]() -> std::optional<std::string> {
                       std::string now = ReadOrEmpty(path);
                       return std::to_string(
                           (now.empty() ? 0 : std::stoi(now)) + 1);
                   },
                   &error) == StateFileWrite::kWritten;
    };
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        bool ok = true;
        for (int k = 0; k < 100; k++) ok = add_one() && ok;
        _exit(ok ? 0 : 1);
    }
    for (int k = 0; k < 100; k++) {
        ASSERT_TRUE(add_one());
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(ReadOrEmpty(path), "200");
    EXPECT_EQ(Entries(dir.path()), 1u);
}

}  // namespace
}  // namespace solgate

namespace solgate {
namespace {

// What another local user may put in the directory never blocks nginx.
TEST(StateFile, AFifoALinkAndAHeldLockNeverBlock) {
    TempDir dir("state-file-hostile");
    std::string text, error;
    ASSERT_EQ(mkfifo((dir.path() + "/fifo").c_str(), 0600), 0);
    EXPECT_EQ(ReadStateFile(dir.path() + "/fifo", 100, &text, &error),
              StateFileRead::kFailed);
    EXPECT_EQ(error, "not a regular file");

    std::ofstream(dir.path() + "/real") << "x";
    ASSERT_EQ(symlink((dir.path() + "/real").c_str(),
                      (dir.path() + "/link").c_str()), 0);
    EXPECT_EQ(ReadStateFile(dir.path() + "/link", 100, &text, &error),
              StateFileRead::kFailed);

    // a link where the temp file goes is replaced, not written through
    std::string victim = dir.path() + "/victim";
    std::ofstream(victim) << "untouched";
    std::string temp = dir.path() + "/.state.tmp." + std::to_string(getpid());
    ASSERT_EQ(symlink(victim.c_str(), temp.c_str()), 0);
    EXPECT_EQ(WriteStateFile(dir.path(), "state",
                             [] { return std::optional<std::string>("new"); },
                             &error),
              StateFileWrite::kWritten)
        << error;
    EXPECT_EQ(ReadOrEmpty(victim), "untouched");
    EXPECT_EQ(ReadOrEmpty(dir.path() + "/state"), "new");

    // another process holds the directory's lock: the save gives up
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    pid_t holder = fork();
    if (holder == 0) {
        int fd = open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
        flock(fd, LOCK_EX);
        (void) !write(ready[1], "x", 1);
        pause();
        _exit(0);
    }
    char c;
    ASSERT_EQ(read(ready[0], &c, 1), 1);
    EXPECT_EQ(WriteStateFile(dir.path(), "state",
                             [] { return std::optional<std::string>("late"); },
                             &error),
              StateFileWrite::kFailed);
    EXPECT_NE(error.find("lock its directory"), std::string::npos) << error;
    kill(holder, SIGKILL);
    waitpid(holder, nullptr, 0);
    close(ready[0]);
    close(ready[1]);
    EXPECT_EQ(ReadOrEmpty(dir.path() + "/state"), "new");
}

}  // namespace
}  // namespace solgate
