// Where a request names its use-upstream selector, and which one wins: the
// X-Solgate-Use-Upstream header, its X-ERPC-Use-Upstream alias (for eRPC
// clients), ?use-upstream= (URL-decoded), then the network's
// use_upstream_default (the only one when use_upstream_from_client is
// off). A source that is present wins even when empty: an
// empty header asks for no selector at all. A source named twice (two
// headers, two arguments) is an error: which one the client meant is not
// known.
#pragma once

#include <optional>
#include <string_view>

namespace solgate {

struct SelectorSources {
    std::optional<std::string_view> header;       // the first one's value
    std::optional<std::string_view> erpc_header;
    std::optional<std::string_view> query;
    bool header_twice = false;                    // ... and another
    bool erpc_header_twice = false;
    bool query_twice = false;
};

struct ChosenSelector {
    std::string_view text;     // "" for none
    bool from_client = false;  // named by the request, not the default
    std::string_view twice;    // the winning source, named twice ("" if not)
};

// The selector to route by. With from_client false (use_upstream_from_client
// off) the request's sources are ignored and only the default applies.
ChosenSelector ChooseSelector(const SelectorSources& sources,
                              std::string_view default_selector,
                              bool from_client = true);

}  // namespace solgate
