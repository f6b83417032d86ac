// Cube Runner's decide path on any request, key, plan and peer token, over
// a real bound zone, cache directory and key ledger: a region with one
// peer, long-term storage, a free and an archive plan, blocks cached at
// 4000-4009 and the peer holding 3500-3599. The ledger's window starts
// at 3000, so a call may reach the cache, the ledger, the peer, the
// long-term queue or an answer of Cube Runner's own.
//
// Input: the first byte picks the key (bits 0-1: none, "k1", "k2", a key
// of 8 bytes), the plan (bits 2-3: none, "free", "arch", an unknown one),
// whether the peer token comes (bit 4) and how far the clock moves (bits
// 5-7, 0-700 ms); the rest is the request body.
//
// What holds: a request that is not one Cube Runner call passes by; what
// goes to the ledger or the peer is one canonical call for the same slot
// and variant with the client's id (or, for a call without a variant,
// nothing: it is forwarded as it came); a cache hit is for the slot and
// variant asked and its file exists; an answer is a JSON-RPC envelope
// with the client's id; the calls come with plain HTTP statuses.
#include <sys/stat.h>
#include <yajl/yajl_tree.h>

#include <memory>
#include <string>

#include "blocks/block_service.h"
#include "blocks/block_variant.h"
#include "fuzz_common.h"
#include "rpc/rpc_request.h"
#include "support/blocks_zone.h"
#include "support/fakes.h"

using namespace solgate;

namespace {

constexpr int64_t kStartMs = 1'000'000;
constexpr int64_t kWallMs = 1'800'000'000'000;
const char kVariant[] = "getBlock/json/full/r1/v0";
const char kPeerToken[] = "fuzz-peer-token-0123456789";

void Must(const std::optional<std::string>& refused, const char* what) {
    if (refused) {
        std::fprintf(stderr, "%s: %s\n", what, refused->c_str());
        fuzz::Fail("the harness's configuration is taken");
    }
}

BlockConfBuilder Conf() {
    BlockConfBuilder b;
    Must(b.Region("us"), "region");
    Must(b.PeerToken(kPeerToken), "peer_token");
    Must(b.Peer("eu", "http://127.0.0.1:1/", false), "peer");
    Must(b.LongTermStorage("http://127.0.0.1:2/"), "long_term_storage");
    Must(b.PlanDefine("free", {"tier=free", "getblock_rate=50r/s"}), "free");
    Must(b.PlanDefine("arch", {"tier=archive", "getblock_rate=0",
                               "retrieval_rate=10r/s", "queue_limit=4",
                               "monthly_allowance=3"}),
         "arch");
    return b;
}

struct Region {
    Region() : net(2), rig(net.network, "block_decide_fuzzer", Conf()) {
        if (!rig.error().empty()) {
            std::fprintf(stderr, "rig: %s\n", rig.error().c_str());
            fuzz::Fail("the harness's region starts");
        }
        for (size_t i = 0; i < 2; i++) {
            net.network.record(i).SuggestProcessed(5000);
            net.network.record(i).SuggestFinalized(4968);
            net.network.slots().SetFirstAvailable(i, 3000);
        }
        BlockService& s = *rig.service();
        for (uint64_t slot = 4000; slot < 4010; slot++) {
            BlockCall call;
            call.slot = slot;
            call.variant = kVariant;
            call.source = kSourceLedger;
            std::unique_ptr<BlockCapture> capture =
                s.StartCapture(call, false, kStartMs);
            std::string body = solgate::testing::BlockReply(slot);
            if (!capture || !capture->Write(body.data(), body.size())) {
                fuzz::Fail("the harness's blocks are cached");
            }
            s.CommitLater(std::move(capture), kWallMs);
        }
        s.RunCommits();
        SlotRanges held;
        held.AddRange(3500, 3599);
        s.peer_summaries().Store(0, kStartMs, {{kVariant, held}});
    }

