// The request parser on any bytes, and the plain lexer's result against
// yajl's (the reference) for the same body; the getBlock variant of each
// call (the key Cube Runner caches it under) on the way.
#include "blocks/block_variant.h"
#include "fuzz_common.h"
#include "rpc/rpc_request.h"

using namespace solgate;

static bool SameCall(const RpcCall& a, const RpcCall& b) {
    return a.id_raw == b.id_raw && a.method == b.method &&
           a.commitment == b.commitment &&
           a.min_context_slot == b.min_context_slot &&
           a.first_param_u64 == b.first_param_u64 &&
           a.has_params == b.has_params &&
           a.first_param_seen == b.first_param_seen &&
           a.span_begin == b.span_begin && a.span_end == b.span_end &&
           a.error.code == b.error.code &&
           a.error.message == b.error.message &&
           a.block_options.seen == b.block_options.seen &&
           a.block_options.readable == b.block_options.readable &&
           a.block_options.unknown_option == b.block_options.unknown_option &&
           a.block_options.encoding == b.block_options.encoding &&
           a.block_options.transaction_details ==
               b.block_options.transaction_details &&
           a.block_options.rewards == b.block_options.rewards &&
           a.block_options.max_version == b.block_options.max_version;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const char* body = reinterpret_cast<const char*>(data);
    RpcRequest fast = ParseRpcRequest(body, size);
    RpcRequest reference = ParseRpcRequestWithYajl(body, size);
    if (fast.shape != reference.shape ||
        fast.error.code != reference.error.code ||
        fast.calls.size() != reference.calls.size()) {
        fuzz::Fail("the plain lexer and yajl read the request alike");
    }
    for (size_t i = 0; i < fast.calls.size(); i++) {
        if (!SameCall(fast.calls[i], reference.calls[i])) {
            fuzz::Fail("the plain lexer and yajl read each call alike");
        }
        const RpcCall& call = fast.calls[i];
        if (call.span_end > size || call.span_begin > call.span_end) {
            fuzz::Fail("a call's span lies in the body");
        }
        (void) BlockVariant(call);
    }
    return 0;
}
