// The C ABI shims: parse, route, pick, cordon, names.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "solgate/solgate.h"
#include "support/fakes.h"

namespace solgate {
namespace {

TEST(CApi, ParseRouteAndFree) {
    const char body[] = R"({"jsonrpc":"2.0","id":1,"method":"getGenesisHash"})";
    sg_request_t* req = sg_request_parse(body, sizeof(body) - 1);
    ASSERT_NE(req, nullptr);
    sg_network_conf_t conf{SG_CLUSTER_MAINNET_BETA, SG_COMMITMENT_NONE, 400,
                           100, 1};
    sg_network_t* net = sg_network_new("m", 1, &conf);
    sg_upstream_conf_t up{{"a", 1}, {"http://x/", 9}, {"", 0}, {"", 0},
                          {"family:x", 8}, {"", 0}, {"", 0}};
    ASSERT_EQ(sg_network_add_upstream(net, &up), SG_OK);
    auto shared = std::make_unique<char[]>(sg_network_shared_size());
    char err[64];
    ASSERT_EQ(sg_network_bind(net, shared.get(), 1, 0, err, sizeof(err)), SG_OK);
    sg_route_t route;
    ASSERT_EQ(sg_request_route(req, net, {"", 0}, 0, &route), SG_OK);
    EXPECT_EQ(route.kind, SG_ROUTE_ANSWER);
    EXPECT_EQ(route.http_status, 200u);
    std::string answer(route.body.data, route.body.len);
    EXPECT_NE(answer.find("5eykt4"), std::string::npos);
    sg_str_t method = sg_request_method(req);
    EXPECT_EQ(std::string(method.data, method.len), "getGenesisHash");
    EXPECT_EQ(sg_request_call_count(req), 1u);
    size_t picked = 9;
    int all_cordoned = 1;
    ASSERT_EQ(sg_network_pick(net, req, nullptr, &picked, &all_cordoned), SG_OK);
    EXPECT_EQ(picked, 0u);
    EXPECT_EQ(all_cordoned, 0);
    unsigned char tried[1] = {1};
    EXPECT_EQ(sg_network_pick(net, req, tried, &picked, &all_cordoned),
              SG_DECLINED);
    EXPECT_EQ(sg_network_cordon(net, {"a", 1}, {"maintenance", 11}), SG_OK);
    EXPECT_EQ(sg_network_cordon(net, {"zz", 2}, {"", 0}), SG_DECLINED);
    EXPECT_EQ(sg_network_uncordon(net, {"a", 1}), SG_OK);
    sg_request_free(req);
    sg_network_free(net);
}

TEST(CApi, WriteErrorFitsOrFails) {
    char buf[128];
    size_t n = sg_write_error(buf, sizeof(buf), -32600, "too large", 9);
    ASSERT_GT(n, 0u);
    EXPECT_EQ(std::string(buf, n),
              R"({"jsonrpc":"2.0","error":{"code":-32600,"message":)"
              R"("too large"},"id":null})");
    EXPECT_EQ(sg_write_error(buf, 10, -32600, "too large", 9), 0u);
}

TEST(CApi, ParseNames) {
    sg_cluster_t cluster;
    EXPECT_EQ(sg_cluster_parse("devnet", 6, &cluster), SG_OK);
    EXPECT_EQ(cluster, SG_CLUSTER_DEVNET);
    EXPECT_EQ(sg_cluster_parse("dev", 3, &cluster), SG_DECLINED);
    sg_commitment_t level;
    EXPECT_EQ(sg_commitment_parse("confirmed", 9, &level), SG_OK);
    EXPECT_EQ(level, SG_COMMITMENT_CONFIRMED);
    EXPECT_STRNE(sg_version(), "");
}

}  // namespace
}  // namespace solgate
