#include "routing/selector_sources.h"

namespace solgate {

std::string_view ChooseSelector(const SelectorSources& sources,
                                std::string_view default_selector) {
    for (const auto& source :
         {sources.header, sources.erpc_header, sources.query}) {
        if (source) {
            return *source;
        }
    }
    return default_selector;
}

}  // namespace solgate
