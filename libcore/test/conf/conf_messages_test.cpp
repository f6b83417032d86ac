#include "conf/conf_messages.h"

#include <gtest/gtest.h>

namespace solgate::conf {
namespace {

TEST(ConfMessages, ReadLikeNginxOwn) {
    EXPECT_EQ(Quoted("a b"), "\"a b\"");
    EXPECT_EQ(Quoted(""), "\"\"");
    EXPECT_EQ(Duplicate("cluster"), "\"cluster\" directive is duplicate");
    EXPECT_EQ(TooMany("peers", 16), "too many peers (at most 16)");
}

}  // namespace
}  // namespace solgate::conf
