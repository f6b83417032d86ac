// Where a request names its use-upstream selector, and which one wins: the
// X-Solgate-Use-Upstream header, its X-ERPC-Use-Upstream alias (for eRPC
// clients), ?use-upstream= (URL-decoded), then the network's
// use_upstream_default. A source that is present wins even when empty: an
// empty header asks for no selector at all.
#pragma once

#include <optional>
#include <string_view>

namespace solgate {

struct SelectorSources {
    std::optional<std::string_view> header;
    std::optional<std::string_view> erpc_header;
    std::optional<std::string_view> query;
};

// The selector text to route by ("" for none).
std::string_view ChooseSelector(const SelectorSources& sources,
                                std::string_view default_selector);

}  // namespace solgate
