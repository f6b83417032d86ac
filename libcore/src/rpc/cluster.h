// Names of clusters and commitment levels, and the facts Solgate knows
// about each cluster without asking an upstream.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace solgate {

// The C ABI takes names (cluster mainnet-beta;), never these values.
enum sg_cluster_t {
    SG_CLUSTER_MAINNET_BETA = 0,
    SG_CLUSTER_DEVNET,
    SG_CLUSTER_TESTNET,
    SG_CLUSTER_CUSTOM
};

// Commitment levels a request asks for; NONE: it names none.
enum sg_commitment_t {
    SG_COMMITMENT_NONE = 0,
    SG_COMMITMENT_PROCESSED,
    SG_COMMITMENT_CONFIRMED,
    SG_COMMITMENT_FINALIZED
};

std::optional<sg_cluster_t> ParseCluster(std::string_view name);
std::string_view ClusterName(sg_cluster_t cluster);
// For `nginx -t`: "\"mainnet-beta\", \"devnet\", \"testnet\" or \"custom\"".
std::string ClusterChoices();
// Empty for a custom cluster, whose genesis hash Solgate cannot know.
std::string_view GenesisHash(sg_cluster_t cluster);

// Only the three current levels: agave 2.x rejects the legacy names
// (recent, single, root, max), so accepting them here would let a request
// through that every upstream then refuses.
std::optional<sg_commitment_t> ParseCommitment(std::string_view name);
std::string_view CommitmentName(sg_commitment_t commitment);
// "\"processed\", \"confirmed\" or \"finalized\"".
std::string CommitmentChoices();

}  // namespace solgate
