// solgate_health: the answer a load balancer's health check gets for a
// network, from the same standing the router picks by
// (Network::CountEligible): HTTP 200 {"status":"ok","eligible":N} while
// at least one upstream could be given client traffic, else HTTP 503
// {"status":"unavailable","eligible":0,"reason":"..."} saying why none
// can. Written into the caller's buffer: no lock, no allocation, so a
// check every few hundred milliseconds from each balancer costs nothing.
#pragma once

#include <cstddef>
#include <cstdint>

#include "routing/network.h"
#include "solgate/solgate.h"

namespace solgate {

// Room for the longest answer (the reason with four counts up to 256).
constexpr size_t kHealthAnswerMax = SG_HEALTH_BODY_MAX;

struct HealthAnswer {
    unsigned http_status = 200;
    size_t eligible = 0;
    size_t len = 0;   // of the body written
};

// Writes the body into buf (size at least kHealthAnswerMax; NUL-ended).
HealthAnswer AnswerHealth(const Network& network, int64_t now_ms, char* buf,
                          size_t size);

// Why no upstream is eligible: static text, JSON-safe without escaping.
// "" when one is.
const char* UnavailableReason(const Network::Eligibility& e, char* buf,
                              size_t size);

}  // namespace solgate
