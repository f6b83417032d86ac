// Reads result.context.slot from a JSON-RPC response while its body streams
// through nginx, chunk by chunk, and stops parsing as soon as the answer is
// known, so a response carrying megabytes of "value" after its "context"
// costs a few dozen bytes of parsing, not megabytes.
//
// Work bound, and its limits:
//  * Parsing stops (yajl client-cancel) at the first byte that decides the
//    answer: the end of the slot number, an "error" member at top level, a
//    "result" or "context" that is not an object, a top level that is not
//    an object (a batch starts with '[' and is not handled here), invalid
//    JSON, or the close of the top-level, "result" or "context" object
//    without the slot.  After that, Feed never looks at its data again.
//  * Key order is not guaranteed, so a response whose "value" precedes
//    "context" is still walked, token by token, up to "context": a
//    streaming parser cannot skip a value without lexing it.
//  * Nothing is copied, except that yajl keeps at most one token internally
//    across a chunk boundary (the token split by it).  That token can be as
//    long as the longest string in the body walked before the answer, e.g.
//    a base64 account blob in a "value" that precedes "context".
//  * Nesting deeper than kMaxScanDepth before the answer is reported as
//    kNotFound, so yajl's stack cannot grow without bound.
//  * Validity is only checked up to the answer: a body that goes wrong after
//    the slot (truncated, invalid) still reports kFound.
//  * A key that appears twice is not looked for again: the first "result",
//    "context" or "slot" member decides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace solgate {

class ContextSlotScanner {
public:
    enum class State { kMore, kFound, kNotFound };

    static constexpr size_t kMaxScanDepth = 1024;

    // Never throws; yajl's handle is allocated only when the first chunk
    // is not plain JSON.  If memory runs out the scanner answers kNotFound.
    ContextSlotScanner() noexcept;
    ~ContextSlotScanner();

    // Movable (the parse state lives on the heap, where yajl's callbacks
    // point); a moved-from scanner answers kNotFound.
    ContextSlotScanner(ContextSlotScanner&& other) noexcept;
    ContextSlotScanner& operator=(ContextSlotScanner&& other) noexcept;
    ContextSlotScanner(const ContextSlotScanner&) = delete;
    ContextSlotScanner& operator=(const ContextSlotScanner&) = delete;

    // Feeds the next chunk of the body (any size, including 0 or 1 byte).
    // kMore: undecided yet.  kFound / kNotFound are final: every later call
    // returns the same state at once without reading data.
    State Feed(const char* data, size_t len) noexcept;

    // The body has ended: kFound if the slot was read, kNotFound otherwise
    // (a body cut off in the middle of the slot number is not found).
    // Final, like the answers of Feed.
    State Finish() noexcept;

    State state() const noexcept;

    // The slot when state() is kFound, 0 otherwise.
    uint64_t slot() const noexcept;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace solgate
