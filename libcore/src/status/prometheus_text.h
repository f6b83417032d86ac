// Pieces of the Prometheus text exposition format 0.0.4: a family's
// "# HELP" and "# TYPE" lines, and sample lines with escaped label values.
// Knows nothing of networks; metrics_text.h says what is exposed.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace solgate {

// A label's name and value, in the order given.
using Label = std::pair<std::string_view, std::string_view>;

// "# HELP name help\n# TYPE name type\n"; `help` is written as it is.
void AppendFamilyHeader(std::string& out, std::string_view name,
                        std::string_view type, std::string_view help);

// `name{k="v",...} value\n`, label values with backslash, double quote
// and newline escaped; `value` is written as it is. The braces are
// written even without labels.
void AppendSampleText(std::string& out, std::string_view name,
                      std::initializer_list<Label> labels,
                      std::string_view value);

// AppendSampleText with an integer value.
void AppendSample(std::string& out, std::string_view name,
                  std::initializer_list<Label> labels, uint64_t value);

// Milliseconds as seconds with three decimals: 1500 is "1.500".
std::string SecondsText(int64_t ms);
// Microseconds as seconds with six decimals: 1500 is "0.001500".
std::string MicrosecondsText(uint64_t us);

}  // namespace solgate
