#include "capi/c_api_util.h"

#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

namespace solgate::capi {
namespace {

TEST(CApiUtil, AThrowingStepFailsClosedAndSaysWhy) {
    char err[64] = "";
    EXPECT_EQ(Configure(err, sizeof(err),
                        []() -> std::optional<std::string> {
                            throw std::bad_alloc();
                        }),
              SG_ERROR);
    EXPECT_STREQ(err, "out of memory");
    EXPECT_EQ(RunReporting(err, sizeof(err), SG_INVALID,
                           [](std::string*) -> bool {
                               throw std::logic_error("a caught bug");
                           }),
              SG_ERROR);
    EXPECT_STREQ(err, "internal error: a caught bug");
    EXPECT_EQ(Configure(err, sizeof(err),
                        []() -> std::optional<std::string> { throw 7; }),
              SG_ERROR);
    EXPECT_STREQ(err, "internal error");
}

TEST(CApiUtil, MessagesAreCutToTheBuffer) {
    char err[6];
    CopyError("a long message", err, sizeof(err));
    EXPECT_STREQ(err, "a lon");
    CopyError("ignored", nullptr, 10);
    CopyError("ignored", err, 0);
    EXPECT_STREQ(err, "a lon");
    EXPECT_EQ(NullArgument(err, sizeof(err)), SG_INVALID);
    EXPECT_STREQ(err, "a req");
}

}  // namespace
}  // namespace solgate::capi
