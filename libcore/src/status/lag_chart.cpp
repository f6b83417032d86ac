#include "status/lag_chart.h"

#include <algorithm>
#include <cstdio>

#include "status/html_text.h"

namespace solgate {
namespace {

// The drawing, in viewBox units; the page scales it to the card's width.
constexpr double kWidth = 600;
constexpr double kHeight = 170;
constexpr double kLeft = 48;
constexpr double kRight = 590;
constexpr double kTop = 10;
constexpr double kBottom = 146;

std::string Num(double v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f", v);
    return text;
}

double X(size_t k, size_t count) {
    return count < 2 ? kRight
                     : kLeft + (kRight - kLeft) * static_cast<double>(k) /
                                   static_cast<double>(count - 1);
}

double Y(uint64_t value, uint64_t top) {
    return kBottom - (kBottom - kTop) * static_cast<double>(value) /
                         static_cast<double>(top);
}

using Series = uint64_t (*)(const LagSample&);
uint64_t SlotLagOf(const LagSample& s) { return s.slot_lag; }
uint64_t IngestionLagOf(const LagSample& s) { return s.ingestion_lag; }

// One series: a path of its runs of samples, a dot for a lone sample.
void AppendSeries(std::string& out, const char* css_class, Series value,
                  const std::vector<std::optional<LagSample>>& samples,
                  uint64_t top) {
    std::string path;
    std::string dots;
    size_t n = samples.size();
    for (size_t k = 0; k < n; k++) {
        if (!samples[k]) {
            continue;
        }
        bool joined = k > 0 && samples[k - 1];
        bool alone = !joined && (k + 1 == n || !samples[k + 1]);
        std::string x = Num(X(k, n));
        std::string y = Num(Y(value(*samples[k]), top));
        if (alone) {
            dots += "<circle class=\"" + std::string(css_class) +
                    "\" cx=\"" + x + "\" cy=\"" + y + "\" r=\"2.5\"/>";
            continue;
        }
        path += (joined ? " L" : (path.empty() ? "M" : " M")) + x + " " + y;
    }
    if (!path.empty()) {
        out += "<path class=\"series " + std::string(css_class) + "\" d=\"" +
               path + "\"/>";
    }
    out += dots;
}

void AppendThreshold(std::string& out, const char* css_class, uint64_t value,
                     uint64_t top, std::string_view label) {
    if (value == 0 || value > top) {
        return;
    }
    std::string y = Num(Y(value, top));
    out += "<line class=\"threshold " + std::string(css_class) + "\" x1=\"" +
           Num(kLeft) + "\" x2=\"" + Num(kRight) + "\" y1=\"" + y +
           "\" y2=\"" + y + "\"/><text class=\"threshold-label\" x=\"" +
           Num(kRight - 4) + "\" y=\"" + Num(Y(value, top) - 3) +
           "\" text-anchor=\"end\">";
    AppendHtml(out, label);
    out += "</text>";
}

void AppendAxes(std::string& out, uint64_t top, size_t count) {
    out += "<g class=\"axis\">";
    for (uint64_t value : {uint64_t{0}, top / 2, top}) {
        std::string y = Num(Y(value, top));
        out += "<line class=\"grid\" x1=\"" + Num(kLeft) + "\" x2=\"" +
               Num(kRight) + "\" y1=\"" + y + "\" y2=\"" + y +
               "\"/><text x=\"" + Num(kLeft - 6) + "\" y=\"" +
               Num(Y(value, top) + 3.5) + "\" text-anchor=\"end\">" +
               std::to_string(value) + "</text>";
    }
    // one label every 5 minutes, then "now" under the step still filling
    size_t per_5min = static_cast<size_t>(300000 / kHistoryStepMs);
    for (size_t k = 0; k + 1 < count; k += per_5min) {
        size_t minutes = (count - k) * static_cast<size_t>(kHistoryStepMs) /
                         60000;
        out += "<text x=\"" + Num(X(k, count)) + "\" y=\"" +
               Num(kBottom + 16) + "\" text-anchor=\"middle\">-" +
               std::to_string(minutes) + " min</text>";
    }
    out += "<text x=\"" + Num(X(count - 1, count)) + "\" y=\"" +
           Num(kBottom + 16) + "\" text-anchor=\"end\">now</text></g>";
}

}  // namespace

uint64_t ChartCeiling(uint64_t highest) {
    uint64_t scale = 1;
    for (;;) {
        for (uint64_t m : {10, 20, 50}) {
            if (highest <= m * scale) {
                return m * scale;
            }
        }
        scale *= 10;
    }
}

void AppendLagChart(std::string& out, std::string_view label,
                    const std::vector<std::optional<LagSample>>& samples,
                    const LagChartLines& lines) {
    uint64_t highest = 0;
    bool any = false;
    for (const auto& s : samples) {
        if (s) {
            any = true;
            highest = std::max({highest, s->slot_lag, s->ingestion_lag});
        }
    }
    uint64_t top = ChartCeiling(highest);
    std::string name = Html(label);
    out += "<svg class=\"chart\" viewBox=\"0 0 " + Num(kWidth) + " " +
           Num(kHeight) + "\" role=\"img\" aria-label=\"slot lag and "
           "ingestion lag of " + name + " over the last 15 minutes\">"
           "<title>slot lag and ingestion lag of " + name +
           ", highest per " + std::to_string(kHistoryStepMs / 1000) +
           " s</title>";
    AppendAxes(out, top, samples.size());
    AppendThreshold(out, "slot-lag", lines.max_slot_lag, top,
                    "max_slot_lag " + std::to_string(lines.max_slot_lag));
    AppendThreshold(out, "ingestion-lag", lines.ingestion_threshold, top,
                    "cordon above " + std::to_string(lines.ingestion_threshold));
    if (!any) {
        out += "<text class=\"empty\" x=\"" + Num((kLeft + kRight) / 2) +
               "\" y=\"" + Num((kTop + kBottom) / 2) +
               "\" text-anchor=\"middle\">no samples yet</text>";
    } else {
        AppendSeries(out, "ingestion-lag", IngestionLagOf, samples, top);
        AppendSeries(out, "slot-lag", SlotLagOf, samples, top);
    }
    out += "</svg>";
}

}  // namespace solgate
