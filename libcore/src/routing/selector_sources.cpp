#include "routing/selector_sources.h"

namespace solgate {

ChosenSelector ChooseSelector(const SelectorSources& sources,
                              std::string_view default_selector,
                              bool from_client) {
    if (from_client) {
        struct Source {
            const std::optional<std::string_view>& value;
            bool twice;
            std::string_view name;
        };
        for (const Source& source :
             {Source{sources.header, sources.header_twice,
                     "X-Solgate-Use-Upstream"},
              Source{sources.erpc_header, sources.erpc_header_twice,
                     "X-ERPC-Use-Upstream"},
              Source{sources.query, sources.query_twice, "use-upstream="}}) {
            if (source.value) {
                return ChosenSelector{*source.value, true,
                                      source.twice ? source.name : ""};
            }
        }
    }
    return ChosenSelector{default_selector, false, ""};
}

}  // namespace solgate
