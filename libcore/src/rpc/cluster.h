// Names of clusters and commitment levels, and the facts Solgate knows
// about each cluster without asking an upstream.
#pragma once

#include <optional>
#include <string_view>

#include "solgate/solgate.h"

namespace solgate {

std::optional<sg_cluster_t> ParseCluster(std::string_view name);
std::string_view ClusterName(sg_cluster_t cluster);
// Empty for a custom cluster, whose genesis hash Solgate cannot know.
std::string_view GenesisHash(sg_cluster_t cluster);

// Only the three current levels: agave 2.x rejects the legacy names
// (recent, single, root, max), so accepting them here would let a request
// through that every upstream then refuses.
std::optional<sg_commitment_t> ParseCommitment(std::string_view name);
std::string_view CommitmentName(sg_commitment_t commitment);

}  // namespace solgate
