// `upstream ID URL [options]` in a solgate_network block.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conf/failsafe_args.h"
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
        "", out);
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
    EXPECT_EQ(Parse({"a", "http://x", "priority=2"}, &u),
              "invalid parameter \"priority=2\" in upstream \"a\", expected "
              "\"host=\", \"tags=\", \"methods=\", \"ignore_methods=\", "
              "\"weight=\", \"backup\", \"max_fails=\", "
              "\"fail_timeout=\", \"debounce=\", \"ws=\" or a \"tls_\" "
              "option");
    EXPECT_EQ(Parse({"a", "http://x", "weight=0"}, &u),
              "invalid \"weight=\" \"0\" in upstream \"a\": must be a number "
              "from 1 to 1000");
    EXPECT_EQ(Parse({"a", "http://x", "max_fails=x"}, &u),
              "invalid \"max_fails=\" \"x\" in upstream \"a\": must be a "
              "number from 0 (never ejected) to 1000");
    EXPECT_EQ(Parse({"a", "http://x", "fail_timeout=10q"}, &u),
              "invalid \"fail_timeout=\" \"10q\" in upstream \"a\": must be "
              "a time from 1ms to 1h, such as 10s");
    EXPECT_EQ(Parse({"a", "http://x", "backup", "backup", "backup", "backup",
                     "backup", "backup", "backup", "backup", "backup",
                     "backup", "backup", "backup", "backup", "backup",
                     "backup", "backup", "backup"}, &u),
              "too many parameters in \"upstream\" \"a\": at most 16 options");
    EXPECT_TRUE(Parse({"a"}, &u));
    // an option given twice: its last value would win unseen
    EXPECT_EQ(Parse({"a", "http://x", "weight=2", "backup", "weight=3"}, &u),
              "\"weight=\" given twice in upstream \"a\"");
    EXPECT_EQ(Parse({"a", "http://x", "backup", "backup"}, &u),
              "\"backup\" given twice in upstream \"a\"");
    // a misspelt one given twice is named for what it is
    EXPECT_EQ(Parse({"a", "http://x", "wieght=2", "wieght=3"}, &u),
              "invalid parameter \"wieght=2\" in upstream \"a\", expected "
              "\"host=\", \"tags=\", \"methods=\", \"ignore_methods=\", "
              "\"weight=\", \"backup\", \"max_fails=\", "
              "\"fail_timeout=\", \"debounce=\", \"ws=\" or a \"tls_\" "
              "option");
    EXPECT_EQ(Parse({"a", "http://x", "ignore_methods=getBlock",
                     "methods=getSlot|getBlock"}, &u),
              "\"getBlock\" is in both \"methods=\" and \"ignore_methods=\" "
              "in upstream \"a\"");
}

TEST(UpstreamArgs, RoutingOptions) {
    UpstreamArgs u;
    ASSERT_FALSE(Parse({"a", "http://x"}, &u));
    EXPECT_EQ(u.routing.weight, 1u);
    EXPECT_FALSE(u.routing.backup);
    EXPECT_EQ(u.routing.max_fails, 1u);           // as nginx's server
    EXPECT_EQ(u.routing.fail_timeout_ms, 10000u);
    ASSERT_FALSE(Parse({"a", "http://x", "weight=5", "backup", "max_fails=3",
                        "fail_timeout=1500ms"}, &u));
    EXPECT_EQ(u.routing.weight, 5u);
    EXPECT_TRUE(u.routing.backup);
    EXPECT_EQ(u.routing.max_fails, 3u);
    EXPECT_EQ(u.routing.fail_timeout_ms, 1500u);
    EXPECT_EQ(u.routing.debounce_ms, 0u);       // the network's
    ASSERT_FALSE(Parse({"a", "http://x", "max_fails=0", "fail_timeout=2m",
                        "debounce=2s"}, &u));
    EXPECT_EQ(u.routing.debounce_ms, 2000u);
    EXPECT_EQ(u.routing.max_fails, 0u);
    EXPECT_EQ(u.routing.fail_timeout_ms, 120000u);
    EXPECT_EQ(Parse({"a", "http://x", "debounce=61s"}, &u),
              "invalid \"debounce=\" \"61s\" in upstream \"a\": must be a "
              "time from 1ms to 60s");
}

