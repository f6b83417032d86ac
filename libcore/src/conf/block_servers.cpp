#include "conf/block_servers.h"

#include "conf/conf_messages.h"

namespace solgate {

std::string ConnectTo(const BlockServer& server) { return "::" + server.address; }

std::optional<std::string> ReachableServers(
    const std::vector<BlockServer>& servers, std::string_view what,
    std::string_view block, std::vector<std::string>* connect_to) {
    std::vector<std::string> primary, backup;
    for (size_t s = 0; s < servers.size(); s++) {
        const BlockServer& server = servers[s];
        if (server.down) {
            continue;
        }
        if (server.is_unix) {
            return std::string(what) + ": server " + std::to_string(s + 1) +
                   " of upstream block " + conf::Quoted(block) +
                   " is a unix socket, which the poller cannot reach";
        }
        (server.backup ? backup : primary).push_back(ConnectTo(server));
    }
    if (primary.empty() && backup.empty()) {
        return std::string(what) + ": every server of upstream block " +
               conf::Quoted(block) + " is marked down";
    }
    connect_to->assign(primary.begin(), primary.end());
    connect_to->insert(connect_to->end(), backup.begin(), backup.end());
    return std::nullopt;
}

}  // namespace solgate
