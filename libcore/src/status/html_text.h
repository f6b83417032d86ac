// Text for the HTML status page (status_page.h): every string that comes
// from configuration, an operator or a node goes through AppendHtml, in
// element content and in attribute values alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace solgate {

// `text` with &, <, >, " and ' written as character references, and
// control characters (a reason a node wrote, say) as U+FFFD, so no string
// can open an element, end an attribute or hide text.
void AppendHtml(std::string& out, std::string_view text);
std::string Html(std::string_view text);

// A rate with one decimal below 100 ("12.5"), none above ("1234").
std::string RateText(double per_second);
// A duration for people: "850 ms", "12 s", "3 min 5 s", "2 h 10 min".
std::string AgeText(int64_t ms);
// Bytes for people: "512 B", "1.5 KiB", "200.0 GiB".
std::string BytesText(uint64_t bytes);

}  // namespace solgate