TEST(UpstreamArgs, WsNamesThePubsubEndpointAsProxyPassTakesIt) {
    UpstreamArgs u;
    ASSERT_FALSE(Parse({"a", "http://10.0.0.1:8899"}, &u));
    EXPECT_TRUE(u.pubsub.url.empty());  // none: no subscriptions go to it
    ASSERT_FALSE(Parse({"a", "http://10.0.0.1:8899", "ws=ws://10.0.0.1:8900"},
                       &u));
    EXPECT_EQ(u.pubsub.url, "http://10.0.0.1:8900/");
    EXPECT_EQ(u.pubsub.host, "10.0.0.1:8900");
    EXPECT_FALSE(u.pubsub.https);
    ASSERT_FALSE(Parse({"v", "https://rpc.example/KEY",
                        "ws=wss://ws.example/KEY", "host=edge.example"},
                       &u));
    EXPECT_EQ(u.pubsub.url, "https://ws.example/KEY");
    EXPECT_EQ(u.pubsub.host, "edge.example");  // host= names both
    EXPECT_TRUE(u.pubsub.https);
    EXPECT_EQ(Parse({"a", "http://x", "ws=http://x:8900"}, &u),
              "invalid \"ws=\" \"http://x:8900\" in upstream \"a\": must "
              "start with \"ws://\" or \"wss://\"");
    EXPECT_EQ(Parse({"a", "http://x", "ws=ws://"}, &u),
              "invalid \"ws=\" \"ws://\" in upstream \"a\": has no host");
}

TEST(ConfWords, DurationsAsNginxWritesThem) {
    EXPECT_EQ(ParseDurationMs("10s", 3600000), 10000u);
    EXPECT_EQ(ParseDurationMs("10", 3600000), 10000u);   // seconds
    EXPECT_EQ(ParseDurationMs("250ms", 3600000), 250u);
    EXPECT_EQ(ParseDurationMs("1h", 3600000), 3600000u);
    EXPECT_FALSE(ParseDurationMs("2h", 3600000));
    EXPECT_FALSE(ParseDurationMs("ms", 3600000));
    EXPECT_FALSE(ParseDurationMs("1.5s", 3600000));
    EXPECT_FALSE(ParseDurationMs("", 3600000));
    EXPECT_EQ(ParseCount("007", 1, 10), 7u);
    EXPECT_FALSE(ParseCount("11", 1, 10));
    EXPECT_FALSE(ParseCount("-1", 0, 10));
}

TEST(UpstreamArgs, MethodNamesThatAreNoSolanaMethodAreAWarning) {
    EXPECT_FALSE(UnknownMethodsWarning("a", {"getBalance", "get*"}, {"*"}));
    EXPECT_EQ(UnknownMethodsWarning("a", {"getBalanse", "getSlot"},
                                    {"sendTransacton"}),
              "upstream \"a\" names \"getBalanse\", \"sendTransacton\", which "
              "Solgate does not know as Solana methods (a typo keeps every "
              "such call from the upstream)");
}

TEST(FailsafeArgs, RetryMissingData) {
    RetryMissingData r;
    EXPECT_FALSE(ParseRetryMissingData({"on"}, &r));
    EXPECT_TRUE(r.on);
    EXPECT_EQ(r.attempts, 2u);
    EXPECT_EQ(r.delay_ms, 150u);
    EXPECT_FALSE(ParseRetryMissingData({"on", "attempts=4", "delay=0"}, &r));
    EXPECT_EQ(r.attempts, 4u);
    EXPECT_EQ(r.delay_ms, 0u);
    EXPECT_FALSE(ParseRetryMissingData({"off"}, &r));
    EXPECT_FALSE(r.on);
    EXPECT_EQ(ParseRetryMissingData({"yes"}, &r),
              "\"retry_missing_data\" must start with \"on\" or \"off\"");
    EXPECT_EQ(ParseRetryMissingData({"on", "delay=11s"}, &r),
              "invalid \"delay=\" \"11s\" in \"retry_missing_data\": must be a "
              "time from 0 to 10s, such as 150ms");
    EXPECT_EQ(ParseRetryMissingData({"on", "tries=2"}, &r),
              "invalid parameter \"tries=2\" in \"retry_missing_data\", "
              "expected \"attempts=\" or \"delay=\"");
}

TEST(FailsafeArgs, Broadcast) {
    Broadcast b;
    EXPECT_FALSE(ParseBroadcast({"sendTransaction|requestAirdrop"}, &b));
    EXPECT_EQ(b.methods, (std::vector<std::string>{"sendTransaction",
                                                   "requestAirdrop"}));
    EXPECT_EQ(b.to, 0u);
    EXPECT_FALSE(ParseBroadcast({"sendTransaction", "to=all"}, &b));
    EXPECT_EQ(b.to, 0u);
    EXPECT_FALSE(ParseBroadcast({"send*", "to=3"}, &b));
    EXPECT_EQ(b.to, 3u);
    EXPECT_EQ(ParseBroadcast({"sendTransaction", "to=0"}, &b),
              "invalid \"to=\" \"0\" in \"broadcast\": must be \"all\" or a "
              "number from 1 to 64");
    EXPECT_EQ(ParseBroadcast({"sendTransaction", "n=2"}, &b),
              "invalid parameter \"n=2\" in \"broadcast\", expected \"to=\"");
}

}  // namespace
}  // namespace solgate::conf
