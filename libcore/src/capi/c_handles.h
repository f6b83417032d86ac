// The C ABI's handles that more than one file of shims opens.
#pragma once

#include <string>

#include "routing/network.h"
#include "routing/routed_request.h"

// Kept whole and cleared when finished, for the thread's next request
// (sg_request_free, sg_request_parse).
struct sg_request_s {
    sg_request_s() = default;
    explicit sg_request_s(solgate::RpcRequest&& parsed)
        : request(std::move(parsed)) {}

    solgate::RoutedRequest request;
    std::string answer;  // backs sg_route_t::body
    std::string status_answer;  // backs sg_request_status_answer's
};

struct sg_network_s {
    solgate::Network network;
    std::string warning;  // what the last add_upstream or set_policy warned
    std::string state_file;  // backs sg_network_state_file
};
