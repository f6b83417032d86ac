// The pieces of the Prometheus text format (prometheus_text.h).
#include "status/prometheus_text.h"

#include <gtest/gtest.h>

#include <string>

namespace solgate {
namespace {

TEST(StatusPrometheusText, FamilyHeader) {
    std::string out;
    AppendFamilyHeader(out, "solgate_x_total", "counter", "Things \"done\".");
    EXPECT_EQ(out,
              "# HELP solgate_x_total Things \"done\".\n"
              "# TYPE solgate_x_total counter\n");
}

TEST(StatusPrometheusText, SamplesKeepLabelOrderAndEscapeValues) {
    std::string out;
    AppendSample(out, "m", {{"b", "x"}, {"a", "q\"b\\n\nl"}}, 7);
    AppendSampleText(out, "m", {}, "1.500");
    EXPECT_EQ(out,
              "m{b=\"x\",a=\"q\\\"b\\\\n\\nl\"} 7\n"
              "m{} 1.500\n");
}

TEST(StatusPrometheusText, SecondsWithThreeDecimals) {
    EXPECT_EQ(SecondsText(0), "0.000");
    EXPECT_EQ(SecondsText(1500), "1.500");
    EXPECT_EQ(SecondsText(1), "0.001");
    EXPECT_EQ(SecondsText(86400123), "86400.123");
}

}  // namespace
}  // namespace solgate
