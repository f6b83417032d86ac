// The events a JSON text is read as, whichever reader delivers them: the
// plain lexer (plain_json.h) or yajl (yajl_reader.h).  A handler is any
// type with these nine members; each returns false to stop the read:
//
//   bool OnNull();                     bool OnStartMap();
//   bool OnBool(bool);                 bool OnKey(std::string_view);
//   bool OnNumber(std::string_view);   bool OnEndMap();
//   bool OnString(std::string_view);   bool OnStartArray();
//                                      bool OnEndArray();
//
// Numbers arrive as their raw text, strings and keys decoded (the plain
// lexer only takes texts without escapes, so for it both are the same).
// Before each event the reader sets *consumed to the offset, in the chunk
// it read last, just past the token.  Both readers deliver the same events
// with the same offsets for every text the plain lexer does not give up
// on, so one handler serves both.
//
// JsonValueEvents is the base of the handlers here: it folds the nine
// events into the three they need, and owns the nesting bound that keeps
// a hostile body from growing anyone's stack without bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace solgate {

enum class JsonKind : uint8_t { kNull, kBool, kNumber, kString, kMap, kArray };

// Derived provides:
//   bool OnValue(JsonKind kind, std::string_view text);
//       every value, containers when they open; text is the raw number,
//       the decoded string, "null", "true" or "false", empty for
//       containers.  depth() counts the containers around the value.
//   bool OnKey(std::string_view key);   the event itself, in the map at
//       depth().
//   bool OnClose();   a container ends; depth() still counts it.
// A container that would open deeper than kMaxDepth stops the read before
// Derived sees it, and too_deep() says so afterwards.
template <typename Derived, size_t kMaxDepth>
class JsonValueEvents {
public:
    static constexpr size_t kMaxNesting = kMaxDepth;

    bool OnNull() { return Self().OnValue(JsonKind::kNull, "null"); }
    bool OnBool(bool value) {
        return Self().OnValue(JsonKind::kBool, value ? "true" : "false");
    }
    bool OnNumber(std::string_view raw) {
        return Self().OnValue(JsonKind::kNumber, raw);
    }
    bool OnString(std::string_view text) {
        return Self().OnValue(JsonKind::kString, text);
    }
    bool OnStartMap() { return Open(JsonKind::kMap); }
    bool OnStartArray() { return Open(JsonKind::kArray); }
    bool OnEndMap() { return Close(); }
    bool OnEndArray() { return Close(); }

    // Containers open around the current event.
    size_t depth() const { return depth_; }
    // The read stopped at a container nested deeper than kMaxDepth.
    bool too_deep() const { return too_deep_; }

protected:
    // For a handler that reads the same text again from its start.
    void ResetNesting() {
        depth_ = 0;
        too_deep_ = false;
    }

private:
    Derived& Self() { return static_cast<Derived&>(*this); }

    bool Open(JsonKind kind) {
        if (depth_ >= kMaxDepth) {
            too_deep_ = true;
            return false;
        }
        if (!Self().OnValue(kind, {})) {
            return false;
        }
        depth_++;
        return true;
    }

    bool Close() {
        if (!Self().OnClose()) {
            return false;
        }
        depth_--;
        return true;
    }

    size_t depth_ = 0;
    bool too_deep_ = false;
};

}  // namespace solgate
