// The pieces of the messages libcore writes for nginx -t and for the admin
// endpoint, so every one reads the way nginx's own do: lowercase, no full
// stop, the bad token in double quotes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace solgate::conf {

// "TOKEN"
std::string Quoted(std::string_view text);

// "DIRECTIVE" directive is duplicate (nginx's wording)
std::string Duplicate(std::string_view directive);

// too many WHAT (at most MOST)
std::string TooMany(std::string_view what, size_t most);

}  // namespace solgate::conf
