#include <gtest/gtest.h>

#include "blocks/block_variant.h"

namespace solgate {
namespace {

std::optional<std::string> VariantOf(const std::string& body) {
    RpcRequest request = ParseRpcRequest(body.data(), body.size());
    if (request.calls.size() != 1) {
        return std::nullopt;
    }
    return BlockVariant(request.calls[0]);
}

std::string GetBlock(const std::string& params) {
    return R"({"jsonrpc":"2.0","id":1,"method":"getBlock","params":)" +
           params + "}";
}

TEST(BlockVariant, DefaultsAreFilledIn) {
    EXPECT_EQ(VariantOf(GetBlock("[100]")), "getBlock/json/full/r1/v-");
    EXPECT_EQ(VariantOf(GetBlock(R"([100,{}])")), "getBlock/json/full/r1/v-");
    // Spelling the defaults out names the same entry.
    EXPECT_EQ(VariantOf(GetBlock(
                  R"([100,{"encoding":"json","transactionDetails":"full",)"
                  R"("rewards":true}])")),
              "getBlock/json/full/r1/v-");
}

TEST(BlockVariant, EveryBodyChangingOptionCounts) {
    EXPECT_EQ(VariantOf(GetBlock(
                  R"([7,{"maxSupportedTransactionVersion":0,)"
                  R"("rewards":false,"transactionDetails":"signatures",)"
                  R"("encoding":"base64"}])")),
              "getBlock/base64/signatures/r0/v0");
    EXPECT_EQ(VariantOf(GetBlock(R"([7,{"encoding":"jsonParsed"}])")),
              "getBlock/jsonParsed/full/r1/v-");
}

TEST(BlockVariant, CommitmentDoesNotSplitFinalizedBlocks) {
    EXPECT_EQ(VariantOf(GetBlock(R"([7,{"commitment":"finalized"}])")),
              VariantOf(GetBlock(R"([7,{"commitment":"confirmed"}])")));
    EXPECT_EQ(VariantOf(GetBlock(R"([7,{"commitment":"processed"}])")),
              std::nullopt);
}

TEST(BlockVariant, MethodOrderAndLegacyForm) {
    // "method" after "params" is read all the same.
    EXPECT_EQ(VariantOf(R"({"jsonrpc":"2.0","params":[5,{"rewards":false}],)"
                        R"("id":2,"method":"getBlock"})"),
              "getBlock/json/full/r0/v-");
    EXPECT_EQ(VariantOf(R"({"jsonrpc":"2.0","id":1,)"
                        R"("method":"getConfirmedBlock","params":[5,"base64"]})"),
              "getConfirmedBlock/base64/full/r1/v-");
}

TEST(BlockVariant, NotCacheable) {
    EXPECT_EQ(VariantOf(GetBlock(R"(["5"])")), std::nullopt);
    EXPECT_EQ(VariantOf(GetBlock(R"([-5])")), std::nullopt);
    EXPECT_EQ(VariantOf(GetBlock(R"([5,{"encoding":"xml"}])")), std::nullopt);
    EXPECT_EQ(VariantOf(GetBlock(R"([5,{"transactionDetails":"most"}])")),
              std::nullopt);
    EXPECT_EQ(VariantOf(GetBlock(R"([5,{"maxSupportedTransactionVersion":1}])")),
              std::nullopt);
    EXPECT_EQ(VariantOf(GetBlock(R"([5,{"rewards":"yes"}])")), std::nullopt);
    EXPECT_EQ(VariantOf(GetBlock(R"([5,{"novel":true}])")), std::nullopt);
    EXPECT_EQ(VariantOf(GetBlock(R"([5,{"encoding":{"a":1}}])")),
              std::nullopt);
    EXPECT_EQ(VariantOf(GetBlock(R"([5,7])")), std::nullopt);
    // a third param, whatever it is: the node refuses the call
    EXPECT_EQ(VariantOf(GetBlock(
                  R"([5,{"maxSupportedTransactionVersion":0},"garbage"])")),
              std::nullopt);
    EXPECT_EQ(VariantOf(GetBlock(R"([5,"base64",{"encoding":"json"}])")),
              std::nullopt);
    EXPECT_EQ(VariantOf(GetBlock(R"([5,{},{}])")), std::nullopt);
    EXPECT_EQ(VariantOf(R"({"jsonrpc":"2.0","id":1,"method":"getSlot",)"
                        R"("params":[5]})"),
              std::nullopt);
}

TEST(BlockVariant, RequestBodyRoundTrips) {
    auto body = BlockRequestBody(42, "getBlock/base64/none/r0/v0", "\"x\"");
    ASSERT_TRUE(body);
    EXPECT_EQ(VariantOf(*body), "getBlock/base64/none/r0/v0");
    RpcRequest request = ParseRpcRequest(body->data(), body->size());
    EXPECT_EQ(request.calls[0].first_param_u64, 42u);
    EXPECT_EQ(request.calls[0].id_raw, "\"x\"");

    body = BlockRequestBody(9, "getBlock/json/full/r1/v-", "");
    ASSERT_TRUE(body);
    EXPECT_EQ(VariantOf(*body), "getBlock/json/full/r1/v-");

    EXPECT_EQ(BlockRequestBody(9, "getBlock/json/full/r1", "1"), std::nullopt);
    EXPECT_EQ(BlockRequestBody(9, "getSlot/json/full/r1/v-", "1"),
              std::nullopt);
    EXPECT_EQ(BlockRequestBody(9, "getBlock/json/full/r2/v-", "1"),
              std::nullopt);
}

}  // namespace
}  // namespace solgate
