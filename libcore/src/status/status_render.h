// The operator's views of the gateway, for the C ABI (capi/): the JSON
// document of `GET /solgate/state` (state_json.h) and the Prometheus
// metrics (metrics_text.h). Both read the shared tables of the networks
// as they are at the moment of the call; networks not bound to their zone
// yet are left out.
#pragma once

#include "status/metrics_text.h"
#include "status/state_json.h"
