// The request counts and the latency histogram stay bounded.
#include "routing/request_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string_view>
#include <tuple>

#include "rpc/answers.h"
#include "rpc/solana_methods.h"

namespace solgate {
namespace {

using Key = std::tuple<size_t, size_t, RequestOutcome>;

std::map<Key, uint64_t> Counts(const RequestCountTable& t) {
    std::map<Key, uint64_t> out;
    ForEachRequestCount(t, [&](size_t s, size_t m, RequestOutcome o,
                               uint64_t n) { out[{s, m, o}] = n; });
    return out;
}

TEST(RequestMetrics, CountsByUpstreamMethodAndOutcome) {
    auto t = std::make_unique<RequestCountTable>();
    size_t balance = SolanaMethodIndex("getBalance");
    CountRequest(*t, 3, balance, RequestOutcome::kOk);
    CountRequest(*t, 3, balance, RequestOutcome::kOk);
    CountRequest(*t, 3, balance, RequestOutcome::kRpcError);
    CountRequest(*t, kNoUpstreamSlot, SolanaMethodIndex("getGenesisHash"),
                 RequestOutcome::kLocal);
    auto c = Counts(*t);
    EXPECT_EQ(c.size(), 3u);
    EXPECT_EQ((c[{3, balance, RequestOutcome::kOk}]), 2u);
    EXPECT_EQ((c[{kNoUpstreamSlot, SolanaMethodIndex("getGenesisHash"),
                  RequestOutcome::kLocal}]), 1u);
}

// Every outcome comes back as it was counted, with the highest slot and
// method index beside it (the packed key has room for them all).
TEST(RequestMetrics, EveryOutcomeIsReadBackAsCounted) {
    auto t = std::make_unique<RequestCountTable>();
    size_t outcomes = static_cast<size_t>(RequestOutcome::kCount);
    for (size_t o = 0; o < outcomes; o++) {
        CountRequest(*t, kNoUpstreamSlot, kBatchMethod,
                     static_cast<RequestOutcome>(o));
    }
    auto c = Counts(*t);
    ASSERT_EQ(c.size(), outcomes);
    for (size_t o = 0; o < outcomes; o++) {
        EXPECT_EQ((c[{kNoUpstreamSlot, kBatchMethod,
                      static_cast<RequestOutcome>(o)}]), 1u);
    }
    EXPECT_EQ(RequestOutcomeName(RequestOutcome::kClientError), "client_error");
}

// Whatever method names clients invent, they are one label: "other".
TEST(RequestMetrics, EveryMethodNameFindsItsOwnIndex) {
    for (size_t i = 0; i < kOtherMethod; i++) {
        std::string name(SolanaMethodName(i));
        EXPECT_EQ(SolanaMethodIndex(name), i) << name;
        std::string near = name;
        near.back() = near.back() == 'x' ? 'y' : 'x';
        EXPECT_EQ(SolanaMethodIndex(near), kOtherMethod) << near;
        EXPECT_EQ(SolanaMethodIndex(name + "Z"), kOtherMethod) << name;
        for (size_t k = 0; k < name.size(); k++) {   // a byte anywhere
            std::string other = name;
            other[k] = '\x01';
            EXPECT_EQ(SolanaMethodIndex(other), kOtherMethod) << name << k;
        }
    }
    EXPECT_EQ(SolanaMethodIndex(""), kOtherMethod);
    EXPECT_EQ(SolanaMethodIndex(std::string(500, 'g')), kOtherMethod);
}

TEST(RequestMetrics, UnknownMethodsAreOtherAndTheTableIsBounded) {
    EXPECT_EQ(SolanaMethodName(SolanaMethodIndex("getBalance")), "getBalance");
    EXPECT_EQ(SolanaMethodName(SolanaMethodIndex("simulateTransaction")),
              "simulateTransaction");
    EXPECT_EQ(SolanaMethodName(SolanaMethodIndex("x\\u0000evil")), "other");
    EXPECT_EQ(SolanaMethodName(SolanaMethodIndex("batch")), "batch");
    auto t = std::make_unique<RequestCountTable>();
    // more distinct keys than the table holds: the rest are counted dropped
    for (size_t slot = 0; slot <= kMaxUpstreams; slot++) {
        for (size_t m = 0; m < SolanaMethodCount(); m++) {
            CountRequest(*t, slot, m, RequestOutcome::kOk);
        }
    }
    size_t kept = Counts(*t).size();
    EXPECT_LE(kept, RequestCountTable::kSlots);
    EXPECT_EQ(kept + t->dropped.load(),
              (kMaxUpstreams + 1) * SolanaMethodCount());
}

TEST(RequestMetrics, LatencyBuckets) {
    auto r = std::make_unique<UpstreamRecord>();
    r->Reset("u");
    ObserveLatency(r->host, MethodClass::kHeavy, 3);
    ObserveLatency(r->host, MethodClass::kHeavy, 30000);   // only in +Inf
    size_t heavy = static_cast<size_t>(MethodClass::kHeavy);
    EXPECT_EQ(r->host.latency_buckets[heavy][0].load(), 1u);
    EXPECT_EQ(r->host.latency_count[heavy].load(), 2u);
    EXPECT_EQ(r->host.latency_sum_ms[heavy].load(), 30003u);
    EXPECT_EQ(ClassOfMethod("getProgramAccounts"), MethodClass::kHeavy);
    EXPECT_EQ(ClassOfMethod("sendTransaction"), MethodClass::kWrite);
    EXPECT_EQ(ClassOfMethod("getBalance"), MethodClass::kRead);
}

// The classes as they were spelled out by name before the table by index
// replaced them: every known name, "batch", "other" and strangers agree.
MethodClass ClassByNames(std::string_view method) {
    if (method == "sendTransaction" || method == "requestAirdrop") {
        return MethodClass::kWrite;
    }
    if (method == "getProgramAccounts" || method == "getBlock" ||
        method == "getConfirmedBlock" || method == "getBlocks" ||
        method == "getSignaturesForAddress" ||
        method == "getTokenAccountsByOwner" || method == "getLargestAccounts" ||
        method == "getMultipleAccounts" || method == "batch") {
        return MethodClass::kHeavy;
    }
    return MethodClass::kRead;
}

TEST(RequestMetrics, AMethodsClassByNameAndByIndexAgree) {
    for (size_t i = 0; i < SolanaMethodCount(); i++) {
        std::string_view name = SolanaMethodName(i);
        EXPECT_EQ(ClassOfMethod(name), ClassByNames(name)) << name;
        EXPECT_EQ(ClassOfMethodIndex(i), ClassByNames(name)) << name;
    }
    for (std::string_view stranger :
         {"", "getblock", "getBlockX", "sendTransaction ", "websocket"}) {
        EXPECT_EQ(ClassOfMethod(stranger), MethodClass::kRead) << stranger;
    }
    EXPECT_EQ(ClassOfMethodIndex(kBatchMethod), MethodClass::kHeavy);
    EXPECT_EQ(ClassOfMethodIndex(kOtherMethod), MethodClass::kRead);
    EXPECT_EQ(ClassOfMethodIndex(SolanaMethodCount()), MethodClass::kRead);
}

TEST(RequestMetrics, OnlyTheMethodsAgaveRemovedAreRemoved) {
    for (const char* name : {"getRecentBlockhash", "getFees",
                             "getConfirmedBlock", "getStakeActivation",
                             "getConfirmedSignaturesForAddress2"}) {
        EXPECT_TRUE(IsRemovedMethodIndex(SolanaMethodIndex(name))) << name;
    }
    for (const char* name : {"getBlock", "getLatestBlockhash", "getBalance",
                             "getFeeForMessage", "getFoo"}) {
        EXPECT_FALSE(IsRemovedMethodIndex(SolanaMethodIndex(name))) << name;
    }
    EXPECT_FALSE(IsRemovedMethodIndex(kBatchMethod));
    EXPECT_FALSE(IsRemovedMethodIndex(SolanaMethodCount() + 5));
}

TEST(RequestMetrics, AnUpstreamErrorIsSeenFromItsFirstBytes) {
    EXPECT_TRUE(LooksLikeRpcError(
        R"({"jsonrpc":"2.0","error":{"code":-32005,"message":"x"},"id":1})"));
    EXPECT_FALSE(LooksLikeRpcError(R"({"jsonrpc":"2.0","result":{"err":null}})"));
    EXPECT_FALSE(LooksLikeRpcError(
        R"({"jsonrpc":"2.0","result":{"value":{"error":1}},"id":1})"));
    EXPECT_FALSE(LooksLikeRpcError(R"([{"jsonrpc":"2.0","error":{}}])"));
    EXPECT_FALSE(LooksLikeRpcError(""));
}

}  // namespace
}  // namespace solgate
