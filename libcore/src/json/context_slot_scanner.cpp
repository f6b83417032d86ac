// A SAX walk that follows one path, top -> "result" -> "context" ->
// "slot", and cancels the parse the moment the answer is known. The first
// chunk is walked by the plain lexer (plain_json.h), which decides most
// answers (small, plain responses) without yajl; when it cannot (an escape,
// non-ASCII, the chunk ends first) yajl walks the body from the start.
//
// Only two counters describe where the parser is: how many containers are
// open (depth) and how many of the outermost ones are the maps on the path
// (path_depth: 1 = top level, 2 = result, 3 = context).  The path maps are
// always the outermost open containers, so an event belongs to the
// innermost path map exactly when depth == path_depth.
#include "json/context_slot_scanner.h"

#include <yajl/yajl_parse.h>

#include <new>
#include <string_view>

#include "json/plain_json.h"
#include "json/slot_answer.h"

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

enum class Kind { kScalar, kNumber, kMap, kArray };

// What may follow a member's value in valid JSON.
bool EndsMemberValue(char c) {
    return c == ',' || c == '}' || c == ' ' || c == '\t' || c == '\n' ||
           c == '\r';
}

}  // namespace

struct ContextSlotScanner::Impl {
    Impl() noexcept;
    ~Impl() { ReleaseParser(); }
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;

    State Feed(const char* data, size_t len) noexcept;
    State Finish() noexcept;
    // The first chunk, through the plain lexer; false when yajl must walk.
    bool FeedPlain(const char* data, size_t len) noexcept;
    State FeedYajl(const char* data, size_t len) noexcept;

    // yajl callbacks: each returns 1 to go on, 0 to cancel the parse.
    int OnValue(Kind kind, std::string_view number) noexcept;
    int OnKey(std::string_view key) noexcept;
    int OnClose() noexcept;

    int Decide(State answer) noexcept;
    int Open(bool on_path) noexcept;
    bool NumberProperlyEnded() const noexcept;
    void ReleaseParser() noexcept;

    struct Glue;
    struct PlainGlue;

    yajl_handle handle = nullptr;
    bool first_chunk = true;
    size_t plain_consumed = 0;   // the plain lexer's position
    State state = State::kMore;
    uint64_t slot = 0;
    size_t depth = 0;
    size_t path_depth = 0;
    // The last key read in the innermost path map leads down the path, so
    // the next value at that level is the one to look at.
    bool key_on_path = false;
    // The chunk yajl_parse is working on, for a look just past the slot.
    const char* chunk = nullptr;
    size_t chunk_len = 0;
};

// --- yajl glue -------------------------------------------------------------

// Static members so they may name the private Impl.
struct ContextSlotScanner::Impl::Glue {
    static Impl* Self(void* ctx) { return static_cast<Impl*>(ctx); }

    static int OnNull(void* ctx) {
        return Self(ctx)->OnValue(Kind::kScalar, {});
    }
    static int OnBool(void* ctx, int) {
        return Self(ctx)->OnValue(Kind::kScalar, {});
    }
    static int OnNumber(void* ctx, const char* s, size_t len) {
        return Self(ctx)->OnValue(Kind::kNumber, {s, len});
    }
    // Needed even though string contents never matter: a string where an
    // object was expected decides the answer.
    static int OnString(void* ctx, const unsigned char*, size_t) {
        return Self(ctx)->OnValue(Kind::kScalar, {});
    }
    static int OnStartMap(void* ctx) {
        return Self(ctx)->OnValue(Kind::kMap, {});
    }
    static int OnMapKey(void* ctx, const unsigned char* s, size_t len) {
        return Self(ctx)->OnKey({reinterpret_cast<const char*>(s), len});
    }
    static int OnStartArray(void* ctx) {
        return Self(ctx)->OnValue(Kind::kArray, {});
    }
    static int OnEnd(void* ctx) { return Self(ctx)->OnClose(); }

    static constexpr yajl_callbacks kCallbacks = {
        OnNull, OnBool, nullptr, nullptr, OnNumber, OnString,
        OnStartMap, OnMapKey, OnEnd, OnStartArray, OnEnd,
    };
};

// The plain lexer's events, as the walk takes yajl's.
struct ContextSlotScanner::Impl::PlainGlue {
    Impl& impl;

