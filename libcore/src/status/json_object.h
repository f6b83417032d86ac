// Writers of one JSON object or array, member by member, commas
// included; values are appended to the text Key or Next returns. Nothing
// is checked: keys must be distinct and every writer closed once.
//
// General, but kept here rather than in json/json_writer.h while only the
// state page writes documents this way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "json/json_writer.h"

namespace solgate {

class JsonObject {
public:
    // Writes "{".
    explicit JsonObject(std::string& out) : out_(out) { out_.push_back('{'); }

    // Writes the key; the caller appends the value to the returned text.
    std::string& Key(std::string_view key) {
        if (!first_) {
            out_.push_back(',');
        }
        first_ = false;
        AppendJsonString(out_, key);
        out_.push_back(':');
        return out_;
    }

    void Uint(std::string_view key, uint64_t value) {
        Key(key) += std::to_string(value);
    }
    void Int(std::string_view key, int64_t value) {
        Key(key) += std::to_string(value);
    }
    void Bool(std::string_view key, bool value) {
        Key(key) += value ? "true" : "false";
    }
    void String(std::string_view key, std::string_view value) {
        AppendJsonString(Key(key), value);
    }
    void Null(std::string_view key) { Key(key) += "null"; }

    // Writes "}".
    void Close() { out_.push_back('}'); }

private:
    std::string& out_;
    bool first_ = true;
};

class JsonArray {
public:
    // Writes "[".
    explicit JsonArray(std::string& out) : out_(out) { out_.push_back('['); }

    // Starts the next element; the caller appends it to the returned text.
    std::string& Next() {
        if (!first_) {
            out_.push_back(',');
        }
        first_ = false;
        return out_;
    }

    // Writes "]".
    void Close() { out_.push_back(']'); }

private:
    std::string& out_;
    bool first_ = true;
};

// ["a","b"]: a list of strings (methods, URLs).
inline void AppendStringArray(std::string& out,
                              const std::vector<std::string>& items) {
    JsonArray list(out);
    for (const std::string& item : items) {
        AppendJsonString(list.Next(), item);
    }
    list.Close();
}

}  // namespace solgate
