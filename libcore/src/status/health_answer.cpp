#include "status/health_answer.h"

#include <algorithm>
#include <cstdio>

namespace solgate {

const char* UnavailableReason(const Network::Eligibility& e, char* buf,
                              size_t size) {
    if (e.eligible > 0) {
        return "";
    }
    size_t out = e.cordoned + e.ejected + e.lagging;
    if (out == 0) {
        return "the network has no upstream state yet";
    }
    if (e.cordoned == out) {
        return "every upstream is cordoned";
    }
    if (e.ejected == out) {
        return "every upstream is out of rotation after failed attempts";
    }
    if (e.lagging == out) {
        return "every upstream is lagging (more than max_slot_lag behind)";
    }
    std::snprintf(buf, size,
                  "no upstream is eligible: %zu cordoned, %zu out of "
                  "rotation after failed attempts, %zu lagging",
                  e.cordoned, e.ejected, e.lagging);
    return buf;
}

HealthAnswer AnswerHealth(const Network& network, int64_t now_ms, char* buf,
                          size_t size) {
    HealthAnswer answer;
    Network::Eligibility e = network.CountEligible(now_ms);
    answer.eligible = e.eligible;
    int n;
    if (e.eligible > 0) {
        n = std::snprintf(buf, size, "{\"status\":\"ok\",\"eligible\":%zu}",
                          e.eligible);
    } else {
        char mixed[128];
        answer.http_status = 503;
        n = std::snprintf(buf, size,
                          "{\"status\":\"unavailable\",\"eligible\":0,"
                          "\"reason\":\"%s\"}",
                          UnavailableReason(e, mixed, sizeof(mixed)));
    }
    answer.len = n < 0 ? 0 : std::min(static_cast<size_t>(n), size - 1);
    return answer;
}

}  // namespace solgate