    bool OnNull() { return impl.OnValue(Kind::kScalar, {}); }
    bool OnBool(bool) { return impl.OnValue(Kind::kScalar, {}); }
    bool OnNumber(std::string_view s) {
        return impl.OnValue(Kind::kNumber, s);
    }
    bool OnString(std::string_view) {
        return impl.OnValue(Kind::kScalar, {});
    }
    bool OnStartMap() { return impl.OnValue(Kind::kMap, {}); }
    bool OnKey(std::string_view key) { return impl.OnKey(key); }
    bool OnEndMap() { return impl.OnClose(); }
    bool OnStartArray() { return impl.OnValue(Kind::kArray, {}); }
    bool OnEndArray() { return impl.OnClose(); }
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
    PlainGlue glue{*this};
    PlainJson result =
        LexPlainJson<PlainGlue, kMaxScanDepth + 1>({data, len}, glue,
                                                   &plain_consumed, false);
    chunk = nullptr;
    chunk_len = 0;
    if (result == PlainJson::kGaveUp && state == State::kMore) {
        // Undecided: yajl walks the body again from its first byte.
        depth = 0;
        path_depth = 0;
        key_on_path = false;
        return false;
    }
    if (state == State::kMore) {
        state = State::kNotFound;   // a whole value and no decision
    }
    return true;
}

State ContextSlotScanner::Impl::FeedYajl(const char* data,
                                         size_t len) noexcept {
    if (handle == nullptr) {
        handle = yajl_alloc(&Glue::kCallbacks, nullptr, this);
        if (handle == nullptr) {
            state = State::kNotFound;
            return state;
        }
    }
    // Callbacks are noexcept and yajl is C, so nothing should throw here;
    // the guard keeps a surprise from unwinding into nginx.
    try {
        chunk = data;
        chunk_len = len;
        const auto* bytes = reinterpret_cast<const unsigned char*>(data);
        yajl_status status = yajl_parse(handle, bytes, len);
        chunk = nullptr;
        chunk_len = 0;
        if (status == yajl_status_error) {
            state = State::kNotFound;  // invalid JSON
        } else if (status == yajl_status_client_canceled &&
                   state == State::kMore) {
            state = State::kNotFound;  // cannot happen: cancels decide
        }
    } catch (...) {
        state = State::kNotFound;
    }
    if (state != State::kMore) {
        ReleaseParser();
    }
    return state;
}

// A body that ends undecided does not carry the slot.  yajl_complete_parse
// is not called: the only token it could still deliver is a number the
// body ended in, and a slot number must be followed by '}' or ','.
State ContextSlotScanner::Impl::Finish() noexcept {
    if (state == State::kMore) {
        state = State::kNotFound;
    }
    ReleaseParser();
    return state;
}

int ContextSlotScanner::Impl::OnValue(Kind kind,
                                      std::string_view number) noexcept {
    if (depth == 0) {
        // The top level: only a single response object can carry the slot.
        return kind == Kind::kMap ? Open(true) : Decide(State::kNotFound);
    }
    bool leads_down_path = depth == path_depth && key_on_path;
    if (!leads_down_path) {
        bool container = kind == Kind::kMap || kind == Kind::kArray;
        return container ? Open(false) : 1;
    }
    if (path_depth == kInContext) {
        auto value = kind == Kind::kNumber ? ParseSlotNumber(number)
                                           : std::nullopt;
        if (!value || !NumberProperlyEnded()) {
            return Decide(State::kNotFound);
        }
        slot = *value;
        return Decide(State::kFound);
    }
    // "result" and "context" must be objects to hold the next step.
    return kind == Kind::kMap ? Open(true) : Decide(State::kNotFound);
}

int ContextSlotScanner::Impl::OnKey(std::string_view key) noexcept {
    if (depth != path_depth) {
        return 1;  // a key somewhere off the path
    }
    if (path_depth == kTopLevel && key == "error") {
        return Decide(State::kNotFound);
    }
    key_on_path = key == PathKeyAt(path_depth);
    return 1;
}

int ContextSlotScanner::Impl::OnClose() noexcept {
    if (depth == path_depth) {
        // A path map closed and the slot was not in it; keys are not
        // expected twice, so it will not turn up later.
        return Decide(State::kNotFound);
    }
    depth--;
    return 1;
}

int ContextSlotScanner::Impl::Open(bool on_path) noexcept {
    if (depth >= kMaxScanDepth) {
        return Decide(State::kNotFound);
    }
    depth++;
    if (on_path) {
        path_depth = depth;
        key_on_path = false;
    }
    return 1;
}

// yajl ends a number at the first byte that cannot extend it, so "01"
// arrives as "0" and only the next token would fail.  Since parsing stops
// at the slot, that byte is checked here.  yajl only completes a number on
// seeing that byte, so it is always in the current chunk.
bool ContextSlotScanner::Impl::NumberProperlyEnded() const noexcept {
    size_t next = handle != nullptr ? yajl_get_bytes_consumed(handle)
                                    : plain_consumed;
    return next < chunk_len && EndsMemberValue(chunk[next]);
}

int ContextSlotScanner::Impl::Decide(State answer) noexcept {
    state = answer;
    return 0;  // yajl client-cancel: not one more byte is parsed
}

// The answer is final, so the parser (and any token yajl buffered) is
// returned right away rather than held until the response ends.
void ContextSlotScanner::Impl::ReleaseParser() noexcept {
    if (handle != nullptr) {
        yajl_free(handle);
        handle = nullptr;
    }
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
