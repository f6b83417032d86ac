// The Cube Runner shims translate: every refusal is libcore's message in
// err, nothing is served before the block is attached, and NULL arguments
// are refused rather than followed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "solgate/solgate.h"

namespace solgate {
namespace {

sg_str_t Str(const char* text) { return {text, std::strlen(text)}; }

std::string Text(sg_str_t s) { return std::string(s.data, s.len); }

struct Network {
    Network() {
        char err[160];
        EXPECT_EQ(sg_network_new(Str("m"), &net, err, sizeof(err)), SG_OK);
        sg_str_t args[] = {Str("a"), Str("http://x/")};
        sg_upstream_info_t info;
        EXPECT_EQ(sg_network_add_upstream(net, args, 2, &info, err,
                                          sizeof(err)),
                  SG_OK);
        sg_network_settings_t settings;
        sg_network_settings_default(&settings);
        EXPECT_EQ(sg_network_configure(net, &settings, err, sizeof(err)),
                  SG_OK);
        shared = std::make_unique<char[]>(sg_network_shared_size());
        EXPECT_EQ(sg_network_bind(net, shared.get(), 1, 0, err, sizeof(err)),
                  SG_OK);
    }
    ~Network() { sg_network_free(net); }

    sg_network_t* net = nullptr;
    std::unique_ptr<char[]> shared;
};

// A block with what every block needs (and a peer when `token` is given).
sg_blocks_t* Whole(const char* token = nullptr) {
    sg_blocks_t* blocks = nullptr;
    char err[160];
    EXPECT_EQ(sg_blocks_new(&blocks), SG_OK);
    EXPECT_EQ(sg_blocks_set_region(blocks, Str("us"), err, sizeof(err)), SG_OK);
    EXPECT_EQ(sg_blocks_set_cache(blocks, Str("/unused/cache"), 0, err,
                                  sizeof(err)),
              SG_OK);
    EXPECT_EQ(sg_blocks_set_state(blocks, Str("/unused/state"), err,
                                  sizeof(err)),
              SG_OK);
    if (token != nullptr) {
        EXPECT_EQ(sg_blocks_set_peer_token(blocks, Str(token), err,
                                           sizeof(err)),
                  SG_OK);
        sg_str_t args[] = {Str("eu"), Str("http://eu_gw")};
        sg_upstream_info_t info;
        EXPECT_EQ(sg_blocks_add_peer(blocks, args, 2, &info, err, sizeof(err)),
                  SG_OK);
    }
    return blocks;
}

TEST(CApiBlocks, RefusalsCarryLibcoresMessage) {
    sg_blocks_t* blocks = nullptr;
    ASSERT_EQ(sg_blocks_new(&blocks), SG_OK);
    char err[200];
    sg_str_t peer[] = {Str("eu"), Str("http://eu/")};
    sg_str_t again[] = {Str("eu"), Str("http://eu2/")};
    sg_upstream_info_t info;
    std::memset(&info, 0x5a, sizeof(info));   // what the module's stack held
    EXPECT_EQ(sg_blocks_add_peer(blocks, peer, 2, &info, err, sizeof(err)),
              SG_OK);
    // every field is written: a peer has no ws= and is no block's server
    EXPECT_EQ(info.ws_url.len, 0u);
    EXPECT_EQ(info.ws_authority.len, 0u);
    EXPECT_EQ(info.block_server, 0u);
    EXPECT_EQ(sg_blocks_add_peer(blocks, again, 2, &info, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "duplicate peer \"eu\"");
    sg_str_t bad_url[] = {Str("ap"), Str("127.0.0.1:9")};
    EXPECT_EQ(sg_blocks_add_peer(blocks, bad_url, 2, &info, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "invalid peer URL \"127.0.0.1:9\": must start with "
                      "\"http://\" or \"https://\"");
    sg_str_t bad_copy[] = {Str("ap"), Str("http://ap/"), Str("copy=yes")};
    EXPECT_EQ(sg_blocks_add_peer(blocks, bad_copy, 3, &info, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "invalid parameter \"copy=yes\", it must be "
                      "\"copy=on\" or \"copy=off\"");
    sg_str_t plan[] = {Str("gold"), Str("tier=archive"),
                       Str("getblock_rate=fast")};
    EXPECT_EQ(sg_blocks_define_plan(blocks, plan, 3, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "invalid rate \"fast\" in \"getblock_rate\"");
    EXPECT_EQ(sg_blocks_define_plan(blocks, plan, 0, err, sizeof(err)),
              SG_INVALID);
    for (int i = 0; i < 8; i++) {
        ASSERT_EQ(sg_blocks_add_long_term(blocks, Str("http://lts/"), err,
                                          sizeof(err)),
                  SG_OK);
    }
    EXPECT_EQ(sg_blocks_add_long_term(blocks, Str("http://lts/"), err,
                                      sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "too many long_term_storage URLs (at most 8)");
    EXPECT_EQ(sg_blocks_set_region(blocks, Str("us east"), err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "invalid region name \"us east\": may contain only "
                      "letters, digits, '-', '_' and '.'");
    EXPECT_EQ(sg_blocks_set_peer_token(blocks, Str("short"), err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "peer_token must be at least 16 bytes: it is all that "
                      "tells another region from a client");
    // Not whole, and not attached yet: no zone to size or bind.
    EXPECT_EQ(sg_blocks_check(blocks, 1, 1, err, sizeof(err)), SG_INVALID);
    EXPECT_STREQ(err, "needs \"region\"");
    EXPECT_EQ(sg_blocks_shared_size(blocks), 0u);
    EXPECT_EQ(sg_blocks_bind(blocks, nullptr, 1, err, sizeof(err)), SG_ERROR);
    EXPECT_STREQ(err, "not attached to a network");
    EXPECT_EQ(sg_blocks_open(blocks, 1, err, sizeof(err)), SG_ERROR);
    EXPECT_STREQ(err, "not attached to a network");
    sg_blocks_free(blocks);
}

TEST(CApiBlocks, APeerIsDescribedForProxyPass) {
    sg_blocks_t* blocks = nullptr;
    ASSERT_EQ(sg_blocks_new(&blocks), SG_OK);
    char err[160];
    sg_str_t args[] = {Str("eu"), Str("https://eu_gw"), Str("copy=off")};
    sg_upstream_info_t info;
    ASSERT_EQ(sg_blocks_add_peer(blocks, args, 3, &info, err, sizeof(err)),
              SG_OK);
    EXPECT_EQ(Text(info.id), "eu");
    EXPECT_EQ(Text(info.url), "https://eu_gw/");
    EXPECT_EQ(Text(info.host), "eu_gw");
    EXPECT_EQ(Text(info.authority), "eu_gw");
    sg_blocks_free(blocks);
}

TEST(CApiBlocks, AttachFreezesTheConfiguration) {
    Network network;
    sg_blocks_t* blocks = Whole("0123456789abcdef");
    char err[160];
    EXPECT_EQ(sg_blocks_check(blocks, 0, 1, err, sizeof(err)), SG_INVALID);
    EXPECT_STREQ(err, "needs \"api_key\"");
    EXPECT_EQ(sg_blocks_check(blocks, 1, 0, err, sizeof(err)), SG_INVALID);
    EXPECT_STREQ(err, "needs \"plan\"");
    ASSERT_EQ(sg_blocks_check(blocks, 1, 1, err, sizeof(err)), SG_OK);
    ASSERT_EQ(sg_blocks_attach(blocks, network.net, err, sizeof(err)), SG_OK);
    sg_str_t args[] = {Str("ap"), Str("http://ap/")};
    sg_upstream_info_t info;
    EXPECT_EQ(sg_blocks_add_peer(blocks, args, 2, &info, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "solgate_blocks is already attached");
    EXPECT_EQ(sg_blocks_attach(blocks, network.net, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "solgate_blocks is already attached");

    size_t size = sg_blocks_shared_size(blocks);
    ASSERT_GT(size, 0u);
    void* zone = std::aligned_alloc(64, (size + 63) / 64 * 64);
    std::memset(zone, 0, size);
    ASSERT_EQ(sg_blocks_bind(blocks, zone, 1, err, sizeof(err)), SG_OK) << err;

    const char body[] = R"({"jsonrpc":"2.0","id":1,"method":"getSlot"})";
    sg_request_t* req = nullptr;
    ASSERT_EQ(sg_request_parse(body, sizeof(body) - 1, &req), SG_OK);
    sg_block_call_t* call = nullptr;
    sg_blocks_decision_t d;
    ASSERT_EQ(sg_blocks_decide(blocks, req, Str("k"), Str("free"), Str(""), Str(""),
                               1, 0, 0, &call, &d),
              SG_OK);
    EXPECT_EQ(d.action, SG_BLOCKS_PASS);
    EXPECT_EQ(call, nullptr);
    sg_capture_t* capture = reinterpret_cast<sg_capture_t*>(1);
    EXPECT_EQ(sg_capture_start(blocks, call, 0, 0, &capture), SG_NONE);
    EXPECT_EQ(capture, nullptr);
    sg_request_free(req);
    sg_blocks_free(blocks);
    std::free(zone);
}

TEST(CApiBlocks, AttachRefusesWhatTheBuilderRefuses) {
    Network network;
    char err[160];
    // A peer and no peer_token.
    sg_blocks_t* blocks = Whole();
    sg_str_t args[] = {Str("eu"), Str("http://eu/")};
    sg_upstream_info_t info;
    ASSERT_EQ(sg_blocks_add_peer(blocks, args, 2, &info, err, sizeof(err)),
              SG_OK);
    EXPECT_EQ(sg_blocks_check(blocks, 1, 1, err, sizeof(err)), SG_INVALID);
    EXPECT_STREQ(err, "has a \"peer\" but no \"peer_token\"");
    EXPECT_EQ(sg_blocks_attach(blocks, network.net, err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "has a \"peer\" but no \"peer_token\"");
    sg_blocks_free(blocks);

    blocks = Whole("0123456789abcdef");
    EXPECT_EQ(sg_blocks_attach(blocks, network.net, err, sizeof(err)), SG_OK);
    sg_blocks_free(blocks);
}

TEST(CApiBlocks, NullArgumentsAreRefusedNotFollowed) {
    char err[64];
    sg_upstream_info_t info;
    sg_blocks_decision_t d;
    sg_block_call_t* call = nullptr;
    sg_capture_t* capture = nullptr;
    EXPECT_EQ(sg_blocks_new(nullptr), SG_INVALID);
    EXPECT_EQ(sg_blocks_set_region(nullptr, Str("us"), err, sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_blocks_set_cache(nullptr, Str("/c"), 0, err, sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_blocks_set_state(nullptr, Str("/s"), err, sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_blocks_set_peer_token(nullptr, Str("t"), err, sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_blocks_add_peer(nullptr, nullptr, 0, &info, err, sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_blocks_add_long_term(nullptr, Str("http://x/"), err,
                                      sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_blocks_define_plan(nullptr, nullptr, 0, err, sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_blocks_check(nullptr, 1, 1, err, sizeof(err)), SG_INVALID);
    EXPECT_EQ(sg_blocks_attach(nullptr, nullptr, err, sizeof(err)),
              SG_INVALID);
    EXPECT_EQ(sg_blocks_shared_size(nullptr), 0u);
    EXPECT_EQ(sg_blocks_bind(nullptr, nullptr, 1, err, sizeof(err)), SG_ERROR);
    EXPECT_EQ(sg_blocks_open(nullptr, 1, err, sizeof(err)), SG_ERROR);
    EXPECT_EQ(sg_blocks_decide(nullptr, nullptr, Str(""), Str(""), Str(""), Str(""), 0,
                               0, 0, &call, &d),
              SG_INVALID);
    EXPECT_EQ(sg_blocks_next(nullptr, nullptr, 0, &d), SG_INVALID);
    EXPECT_EQ(sg_blocks_recheck(nullptr, nullptr, 0, &d), SG_INVALID);
    EXPECT_EQ(sg_capture_start(nullptr, nullptr, 0, 0, &capture), SG_NONE);
    EXPECT_EQ(sg_capture_start(nullptr, nullptr, 0, 0, nullptr), SG_INVALID);
    EXPECT_EQ(sg_capture_write(nullptr, "x", 1), SG_NONE);
    sg_blocks_served(nullptr, nullptr, 0);
    sg_blocks_close(nullptr);
    sg_capture_commit(nullptr, 0);
    sg_capture_free(nullptr);
    sg_block_call_free(nullptr);
    sg_blocks_free(nullptr);
}

}  // namespace
}  // namespace solgate