    solgate::testing::TestNetwork net;
    solgate::testing::BlockServiceRig rig;
    int64_t now_ms = kStartMs;
};

const char* KeyFor(uint8_t bits) {
    static const char* const keys[] = {"", "k1", "k2", "8bytekey"};
    return keys[bits & 3];
}

const char* PlanFor(uint8_t bits) {
    static const char* const plans[] = {"", "free", "arch", "gold"};
    return plans[bits & 3];
}

// The id a call without one is answered and forwarded with.
std::string IdOf(const std::string& id_raw) {
    return id_raw.empty() ? "null" : id_raw;
}

// The forwarded body: one call of the client's method, slot and variant.
void CheckForwarded(const RpcCall& asked, const BlockCall& call,
                    const std::string& body) {
    if (call.variant.empty()) {
        if (!body.empty()) {
            fuzz::Fail("a call without a variant is forwarded as it came");
        }
        return;
    }
    RpcRequest again = ParseRpcRequest(body.data(), body.size());
    if (again.shape != RpcRequest::Shape::kSingle || again.calls.size() != 1 ||
        again.calls[0].error) {
        fuzz::Fail("the forwarded body is one valid call");
    }
    const RpcCall& sent = again.calls[0];
    if (sent.method != asked.method || sent.id_raw != IdOf(asked.id_raw) ||
        sent.first_param_u64 != call.slot ||
        BlockVariant(sent).value_or("") != call.variant ||
        sent.commitment != asked.commitment) {
        fuzz::Fail("the forwarded call is the client's, as it was parsed");
    }
}

void CheckAnswer(const BlockCall& call, const BlockDecision& d) {
    char error[128];
    yajl_val root = yajl_tree_parse(d.body.c_str(), error, sizeof(error));
    if (root == nullptr || !YAJL_IS_OBJECT(root) ||
        d.body.find(R"("jsonrpc":"2.0")") == std::string::npos ||
        d.body.find("\"id\":" + IdOf(call.id_raw)) == std::string::npos) {
        std::fprintf(stderr, "answer: %s\n", d.body.c_str());
        fuzz::Fail("an answer is a JSON-RPC envelope with the client's id");
    }
    yajl_tree_free(root);
    if (d.http_status < 200 || d.http_status > 599) {
        fuzz::Fail("an answer has an HTTP status");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static Region* region = new Region();   // one region for the whole run
    if (size == 0) {
        return 0;
    }
    uint8_t bits = data[0];
    std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
    region->now_ms += (bits >> 5) * 100;

    BlockService& service = *region->rig.service();
    RpcRequest request = ParseRpcRequest(body.data(), body.size());
    BlockCall call;
    BlockDecision d = service.Decide(
        request, KeyFor(bits), PlanFor(bits >> 2),
        (bits & 0x10) ? kPeerToken : "", region->now_ms,
        kWallMs + region->now_ms, &call);

    bool one_call = request.shape == RpcRequest::Shape::kSingle &&
                    request.calls.size() == 1 && !request.calls[0].error;
    if (!one_call || !IsCubeRunnerMethod(request.calls[0].method)) {
        if (d.kind != BlockDecision::kPass) {
            fuzz::Fail("what is not one Cube Runner call passes by");
        }
        return 0;
    }
    const RpcCall& asked = request.calls[0];
    switch (d.kind) {
        case BlockDecision::kPass:
            break;
        case BlockDecision::kLedger:
        case BlockDecision::kPeer:
            CheckForwarded(asked, call, d.body);
            break;
        case BlockDecision::kCache: {
            struct stat st;
            if (call.variant.empty() ||
                d.path != service.cache().PathFor(call.slot, call.variant) ||
                stat(d.path.c_str(), &st) != 0 ||
                static_cast<uint64_t>(st.st_size) != d.record.bytes) {
                fuzz::Fail("a cache hit is the file of the block asked");
            }
            break;
        }
        case BlockDecision::kAnswer:
            CheckAnswer(call, d);
            break;
        default:
            fuzz::Fail("a decision is one of its kinds");
    }
    if (d.kind == BlockDecision::kPeer) {
        // the peer failed: the next source, then the count of what served
        d = service.AfterSourceFailure(&call, region->now_ms);
        if (d.kind == BlockDecision::kPeer) {
            fuzz::Fail("a region's only peer is not asked twice");
        }
    }
    if (d.kind == BlockDecision::kCache || d.kind == BlockDecision::kLedger) {
        service.CountServed(call, call.source, kWallMs + region->now_ms);
    }
    return 0;
}
