#include "routing/selector_sources.h"

namespace solgate {

ChosenSelector ChooseSelector(const SelectorSources& sources,
                              std::string_view default_selector,
                              bool from_client) {
    if (from_client) {
        for (const auto& source :
             {sources.header, sources.erpc_header, sources.query}) {
            if (source) {
                return ChosenSelector{*source, true};
            }
        }
    }
    return ChosenSelector{default_selector, false};
}

}  // namespace solgate
