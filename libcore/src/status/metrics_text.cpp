#include "status/metrics_text.h"

#include "status/blocks_metrics.h"
#include "status/network_metrics.h"
#include "status/prometheus_text.h"
#include "status/status_common.h"

namespace solgate {
namespace {

void AppendFamilies(std::string& out,
                    const std::vector<MetricFamily>& families,
                    const std::vector<const Network*>& networks,
                    int64_t now_ms) {
    for (const MetricFamily& family : families) {
        AppendFamilyHeader(out, family.name, family.type, family.help);
        for (const Network* network : networks) {
            family.samples(out, family.name, *network, now_ms);
        }
    }
}

}  // namespace

std::string RenderMetrics(const std::vector<const Network*>& networks,
                          int64_t now_mono_ms) {
    std::vector<const Network*> bound = BoundNetworks(networks);
    std::string out;
    AppendFamilies(out, NetworkFamilies(), bound, now_mono_ms);
    AppendFamilies(out, BlocksFamilies(), bound, now_mono_ms);
    return out;
}

}  // namespace solgate
