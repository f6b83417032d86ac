// Copies a getBlock response into the region cache while it streams to the
// client: the bytes go to a temp file, the envelope scanner finds the id,
// and a complete, cacheable answer is renamed into place and indexed. A
// response that is cut short, malformed or not cacheable leaves nothing.
//
// What is captured at all is the request path's decision
// (BlockService::StartCapture); a capture only writes what it is given
// into a CaptureSink.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "blocks/block_call.h"
#include "blocks/block_flights.h"
#include "json/envelope_scanner.h"
#include "store/block_store.h"

namespace solgate {

// Where captures go: the region cache, and the receipts of the keys that
// received what was captured.
class CaptureSink {
public:
    virtual ~CaptureSink() = default;
    // Whether there is a cache to write into (in this process, now).
    virtual bool Open() const = 0;
    // A fresh path for a capture's temp file, beside the cache.
    virtual std::string NewTempPath() = 0;
    // Makes room for `incoming` bytes; false when it cannot.
    virtual bool MakeRoom(uint64_t incoming, int64_t wall_ms) = 0;
    // Indexes the finished temp file as (slot, variant); the file is gone
    // either way. False with the reason in *error.
    virtual bool Commit(const std::string& temp_path, uint64_t slot,
                        const std::string& variant, const BlockRecord& rec,
                        std::string* error) = 0;
    // `api_key` received the block of `slot`.
    virtual void NoteReceipt(const std::string& api_key, uint64_t slot,
                             int64_t wall_ms) = 0;
};

class BlockCapture {
public:
    // nullptr when the call is not cacheable, the sink has no cache open
    // or no temp file can be made.
    static std::unique_ptr<BlockCapture> Start(CaptureSink& sink,
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
    // The flight of the call whose answer this is: released when the
    // capture goes, after Finish stored what it could.
    void Carry(FlightHold flight) { flight_ = std::move(flight); }

private:
    BlockCapture(CaptureSink& sink, const BlockCall& call, int fd,
                 std::string path);
    void Abandon();

    CaptureSink& sink_;
    uint64_t slot_;
    std::string variant_;
    std::string api_key_;   // the client that receives it ("" for none)
    int fd_;
    std::string temp_path_;
    EnvelopeScanner scanner_;
    bool failed_ = false;
    FlightHold flight_;
};

// Whether a scanned envelope may be cached: a result, or an error saying
// the slot was skipped (a final answer once the slot is finalized).
bool CacheableEnvelope(const EnvelopeScanner::Result& result);

// Stores a whole answer fetched in the background (another region's copy,
// a long-term storage retrieval) for `call`'s slot and variant. false with
// the reason in *why when it was not stored.
bool StoreAnswer(CaptureSink& sink, const BlockCall& call,
                 const std::string& body, int64_t wall_ms, std::string* why);

}  // namespace solgate
