#include "fleet/fleet_conf.h"

#include <gtest/gtest.h>

namespace solgate {
namespace {

TEST(FleetConf, ParsesTheUrlAndItsParameters) {
    FleetConf conf;
    conf.host_id = "gw-1";
    ASSERT_FALSE(ParseSharedState({"redis://:s3cret@10.0.0.5:6380/2",
                                   "prefix=eu:", "timeout=350ms"},
                                  &conf));
    EXPECT_EQ(conf.host, "10.0.0.5");
    EXPECT_EQ(conf.port, 6380);
    EXPECT_EQ(conf.password, "s3cret");
    EXPECT_EQ(conf.db, 2u);
    EXPECT_EQ(conf.prefix, "eu:");
    EXPECT_EQ(conf.timeout_ms, 350u);
    EXPECT_EQ(conf.host_id, "gw-1") << "kept";
    EXPECT_EQ(conf.Describe(), "redis://10.0.0.5:6380/2") << "no password";

    FleetConf v6;
    ASSERT_FALSE(ParseSharedState({"redis://[::1]:6379"}, &v6));
    EXPECT_EQ(v6.host, "::1");

    FleetConf plain;
    ASSERT_FALSE(ParseSharedState({"redis://127.0.0.1:6379"}, &plain));
    EXPECT_EQ(plain.prefix, "solgate:");
    EXPECT_EQ(plain.timeout_ms, 200u);
    EXPECT_EQ(plain.db, 0u);
}

TEST(FleetConf, RefusesWhatItCannotUse) {
    FleetConf conf;
    for (auto args : std::vector<std::vector<std::string_view>>{
             {},
             {"http://127.0.0.1:6379"},
             {"redis://127.0.0.1"},
             {"redis://127.0.0.1:0"},
             {"redis://127.0.0.1:70000"},
             {"redis://127.0.0.1:6379/x"},
             {"redis://secret@127.0.0.1:6379"},
             {"redis://127.0.0.1:6379", "timeout=0"},
             {"redis://127.0.0.1:6379", "timeout=2s"},
             {"redis://redis.example:6379"},
             {"redis://127.0.0.1:6379", "prefix="},
             {"redis://127.0.0.1:6379", "prefix=a b"},
             {"redis://127.0.0.1:6379", "ttl=1s"}}) {
        EXPECT_TRUE(ParseSharedState(args, &conf).has_value())
            << (args.empty() ? "" : args.back());
    }
    EXPECT_FALSE(CheckHostId("gw-eu-1.example"));
    EXPECT_TRUE(CheckHostId(""));
    EXPECT_TRUE(CheckHostId("a:b"));
    EXPECT_TRUE(CheckHostId(std::string(65, 'x')));
}

}  // namespace
}  // namespace solgate
