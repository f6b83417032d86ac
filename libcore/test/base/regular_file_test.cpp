// A small regular file read whole, and each reason it is not.
#include "base/regular_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "support/temp_dir.h"

namespace solgate {
namespace {

TEST(RegularFile, ReadWholeUpToItsLimit) {
    TempDir dir("regular-file");
    std::ofstream(dir.path() + "/ten") << "0123456789";
    std::string text = "old";
    EXPECT_TRUE(ReadRegularFile(dir.path() + "/ten", 10, true, &text).ok());
    EXPECT_EQ(text, "0123456789");
    EXPECT_EQ(ReadRegularFile(dir.path() + "/ten", 9, true, &text).outcome,
              RegularFileRead::kTooLarge);
    EXPECT_EQ(text, "");
    EXPECT_EQ(ReadRegularFile(dir.path() + "/none", 9, true, &text).outcome,
              RegularFileRead::kMissing);
}

TEST(RegularFile, NeitherAFifoNorADirectoryNorALinkWhenNotFollowed) {
    TempDir dir("regular-file-kinds");
    std::string text;
    ASSERT_EQ(mkfifo((dir.path() + "/fifo").c_str(), 0600), 0);
    EXPECT_EQ(ReadRegularFile(dir.path() + "/fifo", 100, true, &text).outcome,
              RegularFileRead::kNotRegular)
        << "and it did not wait for a writer";
    EXPECT_EQ(ReadRegularFile(dir.path(), 100, true, &text).outcome,
              RegularFileRead::kNotRegular);

    std::ofstream(dir.path() + "/real") << "x";
    ASSERT_EQ(symlink((dir.path() + "/real").c_str(),
                      (dir.path() + "/link").c_str()),
              0);
    EXPECT_TRUE(ReadRegularFile(dir.path() + "/link", 100, true, &text).ok());
    EXPECT_EQ(text, "x");
    RegularFileRead refused =
        ReadRegularFile(dir.path() + "/link", 100, false, &text);
    EXPECT_EQ(refused.outcome, RegularFileRead::kCannotOpen);
    EXPECT_EQ(refused.error, ELOOP);
}

}  // namespace
}  // namespace solgate
