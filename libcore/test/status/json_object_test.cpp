// The JSON object and array writers of the state page (json_object.h).
#include "status/json_object.h"

#include <gtest/gtest.h>

#include <string>

namespace solgate {
namespace {

TEST(StatusJsonObject, EmptyObjectAndArray) {
    std::string out;
    JsonObject o(out);
    JsonArray a(o.Key("a"));
    a.Close();
    o.Close();
    EXPECT_EQ(out, R"({"a":[]})");
}

TEST(StatusJsonObject, MembersInOrderWithCommas) {
    std::string out;
    JsonObject o(out);
    o.Uint("u", 18446744073709551615ull);
    o.Int("i", -3);
    o.Bool("t", true);
    o.Bool("f", false);
    o.String("s", "a \"quoted\" \\ line\n");
    o.Null("n");
    JsonArray list(o.Key("list"));
    list.Next() += "1";
    JsonObject inner(list.Next());
    inner.Close();
    list.Close();
    o.Close();
    EXPECT_EQ(out, R"({"u":18446744073709551615,"i":-3,"t":true,"f":false,)"
                   R"("s":"a \"quoted\" \\ line\n","n":null,"list":[1,{}]})");
}

}  // namespace
}  // namespace solgate
