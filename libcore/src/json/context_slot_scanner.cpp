// A SAX walk that follows one path, top -> "result" -> "context" ->
// "slot", and cancels the parse the moment the answer is known. The first
// chunk is walked by the plain lexer (plain_json.h), which decides most
// answers (small, plain responses) without yajl; when it cannot (an escape,
// non-ASCII, the chunk ends first) yajl walks the body from the start.
// Both deliver the same events (json_events.h) to the same walk.
//
// Only two counters describe where the parser is: how many containers are
// open (depth(), kept by JsonValueEvents) and how many of the outermost
// ones are the maps on the path (path_depth: 1 = top level, 2 = result,
// 3 = context).  The path maps are always the outermost open containers,
// so an event belongs to the innermost path map exactly when
// depth() == path_depth.
#include "json/context_slot_scanner.h"

#include <new>
#include <string_view>

#include "base/recycled.h"
#include "json/json_events.h"
#include "json/plain_json.h"
#include "json/slot_answer.h"
#include "json/yajl_reader.h"

namespace solgate {

using State = ContextSlotScanner::State;

namespace {

constexpr size_t kTopLevel = 1;
constexpr size_t kInContext = 3;

// The key that leads one step further down the path from each path map.
std::string_view PathKeyAt(size_t path_depth) {
    switch (path_depth) {
    case 1:
        return "result";
    case 2:
        return "context";
    case 3:
        return "slot";
    default:
        return {};
    }
}

// What may follow a member's value in valid JSON.
bool EndsMemberValue(char c) {
    return c == ',' || c == '}' || c == ' ' || c == '\t' || c == '\n' ||
           c == '\r';
}

}  // namespace

// Nesting deeper than kMaxScanDepth stops the read (JsonValueEvents)
// undecided, which answers kNotFound.
// One per harvested response: its storage is recycled per thread.
struct ContextSlotScanner::Impl
    : JsonValueEvents<ContextSlotScanner::Impl, kMaxScanDepth>,
      Recycled<ContextSlotScanner::Impl> {
    Impl() noexcept;
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;

    State Feed(const char* data, size_t len) noexcept;
    State Finish() noexcept;
    // The first chunk, through the plain lexer; false when yajl must walk.
    bool FeedPlain(const char* data, size_t len) noexcept;
    State FeedYajl(const char* data, size_t len) noexcept;

    // The walk's events: each returns true to go on, false to stop.
    bool OnValue(JsonKind kind, std::string_view text) noexcept;
    bool OnKey(std::string_view key) noexcept;
    bool OnClose() noexcept;

    bool Decide(State answer) noexcept;
    bool EnterPath() noexcept;
    bool NumberProperlyEnded() const noexcept;

    YajlReader<Impl> yajl{*this, &consumed};
    bool first_chunk = true;
    size_t consumed = 0;   // where the reader is: just past the token
    State state = State::kMore;
    uint64_t slot = 0;
    size_t path_depth = 0;
    // The last key read in the innermost path map leads down the path, so
    // the next value at that level is the one to look at.
    bool key_on_path = false;
    // The chunk being read, for a look just past the slot.
    const char* chunk = nullptr;
    size_t chunk_len = 0;
};

// --- the walk --------------------------------------------------------------

ContextSlotScanner::Impl::Impl() noexcept = default;

State ContextSlotScanner::Impl::Feed(const char* data, size_t len) noexcept {
    if (state != State::kMore || len == 0) {
        return state;
    }
    if (first_chunk) {
        first_chunk = false;
        if (FeedPlain(data, len)) {
            return state;
        }
    }
    return FeedYajl(data, len);
}

bool ContextSlotScanner::Impl::FeedPlain(const char* data,
                                         size_t len) noexcept {
    chunk = data;
    chunk_len = len;
    PlainJson result = LexPlainJson<Impl, kMaxScanDepth + 1>(
        {data, len}, *this, &consumed, false);
    chunk = nullptr;
    chunk_len = 0;
    if (result == PlainJson::kGaveUp && state == State::kMore) {
        // Undecided: yajl walks the body again from its first byte.
        ResetNesting();
        path_depth = 0;
        key_on_path = false;
        return false;
    }
    if (state == State::kMore) {
        state = State::kNotFound;   // a whole value, or too deep
    }
    return true;
}

State ContextSlotScanner::Impl::FeedYajl(const char* data,
                                         size_t len) noexcept {
    // The walk is noexcept and yajl is C, so nothing should throw here;
    // the guard keeps a surprise from unwinding into nginx.
    try {
        chunk = data;
        chunk_len = len;
        YajlRead status = yajl.Feed({data, len});
        chunk = nullptr;
        chunk_len = 0;
        if (status != YajlRead::kOk && state == State::kMore) {
            // invalid JSON, too deep, or no memory for yajl's handle
            state = State::kNotFound;
        }
    } catch (...) {
        state = State::kNotFound;
    }
    if (state != State::kMore) {
        // The answer is final, so the handle (and any token yajl buffered)
        // is returned right away rather than held until the response ends.
        yajl.Reset();
    }
    return state;
}

// A body that ends undecided does not carry the slot.  The reader is not
// completed: the only token that could still arrive is a number the body
// ended in, and a slot number must be followed by '}' or ','.
State ContextSlotScanner::Impl::Finish() noexcept {
    if (state == State::kMore) {
        state = State::kNotFound;
    }
    yajl.Reset();
    return state;
}

bool ContextSlotScanner::Impl::OnValue(JsonKind kind,
                                       std::string_view text) noexcept {
    if (depth() == 0) {
        // The top level: only a single response object can carry the slot.
        return kind == JsonKind::kMap ? EnterPath()
                                      : Decide(State::kNotFound);
    }
    bool leads_down_path = depth() == path_depth && key_on_path;
    if (!leads_down_path) {
        return true;
    }
    if (path_depth == kInContext) {
        auto value = kind == JsonKind::kNumber ? ParseSlotNumber(text)
                                               : std::nullopt;
        if (!value || !NumberProperlyEnded()) {
            return Decide(State::kNotFound);
        }
        slot = *value;
        return Decide(State::kFound);
    }
    // "result" and "context" must be objects to hold the next step.
    return kind == JsonKind::kMap ? EnterPath() : Decide(State::kNotFound);
}

bool ContextSlotScanner::Impl::OnKey(std::string_view key) noexcept {
    if (depth() != path_depth) {
        return true;  // a key somewhere off the path
    }
    if (path_depth == kTopLevel && key == "error") {
        return Decide(State::kNotFound);
    }
    key_on_path = key == PathKeyAt(path_depth);
    return true;
}

bool ContextSlotScanner::Impl::OnClose() noexcept {
    if (depth() == path_depth) {
        // A path map closed and the slot was not in it; keys are not
        // expected twice, so it will not turn up later.
        return Decide(State::kNotFound);
    }
    return true;
}

// The map opening now is the next on the path; open, it counts in depth().
bool ContextSlotScanner::Impl::EnterPath() noexcept {
    path_depth = depth() + 1;
    key_on_path = false;
    return true;
}

// yajl ends a number at the first byte that cannot extend it, so "01"
// arrives as "0" and only the next token would fail.  Since parsing stops
// at the slot, that byte is checked here.  yajl only completes a number on
// seeing that byte, so it is always in the current chunk.
bool ContextSlotScanner::Impl::NumberProperlyEnded() const noexcept {
    return consumed < chunk_len && EndsMemberValue(chunk[consumed]);
}

bool ContextSlotScanner::Impl::Decide(State answer) noexcept {
    state = answer;
    return false;  // stop (yajl: client-cancel): not one more byte is read
}

// --- the public face ---------------------------------------------------------

ContextSlotScanner::ContextSlotScanner() noexcept
    : impl_(new (std::nothrow) Impl()) {}

ContextSlotScanner::~ContextSlotScanner() = default;

ContextSlotScanner::ContextSlotScanner(ContextSlotScanner&& other) noexcept =
    default;

ContextSlotScanner& ContextSlotScanner::operator=(
    ContextSlotScanner&& other) noexcept = default;

State ContextSlotScanner::Feed(const char* data, size_t len) noexcept {
    return impl_ ? impl_->Feed(data, len) : State::kNotFound;
}

State ContextSlotScanner::Finish() noexcept {
    return impl_ ? impl_->Finish() : State::kNotFound;
}

State ContextSlotScanner::state() const noexcept {
    return impl_ ? impl_->state : State::kNotFound;
}

uint64_t ContextSlotScanner::slot() const noexcept {
    return impl_ && impl_->state == State::kFound ? impl_->slot : 0;
}

}  // namespace solgate
