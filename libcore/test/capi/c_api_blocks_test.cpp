// The Cube Runner shims translate: every refusal is libcore's message in
// err, and nothing is served before the block is attached.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "solgate/solgate.h"

namespace solgate {
namespace {

sg_str_t Str(const char* text) { return {text, std::strlen(text)}; }

struct Network {
    Network() {
        char err[160];
        EXPECT_EQ(sg_network_new(Str("m"), &net, err, sizeof(err)), SG_OK);
        sg_str_t args[] = {Str("a"), Str("http://x/")};
        sg_upstream_info_t info;
        EXPECT_EQ(sg_network_add_upstream(net, args, 2, &info, err,
                                          sizeof(err)),
                  SG_OK);
        sg_network_settings_t settings{SG_DEFAULT_DEBOUNCE_MS,
                                       SG_DEFAULT_MAX_FINALIZED_LAG, 1};
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

sg_blocks_conf_t Settings(const char* token) {
    return sg_blocks_conf_t{Str("us"), Str("/unused/cache"),
                            Str("/unused/state"), 0, Str(token)};
}

// A new solgate_blocks (sg_blocks_new's peer_token `token`) with one peer.
sg_blocks_t* WithAPeer(const char* token) {
    sg_blocks_conf_t conf = Settings(token);
    sg_blocks_t* blocks = sg_blocks_new(&conf);
    char err[160];
    EXPECT_EQ(sg_blocks_add_peer(blocks, Str("eu"), Str("http://eu/"), 1,
                                 err, sizeof(err)),
              SG_OK);
    return blocks;
}

TEST(CApiBlocks, RefusalsCarryLibcoresMessage) {
    sg_blocks_conf_t none{};
    sg_blocks_t* blocks = sg_blocks_new(&none);
    ASSERT_NE(blocks, nullptr);
    char err[160];
    EXPECT_EQ(sg_blocks_add_peer(blocks, Str("eu"), Str("http://eu/"), 1,
                                 err, sizeof(err)),
              SG_OK);
    EXPECT_EQ(sg_blocks_add_peer(blocks, Str("eu"), Str("http://eu2/"), 1,
                                 err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "duplicate peer \"eu\"");
    sg_str_t args[] = {Str("tier=archive"), Str("getblock_rate=fast")};
    EXPECT_EQ(sg_blocks_define_plan(blocks, Str("gold"), args, 2, err,
                                    sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "invalid rate \"fast\" in \"getblock_rate\"");
    for (int i = 0; i < 8; i++) {
        ASSERT_EQ(sg_blocks_add_long_term(blocks, Str("http://lts/"), err,
                                          sizeof(err)),
                  SG_OK);
    }
    EXPECT_EQ(sg_blocks_add_long_term(blocks, Str("http://lts/"), err,
                                      sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "too many long_term_storage URLs (at most 8)");
    // Not attached yet: no zone to size or bind.
    EXPECT_EQ(sg_blocks_shared_size(blocks), 0u);
    EXPECT_EQ(sg_blocks_bind(blocks, nullptr, 1, err, sizeof(err)), SG_ERROR);
    EXPECT_STREQ(err, "not attached to a network");
    EXPECT_EQ(sg_blocks_open(blocks, 1, err, sizeof(err)), SG_ERROR);
    EXPECT_STREQ(err, "not attached to a network");
    sg_blocks_free(blocks);
}

TEST(CApiBlocks, AttachFreezesTheConfiguration) {
    Network network;
    sg_blocks_t* blocks = WithAPeer("");
    char err[160];
    sg_blocks_conf_t settings = Settings("0123456789abcdef");
    ASSERT_EQ(sg_blocks_attach(blocks, network.net, &settings), SG_OK);
    EXPECT_EQ(sg_blocks_add_peer(blocks, Str("ap"), Str("http://ap/"), 1,
                                 err, sizeof(err)),
              SG_INVALID);
    EXPECT_STREQ(err, "solgate_blocks is already attached");
    EXPECT_EQ(sg_blocks_attach(blocks, network.net, &settings), SG_ERROR);

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
    ASSERT_EQ(sg_blocks_decide(blocks, req, Str("k"), Str("free"), Str(""),
                               0, 0, &call, &d),
              SG_OK);
    EXPECT_EQ(d.action, SG_BLOCKS_PASS);
    EXPECT_EQ(call, nullptr);
    sg_request_free(req);
    sg_blocks_free(blocks);
    std::free(zone);
}

TEST(CApiBlocks, AttachRefusesWhatTheBuilderRefuses) {
    Network network;
    // A peer and no peer_token; then a peer_token too short.
    sg_blocks_t* blocks = WithAPeer("");
    sg_blocks_conf_t no_token = Settings("");
    EXPECT_EQ(sg_blocks_attach(blocks, network.net, &no_token), SG_ERROR);
    sg_blocks_free(blocks);

    sg_blocks_conf_t none{};
    blocks = sg_blocks_new(&none);
    sg_blocks_conf_t short_token = Settings("short");
    EXPECT_EQ(sg_blocks_attach(blocks, network.net, &short_token), SG_ERROR);
    sg_blocks_free(blocks);

    // sg_blocks_new's token is the default attach falls back to.
    blocks = WithAPeer("0123456789abcdef");
    EXPECT_EQ(sg_blocks_attach(blocks, network.net, &no_token), SG_OK);
    sg_blocks_free(blocks);
}

}  // namespace
}  // namespace solgate
