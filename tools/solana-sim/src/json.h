// JSON helpers: yajl_tree parsing with an RAII owner, typed accessors, and a
// few append-style writers. Responses are emitted by hand into std::string
// because the large getBlock bodies need to be generated without an
// intermediate tree.
#pragma once

#include <yajl/yajl_tree.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace solsim {

// Owns a parsed yajl tree.
class JsonDoc {
  public:
    JsonDoc() = default;
    ~JsonDoc() { reset(); }
    JsonDoc(const JsonDoc&) = delete;
    JsonDoc& operator=(const JsonDoc&) = delete;

    // Parses text (which must be NUL-terminated, as std::string is).
    // Returns false on any syntax error or excessive nesting.
    bool parse(const std::string& text);
    yajl_val root() const { return root_; }
    void reset();

  private:
    yajl_val root_ = nullptr;
};

// Object member lookup; nullptr when v is not an object or the key is absent.
yajl_val json_get(yajl_val obj, const char* key);

// Accepts only a plain non-negative decimal integer that fits in 64 bits
// (yajl's own integer flag also accepts things like 5.0 and -1).
bool json_as_u64(yajl_val v, uint64_t& out);

// Writers.
void json_append_string(std::string& out, std::string_view s);
void json_append_u64(std::string& out, uint64_t v);
void json_append_i64(std::string& out, int64_t v);
// Re-serializes a parsed value; numbers keep their original spelling.
void json_append_value(std::string& out, yajl_val v);

inline std::string json_quote(std::string_view s) {
    std::string out;
    json_append_string(out, s);
    return out;
}

}  // namespace solsim
