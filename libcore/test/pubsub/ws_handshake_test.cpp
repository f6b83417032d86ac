#include "pubsub/ws_handshake.h"

#include <gtest/gtest.h>

namespace solgate {
namespace {

constexpr std::string_view kKey = "dGhlIHNhbXBsZSBub25jZQ==";   // RFC 6455's

unsigned Status(std::optional<std::string_view> connection,
                std::optional<std::string_view> key,
                std::optional<std::string_view> version,
                bool has_body = false) {
    auto refusal = JudgeWsHandshake(connection, key, version, has_body);
    return refusal ? refusal->http_status : 0;
}

TEST(WsHandshake, AWellFormedUpgradeGoesOn) {
    EXPECT_EQ(Status("Upgrade", kKey, "13"), 0u);
    EXPECT_EQ(Status("keep-alive, Upgrade", kKey, "13"), 0u);
    EXPECT_EQ(Status(" upgrade ,keep-alive", " dGhlIHNhbXBsZSBub25jZQ== ",
                     " 13 "),
              0u);
}

TEST(WsHandshake, AMalformedOneIsAnsweredHere) {
    EXPECT_EQ(Status(std::nullopt, kKey, "13"), 400u) << "no Connection";
    EXPECT_EQ(Status("keep-alive", kKey, "13"), 400u) << "no upgrade token";
    EXPECT_EQ(Status("Upgrades", kKey, "13"), 400u);
    EXPECT_EQ(Status("Upgrade", std::nullopt, "13"), 400u) << "no key";
    EXPECT_EQ(Status("Upgrade", "short==", "13"), 400u);
    EXPECT_EQ(Status("Upgrade", "dGhlIHNhbXBsZSBub25jZQ=!", "13"), 400u);
    EXPECT_EQ(Status("Upgrade", "dGhlIHNhbXBs\x01SBub25jZQ==", "13"), 400u);
    EXPECT_EQ(Status("Upgrade", kKey, std::nullopt), 426u) << "no version";
    EXPECT_EQ(Status("Upgrade", kKey, "8"), 426u);
    EXPECT_EQ(Status("Upgrade", kKey, "13", true), 400u) << "a body";
    auto refusal = JudgeWsHandshake("Upgrade", kKey, "8", false);
    ASSERT_TRUE(refusal);
    EXPECT_EQ(refusal->body,
              R"x({"jsonrpc":"2.0","error":{"code":-32600,"message":)x"
              R"x("Invalid request: only WebSocket version 13 is served )x"
              R"x((Sec-WebSocket-Version: 13)"},"id":null})x");
}

}  // namespace
}  // namespace solgate
