// One client call Cube Runner handles, from the access phase to the end of
// the response, and what the request path decides for it: the words the
// parts of Cube Runner and the C shims share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "blocks/block_flights.h"
#include "blocks/block_source.h"
#include "blocks/key_store.h"
#include "rpc/cluster.h"
#include "store/block_store.h"

namespace solgate {

// The JSON-RPC method a region asks another region's summary with (only
// answered to requests carrying the peer token).
constexpr std::string_view kSummaryMethod = "solgateBlockSummary";
// The header regions send to each other.
constexpr std::string_view kPeerHeader = "X-Solgate-Peer";

// The calls Cube Runner answers when a solgate_blocks serves the network:
// getBlock, getConfirmedBlock, getFirstAvailableBlock and the summary.
bool IsCubeRunnerMethod(std::string_view method);

struct BlockCall {
    uint64_t slot = 0;
    std::string variant;     // empty: not cacheable
    std::string id_raw;
    std::optional<sg_commitment_t> commitment;   // as the client gave it
    std::string api_key;
    int64_t wall_ms = 0;     // when the call arrived (UTC ms)
    size_t plan = 0;
    // The key's id in the KeyStore; nullopt: no room for it (not limited).
    std::optional<KeyId> key;
    bool peer_request = false;
    int source = -1;         // the source of the current attempt
    // Its cache entry could not be served (the file gone, or not the one
    // the index describes): dropped, and not looked up again for it.
    bool cache_failed = false;
    size_t next_peer = 0;    // peers before this index were asked
    size_t peer = 0;         // the peer of the current attempt
    // Held while this call fetches a block others may wait for; passed to
    // the capture of its answer, which releases it once stored.
    FlightHold flight;
    // Whether the request may wait for another request's fetch of the
    // block (the caller can be woken later: not a batch's piece) ...
    bool may_wait = false;
    // ... and is waiting until then (0: not waiting), having looked this
    // many times.
    int64_t wait_until_ms = 0;
    int waits = 0;
};

struct BlockDecision {
    enum Kind { kPass, kAnswer, kCache, kLedger, kPeer, kWait };
    Kind kind = kPass;
    // kAnswer
    unsigned http_status = 200;
    unsigned retry_after_s = 0;
    // kAnswer: the answer. kLedger, kPeer: the request to forward instead
    // of the client's, written from what was parsed (empty for a call
    // without a variant, which is forwarded as it came and never cached),
    // so no upstream reads the call otherwise than Solgate did.
    std::string body;
    // kCache: serve the file with the client's id spliced in
    std::string path;
    BlockRecord record;
    // kPeer
    size_t peer = 0;
    // kWait: another request fetches the block; look again (AfterWait)
    // in this many ms
    int64_t wait_ms = 0;
};

}  // namespace solgate
