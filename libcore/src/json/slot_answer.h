// The answer to getSlot (a few dozen bytes): read the slot and where its
// digits sit, so the body can be re-emitted with another slot while every
// other byte (the id as the node wrote it, whitespace) stays as it was.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace solgate {

struct SlotAnswer {
    uint64_t slot = 0;
    // [begin, end) is the raw text of the "result" number in the body.
    size_t begin = 0;
    size_t end = 0;
};

// Succeeds only for one JSON-RPC 2.0 response object ("jsonrpc":"2.0",
// an "id" that is a number, string or null, no "error") whose single
// "result" is a non-negative integer that fits uint64; members in any
// order, whitespace anywhere JSON allows it.  Fails for error responses,
// batches, fractions, exponents, negatives, strings, invalid JSON and
// anything after the object but whitespace.
std::optional<SlotAnswer> ParseSlotAnswer(std::string_view body);
// The same through yajl alone (the reference the faster readers are
// checked against in tests).
std::optional<SlotAnswer> ParseSlotAnswerWithYajl(std::string_view body);

// The body with answer's digits replaced by slot, every other byte kept.
// answer must come from ParseSlotAnswer(body); a span that does not fit in
// body leaves the body unchanged.
std::string ReplaceSlot(std::string_view body, const SlotAnswer& answer,
                        uint64_t slot);

// A JSON number token read as a slot: plain decimal digits that fit uint64
// ("0", "341234567"); nullopt for "-1", "1.5", "1e3" or an overflow.
std::optional<uint64_t> ParseSlotNumber(std::string_view number_token);

}  // namespace solgate
