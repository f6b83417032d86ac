// Cluster and commitment names, and the genesis hashes Solgate knows.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "rpc/cluster.h"

namespace solgate {
namespace {

TEST(Cluster, NamesRoundTrip) {
    for (auto c : {SG_CLUSTER_MAINNET_BETA, SG_CLUSTER_DEVNET,
                   SG_CLUSTER_TESTNET, SG_CLUSTER_CUSTOM}) {
        EXPECT_EQ(ParseCluster(ClusterName(c)), c);
    }
    EXPECT_FALSE(ParseCluster("mainnet"));
    EXPECT_EQ(GenesisHash(SG_CLUSTER_TESTNET),
              "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY");
    EXPECT_EQ(GenesisHash(SG_CLUSTER_CUSTOM), "");
}

TEST(Commitment, OnlyCurrentLevels) {
    EXPECT_EQ(ParseCommitment("processed"), SG_COMMITMENT_PROCESSED);
    EXPECT_EQ(ParseCommitment("confirmed"), SG_COMMITMENT_CONFIRMED);
    EXPECT_EQ(ParseCommitment("finalized"), SG_COMMITMENT_FINALIZED);
    EXPECT_FALSE(ParseCommitment("recent"));
    EXPECT_FALSE(ParseCommitment(""));
    EXPECT_EQ(CommitmentName(SG_COMMITMENT_FINALIZED), "finalized");
}

}  // namespace
}  // namespace solgate
