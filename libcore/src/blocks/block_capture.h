// Copies a getBlock response into the region cache while it streams to the
// client: the bytes go to a temp file, the envelope scanner finds the id,
// and a complete, cacheable answer is renamed into place and indexed. A
// response that is cut short, malformed or not cacheable leaves nothing.
#pragma once

#include <cstdint>
#include <string>

#include "blocks/block_service.h"
#include "json/envelope_scanner.h"

namespace solgate {

class BlockCapture {
public:
    // nullptr when the call is not cacheable or no temp file can be made.
    static std::unique_ptr<BlockCapture> Start(BlockService& service,
                                               const BlockCall& call);
    ~BlockCapture();  // abandons an unfinished capture

    BlockCapture(const BlockCapture&) = delete;
    BlockCapture& operator=(const BlockCapture&) = delete;

    // false once the capture was abandoned (write error, malformed body,
    // too large); the response itself is not affected.
    bool Write(const char* data, size_t len);
    // Indexes the entry when the body was a block or a skipped slot
    // (-32007/-32009). Returns true when it was stored.
    bool Finish(int64_t wall_ms, std::string* error);

private:
    BlockCapture(BlockService& service, const BlockCall& call, int fd,
                 std::string path);
    void Abandon();

    BlockService& service_;
    uint64_t slot_;
    std::string variant_;
    std::string api_key_;   // the client that receives it ("" for none)
    int fd_;
    std::string temp_path_;
    EnvelopeScanner scanner_;
    bool failed_ = false;
};

// Whether a scanned envelope may be cached: a result, or an error saying
// the slot was skipped (a final answer once the slot is finalized).
bool CacheableEnvelope(const EnvelopeScanner::Result& result);

// Stores a whole answer fetched in the background (another region's copy,
// a long-term storage retrieval) for `call`'s slot and variant. false with
// the reason in *why when it was not stored.
bool StoreAnswer(BlockService& service, const BlockCall& call,
                 const std::string& body, int64_t wall_ms, std::string* why);

}  // namespace solgate
