// The servers of an nginx upstream {} block, as the module lists them for
// the requests the poller thread sends itself (not through nginx): a URL
// whose host is a block name is sent to the block's servers with curl's
// CONNECT_TO, its Host header staying the block name (as proxy_pass sends
// it).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace solgate {

struct BlockServer {
    std::string address;  // its first address, "127.0.0.1:8899"
    bool is_unix = false;
    bool backup = false;  // server ... backup
    bool down = false;    // server ... down
};

// The CONNECT_TO entry that sends a request for any host to the server.
std::string ConnectTo(const BlockServer& server);

// The CONNECT_TO entries of the servers the poller may use, in the block's
// order with backups last and servers marked down left out; or why there
// is none to use (`what` names the directive's value in the message, as
// `long_term_storage URL "http://pool/"`).
std::optional<std::string> ReachableServers(
    const std::vector<BlockServer>& servers, std::string_view what,
    std::string_view block, std::vector<std::string>* connect_to);

}  // namespace solgate
