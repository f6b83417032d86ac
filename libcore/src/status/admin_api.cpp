#include "status/admin_api.h"

#include "base/printable.h"
#include "conf/conf_messages.h"
#include "json/json_writer.h"
#include "slots/state_poller.h"
#include "status/state_json.h"
#include "store/operator_state.h"

namespace solgate {
namespace {

using conf::Quoted;

AdminAnswer Reply(unsigned status, const std::string& message) {
    AdminAnswer answer;
    answer.http_status = status;
    answer.body = status == 200 ? "{\"ok\":true,\"message\":"
                                : "{\"ok\":false,\"message\":";
    AppendJsonString(answer.body, message);
    answer.body += "}";
    return answer;
}

bool EndsWith(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() &&
           text.substr(text.size() - suffix.size()) == suffix;
}

// The network named by ?network=, or the only one there is.
const Network* NamedNetwork(const std::vector<const Network*>& networks,
                            const AdminRequest& request) {
    if (request.network && !request.network->empty()) {
        for (const Network* network : networks) {
            if (network->name() == *request.network) {
                return network;
            }
        }
        return nullptr;
    }
    return networks.size() == 1 ? networks[0] : nullptr;
}

// The upstream an action names (POST, ?upstream=, ?network= unless there
// is one network): nullopt with *network and *index set, else the refusal.
std::optional<AdminAnswer> ActionTarget(
    const std::vector<const Network*>& networks, const AdminRequest& request,
    const Network** network, size_t* index) {
    if (!request.post) {
        AdminAnswer refused = Reply(405, "use POST");
        refused.allow = "POST";
        return refused;
    }
    *network = NamedNetwork(networks, request);
    if (*network == nullptr || !(*network)->bound()) {
        return Reply(400, "name the network: network=NAME");
    }
    if (!request.upstream || request.upstream->empty()) {
        return Reply(400, "missing upstream=ID");
    }
    auto found = (*network)->FindUpstream(*request.upstream);
    if (!found) {
        return Reply(404, "no upstream " + Quoted(*request.upstream) +
                              " in network " + Quoted((*network)->name()));
    }
    *index = *found;
    return std::nullopt;
}

// The change `done` is in force: saved (when the network has `state`), it
// is answered 200 and logged at NOTICE; not saved, 500 and ERR; made on a
// zone a reload has replaced, 503 (the client sends it again to a new
// worker).
AdminAnswer Saved(const Network& network, const std::string& done,
                  const std::string& detail, int64_t now_ms,
                  int64_t wall_ms) {
    std::string error;
    OperatorStateSave saved =
        SaveOperatorState(network, now_ms, wall_ms, &error);
    if (saved == OperatorStateSave::kSuperseded) {
        AdminAnswer answer = Reply(
            503, done + " on this worker, but not kept: a reload is giving "
                        "network " + Quoted(network.name()) +
                     " a new zone; send it again");
        answer.log = "operator " + done + detail +
                     " on a zone a reload replaced: answered 503, not kept";
        answer.log_level = kLogWarn;
        return answer;
    }
    if (saved == OperatorStateSave::kFailed) {
        AdminAnswer answer =
            Reply(500, done + ", but it is not saved: " + error +
                           "; it holds until nginx restarts");
        answer.log = "operator " + done + detail + ", but it is not saved: " +
                     error;
        answer.log_level = kLogError;
        return answer;
    }
    AdminAnswer answer = Reply(200, done);
    answer.log = "operator " + done + detail;
    answer.log_level = kLogNotice;
    return answer;
}

AdminAnswer CordonAction(const std::vector<const Network*>& networks,
                         const AdminRequest& request, bool cordon,
                         int64_t now_ms, int64_t wall_ms) {
    const Network* network = nullptr;
    size_t index = 0;
    if (auto refused = ActionTarget(networks, request, &network, &index)) {
        return *refused;
    }
    std::string_view id = *request.upstream;
    // as the network keeps it, so that the log line is one line too
    std::string reason = PrintableAscii(request.reason.value_or(""));
    if (cordon) {
        network->OperatorCordon(index, reason, wall_ms);
    } else {
        network->OperatorUncordon(index, wall_ms);
    }
    std::string done = std::string(cordon ? "cordoned" : "uncordoned") +
                       " upstream " + Quoted(id) + " of network " +
                       Quoted(network->name());
    return Saved(*network, done,
                 reason.empty() ? "" : ": " + reason, now_ms,
                 wall_ms);
}

// Its subscribers move now (close 1012) and new ones go elsewhere for
// Network::kWsDrainMs, for maintenance of its pubsub service.
AdminAnswer DrainAction(const std::vector<const Network*>& networks,
                        const AdminRequest& request, int64_t now_ms,
                        int64_t wall_ms) {
    const Network* network = nullptr;
    size_t index = 0;
    if (auto refused = ActionTarget(networks, request, &network, &index)) {
        return *refused;
    }
    std::string what = "upstream " + Quoted(*request.upstream) +
                       " of network " + Quoted(network->name());
    if (network->upstream(index).pubsub.url.empty()) {
        return Reply(400, what + " has no ws=: no subscriber to drain");
    }
    network->DrainSubscribers(index, now_ms);
    std::string done = "draining the WebSocket subscribers of " + what +
                       " for " +
                       std::to_string(Network::kWsDrainMs / 1000) + "s";
    return Saved(*network, done, "", now_ms, wall_ms);
}

}  // namespace

AdminAnswer HandleAdmin(const std::vector<const Network*>& networks,
                        const AdminRequest& request, int64_t now_ms,
                        int64_t wall_ms) {
    if (EndsWith(request.uri, "/state")) {
        if (!request.get) {
            AdminAnswer refused = Reply(405, "use GET");
            refused.allow = "GET, HEAD";
            return refused;
        }
        AdminAnswer answer;
        answer.body = RenderState(networks, now_ms, wall_ms);
        return answer;
    }
    if (EndsWith(request.uri, "/cordon")) {
        return CordonAction(networks, request, true, now_ms, wall_ms);
    }
    if (EndsWith(request.uri, "/uncordon")) {
        return CordonAction(networks, request, false, now_ms, wall_ms);
    }
    if (EndsWith(request.uri, "/drain")) {
        return DrainAction(networks, request, now_ms, wall_ms);
    }
    return Reply(404, "unknown endpoint, use state, cordon, uncordon or drain");
}

}  // namespace solgate
