#include "rpc/cluster.h"

#include <array>
#include <cstring>
#include <vector>

namespace solgate {
namespace {

struct ClusterFacts {
    sg_cluster_t cluster;
    std::string_view name;
    std::string_view genesis_hash;
};

constexpr std::array<ClusterFacts, 4> kClusters{{
    {SG_CLUSTER_MAINNET_BETA, "mainnet-beta",
     "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"},
    {SG_CLUSTER_DEVNET, "devnet",
     "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG"},
    {SG_CLUSTER_TESTNET, "testnet",
     "4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY"},
    {SG_CLUSTER_CUSTOM, "custom", ""},
}};

constexpr std::array<std::string_view, 4> kCommitmentNames{
    "", "processed", "confirmed", "finalized"};

// "a", "b" or "c"
template <typename Names>
std::string Choices(const Names& names) {
    std::string out;
    for (size_t i = 0; i < names.size(); i++) {
        out += i == 0 ? "" : i + 1 == names.size() ? " or " : ", ";
        out += "\"" + std::string(names[i]) + "\"";
    }
    return out;
}

}  // namespace

std::string ClusterChoices() {
    std::vector<std::string_view> names;
    for (const auto& facts : kClusters) {
        names.push_back(facts.name);
    }
    return Choices(names);
}

std::string CommitmentChoices() {
    std::vector<std::string_view> names(kCommitmentNames.begin() + 1,
                                        kCommitmentNames.end());
    return Choices(names);
}

std::optional<sg_cluster_t> ParseCluster(std::string_view name) {
    for (const auto& facts : kClusters) {
        if (facts.name == name) {
            return facts.cluster;
        }
    }
    return std::nullopt;
}

std::string_view ClusterName(sg_cluster_t cluster) {
    for (const auto& facts : kClusters) {
        if (facts.cluster == cluster) {
            return facts.name;
        }
    }
    return "";
}

std::string_view GenesisHash(sg_cluster_t cluster) {
    for (const auto& facts : kClusters) {
        if (facts.cluster == cluster) {
            return facts.genesis_hash;
        }
    }
    return "";
}

// The names are all nine bytes long and start with distinct letters: a
// body's commitment (read once per call that names one) is compared with
// the one name of its first byte, nine bytes of known length, which the
// compiler compares inline rather than by a call to memcmp.
constexpr size_t kCommitmentNameSize = 9;
static_assert(kCommitmentNames[1].size() == kCommitmentNameSize &&
                  kCommitmentNames[2].size() == kCommitmentNameSize &&
                  kCommitmentNames[3].size() == kCommitmentNameSize,
              "ParseCommitment compares nine bytes");

std::optional<sg_commitment_t> ParseCommitment(std::string_view name) {
    if (name.size() != kCommitmentNameSize) {
        return std::nullopt;
    }
    for (size_t i = 1; i < kCommitmentNames.size(); i++) {
        if (kCommitmentNames[i][0] == name[0] &&
            std::memcmp(kCommitmentNames[i].data(), name.data(),
                        kCommitmentNameSize) == 0) {
            return static_cast<sg_commitment_t>(i);
        }
    }
    return std::nullopt;
}

std::string_view CommitmentName(sg_commitment_t commitment) {
    size_t i = static_cast<size_t>(commitment);
    return i < kCommitmentNames.size() ? kCommitmentNames[i] : "";
}

}  // namespace solgate
