#include "conf/conf_messages.h"

namespace solgate::conf {

std::string Quoted(std::string_view text) {
    std::string quoted;
    quoted.reserve(text.size() + 2);
    quoted += '"';
    quoted.append(text.data(), text.size());
    quoted += '"';
    return quoted;
}

std::string Duplicate(std::string_view directive) {
    return Quoted(directive) + " directive is duplicate";
}

std::string TooMany(std::string_view what, size_t most) {
    return "too many " + std::string(what) + " (at most " +
           std::to_string(most) + ")";
}

}  // namespace solgate::conf
