// Reads a JSON text with yajl, the reference parser, and hands its events
// to a handler with the interface of json_events.h, the one the plain
// lexer drives too.  The only yajl glue in libcore: the handle, its
// callback table and the meaning of its statuses live here.
//
// Contract:
//  * Feed takes the text in chunks split anywhere (one byte at a time
//    works); Complete says it has ended, so that a number at the very end
//    is delivered and a text that stops early is refused.  ReadWhole is
//    the two at once.
//  * kOk: valid so far (from Complete: a whole valid text).  kStopped: a
//    handler event returned false.  kInvalid: not JSON, per yajl's
//    defaults (UTF-8 checked, no comments, one value, nothing after it
//    but whitespace).  kNoMemory: yajl's handle could not be allocated.
//    All but kOk are final: later calls return the same status at once,
//    without reading their data or calling the handler.  After Complete,
//    more text reads as what follows the value (whitespace passes, any
//    other byte is kInvalid) until a Reset.
//  * The handle is allocated by the first Feed (a reader that is never fed
//    costs nothing) and freed by Reset or the destructor.  Reset also
//    starts a new text: the next Feed reads from its first byte.
//  * *consumed is set before each event to the offset, in the chunk being
//    fed, just past the token; during Complete (a number that ended the
//    text), in the last chunk that was not empty.
//  * An exception from the handler unwinds through yajl (C, built with
//    unwind tables) out of Feed or Complete; the reader may then only be
//    Reset or destroyed.
//  * The handler and the reader must stay where they are while a text is
//    read: yajl keeps a pointer to the reader.
#pragma once

#include <yajl/yajl_parse.h>

#include <cstddef>
#include <string_view>

namespace solgate {

enum class YajlRead { kOk, kStopped, kInvalid, kNoMemory };

template <typename Handler>
class YajlReader {
public:
    YajlReader(Handler& handler, size_t* consumed) noexcept
        : handler_(handler), consumed_(consumed) {}
    ~YajlReader() { Reset(); }
    YajlReader(const YajlReader&) = delete;
    YajlReader& operator=(const YajlReader&) = delete;

    YajlRead Feed(std::string_view chunk) {
        if (status_ != YajlRead::kOk || !Open()) {
            return status_;
        }
        if (!chunk.empty()) {
            last_chunk_ = chunk.size();
        }
        const auto* bytes =
            reinterpret_cast<const unsigned char*>(chunk.data());
        status_ = StatusOf(yajl_parse(handle_, bytes, chunk.size()));
        return status_;
    }

    YajlRead Complete() {
        if (status_ != YajlRead::kOk || !Open()) {
            return status_;
        }
        // yajl ends the text by parsing a space of its own: offsets in it
        // would be 0, not the end of the chunk the text ended in.
        base_ = last_chunk_;
        status_ = StatusOf(yajl_complete_parse(handle_));
        base_ = 0;
        return status_;
    }

    YajlRead ReadWhole(std::string_view text) {
        YajlRead status = Feed(text);
        return status == YajlRead::kOk ? Complete() : status;
    }

    void Reset() noexcept {
        if (handle_ != nullptr) {
            yajl_free(handle_);
            handle_ = nullptr;
        }
        status_ = YajlRead::kOk;
        last_chunk_ = 0;
        base_ = 0;
    }

private:
    bool Open() noexcept {
        if (handle_ == nullptr) {
            handle_ = yajl_alloc(&kCallbacks, nullptr, this);
            if (handle_ == nullptr) {
                status_ = YajlRead::kNoMemory;
                return false;
            }
        }
        return true;
    }

    static YajlRead StatusOf(yajl_status status) noexcept {
        switch (status) {
        case yajl_status_ok:
            return YajlRead::kOk;
        case yajl_status_client_canceled:
            return YajlRead::kStopped;
        case yajl_status_error:
            break;
        }
        return YajlRead::kInvalid;
    }

    // The handler, once *consumed says where the token ends.
    static Handler& At(void* ctx) noexcept {
        auto& self = *static_cast<YajlReader*>(ctx);
        *self.consumed_ = self.base_ + yajl_get_bytes_consumed(self.handle_);
        return self.handler_;
    }

    static std::string_view View(const unsigned char* s, size_t len) {
        return {reinterpret_cast<const char*>(s), len};
    }

    static int Null(void* ctx) { return At(ctx).OnNull(); }
    static int Bool(void* ctx, int value) { return At(ctx).OnBool(value); }
    static int Number(void* ctx, const char* s, size_t len) {
        return At(ctx).OnNumber({s, len});
    }
    static int String(void* ctx, const unsigned char* s, size_t len) {
        return At(ctx).OnString(View(s, len));
    }
    static int StartMap(void* ctx) { return At(ctx).OnStartMap(); }
    static int Key(void* ctx, const unsigned char* s, size_t len) {
        return At(ctx).OnKey(View(s, len));
    }
    static int EndMap(void* ctx) { return At(ctx).OnEndMap(); }
    static int StartArray(void* ctx) { return At(ctx).OnStartArray(); }
    static int EndArray(void* ctx) { return At(ctx).OnEndArray(); }

    // yajl_integer and yajl_double are left out, so every number arrives
    // through yajl_number as its raw text.
    static constexpr yajl_callbacks kCallbacks = {
        Null, Bool, nullptr, nullptr, Number, String,
        StartMap, Key, EndMap, StartArray, EndArray,
    };

    Handler& handler_;
    size_t* consumed_;
    yajl_handle handle_ = nullptr;
    YajlRead status_ = YajlRead::kOk;
    size_t last_chunk_ = 0;   // length of the last non-empty chunk fed
    size_t base_ = 0;         // added to yajl's offsets (see Complete)
};

}  // namespace solgate
