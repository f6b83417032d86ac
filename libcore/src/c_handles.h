// The C ABI's handles that more than one file of shims opens.
#pragma once

#include <string>

#include "network.h"
#include "route_plan.h"
#include "rpc_request.h"

struct sg_request_s {
    solgate::RpcRequest parsed;
    solgate::RoutePlan plan;
    std::string answer;  // backs sg_route_t::body
};

struct sg_network_s {
    solgate::Network network;
};
