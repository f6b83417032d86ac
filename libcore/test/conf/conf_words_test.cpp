// The words of Solgate's nginx.conf blocks: names, URLs, tags, method lists.
#include <gtest/gtest.h>

#include <string>

#include "conf/conf_words.h"

namespace solgate::conf {
namespace {

TEST(ParseHttpUrl, PlainHost) {
    HttpUrl url;
    EXPECT_FALSE(ParseHttpUrl("http://sol_a", &url));
    EXPECT_EQ(url.authority, "sol_a");
    EXPECT_EQ(url.path, "");
    EXPECT_FALSE(url.https);
}

TEST(ParseHttpUrl, HttpsWithPathAndKey) {
    HttpUrl url;
    EXPECT_FALSE(ParseHttpUrl("https://rpc.vendor.example:443/v1/KEY?x=1", &url));
    EXPECT_TRUE(url.https);
    EXPECT_EQ(url.authority, "rpc.vendor.example:443");
    EXPECT_EQ(url.path, "/v1/KEY?x=1");
}

TEST(ParseHttpUrl, Rejects) {
    HttpUrl url;
    EXPECT_EQ(ParseHttpUrl("ftp://x", &url),
              "must start with \"http://\" or \"https://\"");
    EXPECT_TRUE(ParseHttpUrl("sol_a", &url));
    EXPECT_EQ(ParseHttpUrl("http://", &url), "has no host");
    EXPECT_EQ(ParseHttpUrl("http:///path", &url), "has no host");
    EXPECT_EQ(ParseHttpUrl("http://a b", &url),
              "contains a space, a control character or '#'");
    EXPECT_TRUE(ParseHttpUrl("http://a/#frag", &url));
    EXPECT_EQ(ParseHttpUrl("http://u:p@host/", &url),
              "must not contain credentials before the host");
    EXPECT_EQ(ParseHttpUrl("http://host?k=1", &url),
              "must have a path before the query, as in \"/?key=...\"");
    EXPECT_TRUE(ParseHttpUrl("http://h\x01/", &url));
}

TEST(ParseHttpUrl, APortIsFrom1To65535) {
    HttpUrl url;
    const std::string_view bad = "has a port that is not a number from 1 to 65535";
    for (const char* u : {"http://127.0.0.1:99999", "http://h:0/", "http://h:/",
                          "http://h:8x99", "http://[::1]:70000/", "http://h:4294967297"}) {
        EXPECT_EQ(ParseHttpUrl(u, &url), bad) << u;
    }
    for (const char* u : {"http://127.0.0.1:65535", "http://h:1/", "http://[::1]/",
                          "http://[::1]:8899/", "http://sol_a"}) {
        EXPECT_FALSE(ParseHttpUrl(u, &url)) << u;
    }
}

TEST(CheckName, WordsUpTo64) {
    EXPECT_FALSE(CheckName("node-a"));
    EXPECT_FALSE(CheckName("vendor_1.eu"));
    EXPECT_FALSE(CheckName(std::string(64, 'x')));
    EXPECT_EQ(CheckName(""), "must be 1 to 64 characters long");
    EXPECT_EQ(CheckName(std::string(65, 'x')), "must be 1 to 64 characters long");
    EXPECT_EQ(CheckName("a b"),
              "may contain only letters, digits, '-', '_' and '.'");
    EXPECT_TRUE(CheckName("a*"));
    EXPECT_TRUE(CheckName("a:b"));
}

TEST(CheckTags, KeyValuePairs) {
    EXPECT_FALSE(CheckTags("family:archive"));
    EXPECT_FALSE(CheckTags("family:ledger,region:us"));
    for (const char* bad : {"", "family", "family:", ":x", "a:b,", "a:b,,c:d"}) {
        EXPECT_EQ(CheckTags(bad),
                  "must be a list of key:value pairs, as in "
                  "\"family:archive,region:us\"")
            << bad;
    }
    EXPECT_EQ(CheckTags("a:b:c"), "has a pair with more than one ':'");
    EXPECT_TRUE(CheckTags("a:b c"));
}

TEST(CheckMethods, NamesAndGlobsJoinedByBars) {
    EXPECT_FALSE(CheckMethods("getBlock"));
    EXPECT_FALSE(CheckMethods("getBlock|getTransaction"));
    EXPECT_FALSE(CheckMethods("get*|simulateTransaction"));
    for (const char* empty : {"", "getBlock|", "|getBlock", "getBlock||getSlot"}) {
        EXPECT_EQ(CheckMethods(empty), "has an empty method name") << empty;
    }
    EXPECT_TRUE(CheckMethods("getBlock,getSlot"));
    EXPECT_TRUE(CheckMethods("get-Block"));
}

}  // namespace
}  // namespace solgate::conf
