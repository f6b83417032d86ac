// `upstream ID URL [options]` in a solgate_network block.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conf/upstream_args.h"

namespace solgate::conf {
namespace {

std::optional<std::string> Parse(std::vector<std::string_view> args,
                                 UpstreamArgs* out) {
    return ParseUpstreamArgs(
        args, [](std::string_view id) -> std::optional<std::string> {
            if (id == "taken") return std::string("duplicate upstream \"taken\"");
            return std::nullopt;
        },
        out);
}

TEST(UpstreamArgs, TheUrlGetsAPathAndTheHostItsAuthority) {
    UpstreamArgs u;
    ASSERT_FALSE(Parse({"a", "http://sol_a"}, &u));
    EXPECT_EQ(u.id, "a");
    EXPECT_EQ(u.target.url, "http://sol_a/");
    EXPECT_EQ(u.target.host, "sol_a");
    EXPECT_EQ(u.target.authority, "sol_a");
    EXPECT_EQ(u.target.path, "/");
    EXPECT_FALSE(u.target.https);
    EXPECT_TRUE(u.tags.empty());
}

TEST(UpstreamArgs, Options) {
    UpstreamArgs u;
    ASSERT_FALSE(Parse({"vendor-1", "https://vendor_pool/v1/KEY",
                        "host=rpc.vendor.example", "tags=family:vendor,region:eu",
                        "methods=get*|sendTransaction",
                        "ignore_methods=getProgramAccounts"},
                       &u));
    EXPECT_EQ(u.target.url, "https://vendor_pool/v1/KEY");
    EXPECT_EQ(u.target.host, "rpc.vendor.example");
    EXPECT_EQ(u.target.authority, "vendor_pool");
    EXPECT_EQ(u.target.path, "/v1/KEY");
    EXPECT_TRUE(u.target.https);
    EXPECT_EQ(u.tags, (std::vector<std::string>{"family:vendor", "region:eu"}));
    EXPECT_EQ(u.methods, (std::vector<std::string>{"get*", "sendTransaction"}));
    EXPECT_EQ(u.ignore_methods, (std::vector<std::string>{"getProgramAccounts"}));
}

TEST(UpstreamArgs, MessagesNameTheUpstreamAndQuoteTheToken) {
    UpstreamArgs u;
    EXPECT_EQ(Parse({"a b", "http://x"}, &u),
              "invalid upstream id \"a b\": may contain only letters, digits, "
              "'-', '_' and '.'");
    EXPECT_EQ(Parse({"taken", "http://x"}, &u), "duplicate upstream \"taken\"");
    EXPECT_EQ(Parse({"a", "127.0.0.1:8899"}, &u),
              "invalid upstream URL \"127.0.0.1:8899\": must start with "
              "\"http://\" or \"https://\"");
    EXPECT_EQ(Parse({"a", "http://x", "host="}, &u),
              "empty \"host=\" in upstream \"a\"");
    EXPECT_EQ(Parse({"a", "http://x", "tags=family"}, &u),
              "invalid tags \"family\" in upstream \"a\": must be a list of "
              "key:value pairs, as in \"family:archive,region:us\"");
    EXPECT_EQ(Parse({"a", "http://x", "methods=getBlock||getSlot"}, &u),
              "invalid method list \"getBlock||getSlot\" in upstream \"a\": "
              "has an empty method name");
    EXPECT_EQ(Parse({"a", "http://x", "ignore_methods=a,b"}, &u),
              "invalid method list \"a,b\" in upstream \"a\": method names may "
              "contain only letters, digits, '_' and '*', joined by '|'");
    EXPECT_EQ(Parse({"a", "http://x", "weight=2"}, &u),
              "invalid parameter \"weight=2\" in upstream \"a\", expected "
              "\"host=\", \"tags=\", \"methods=\" or \"ignore_methods=\"");
    EXPECT_TRUE(Parse({"a"}, &u));
}

}  // namespace
}  // namespace solgate::conf
