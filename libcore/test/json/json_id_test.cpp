#include "json/json_id.h"

#include <gtest/gtest.h>

#include <string>

namespace solgate {
namespace {

TEST(DecodeJsonString, EscapesAreDecodedToUtf8) {
    std::string v;
    ASSERT_TRUE(DecodeJsonString(R"("a\/b\"\\\b\f\n\r\t")", &v));
    EXPECT_EQ(v, "a/b\"\\\b\f\n\r\t");
    ASSERT_TRUE(DecodeJsonString(R"("caf\u00e9 \u20AC \ud83d\ude00")", &v));
    EXPECT_EQ(v, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    ASSERT_TRUE(DecodeJsonString(R"("")", &v));
    EXPECT_EQ(v, "");
}

TEST(DecodeJsonString, WhatIsNoStringIsRefused) {
    std::string v;
    for (const char* bad : {"", "\"", "abc", "\"a\\\"", R"("\x")", R"("\u12")",
                            R"("\u12G4")", R"("\ud83d")", R"("\ude00")",
                            R"("\ud83d\u0041")", R"("a"b")", "5", "null"}) {
        EXPECT_FALSE(DecodeJsonString(bad, &v)) << bad;
    }
}

}  // namespace
}  // namespace solgate
