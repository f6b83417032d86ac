// The cache variant of a getBlock call: the parameters that choose the
// response body, written one canonical way, so equal requests share one
// cache entry and a variant can be turned back into params.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "rpc/rpc_request.h"

namespace solgate {

// True for the methods Cube Runner answers from its sources.
bool IsBlockMethod(std::string_view method);

// "<method>/<encoding>/<transactionDetails>/r<0|1>/v<version|->", e.g.
// "getBlock/json/full/r1/v0", with Solana's defaults filled in (json, full,
// rewards on, no maxSupportedTransactionVersion). nullopt when the call is
// not a getBlock/getConfirmedBlock with a slot or its options are ones a
// node would refuse or Solgate does not know: such calls are forwarded and
// never cached.
std::optional<std::string> BlockVariant(const RpcCall& call);

// The JSON-RPC body asking for `slot` in `variant` with the given raw id
// and commitment (empty: none, the node's default), e.g. for copying a
// block from another region, or the canonical form of a client's call
// that Cube Runner forwards. nullopt for a malformed variant.
std::optional<std::string> BlockRequestBody(
    uint64_t slot, std::string_view variant, std::string_view id_raw,
    std::string_view commitment = "finalized");

}  // namespace solgate
