#include "json/consensus_vote.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "json/json_events.h"
#include "json/json_writer.h"
#include "json/yajl_reader.h"

namespace solgate {
namespace {

// Deeper than any Solana answer (a jsonParsed block nests about ten).
constexpr size_t kMaxVoteDepth = 128;

struct Node {
    JsonKind kind = JsonKind::kNull;
    std::string text;                                  // scalars
    std::vector<std::pair<std::string, Node>> members;  // maps
    std::vector<Node> items;                           // arrays
};

// Builds the answer as a tree. A container's node stays where it is while
// it is open: its parent only grows once it has closed.
class TreeBuilder : public JsonValueEvents<TreeBuilder, kMaxVoteDepth> {
public:
    bool OnValue(JsonKind kind, std::string_view text) {
        Node* node = nullptr;
        if (open_.empty()) {
            node = &root_;
        } else if (open_.back()->kind == JsonKind::kMap) {
            open_.back()->members.emplace_back(std::move(key_), Node{});
            node = &open_.back()->members.back().second;
        } else {
            open_.back()->items.emplace_back();
            node = &open_.back()->items.back();
        }
        node->kind = kind;
        if (kind == JsonKind::kMap || kind == JsonKind::kArray) {
            open_.push_back(node);
        } else {
            node->text = std::string(text);
        }
        return true;
    }
    bool OnKey(std::string_view key) {
        key_ = std::string(key);
        return true;
    }
    bool OnClose() {
        open_.pop_back();
        return true;
    }

    const Node& root() const { return root_; }

private:
    Node root_;
    std::vector<Node*> open_;
    std::string key_;
};

const Node* Member(const Node& map, std::string_view key) {
    for (const auto& [name, value] : map.members) {
        if (name == key) {
            return &value;
        }
    }
    return nullptr;
}

// envelope_context: the map is an envelope's context (slot and apiVersion
// left out). *duplicate is set for a map with a key twice: readers differ
// on which one counts, so such an answer must not vote.
void AppendCanonical(std::string& out, const Node& node, bool* duplicate,
                     bool envelope_context = false);

void AppendMap(std::string& out, const Node& node, bool* duplicate,
               bool envelope_context) {
    std::vector<const std::pair<std::string, Node>*> sorted;
    sorted.reserve(node.members.size());
    for (const auto& member : node.members) {
        if (envelope_context &&
            (member.first == "slot" || member.first == "apiVersion")) {
            continue;
        }
        sorted.push_back(&member);
    }
    std::sort(sorted.begin(), sorted.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
    out.push_back('{');
    for (size_t i = 0; i < sorted.size(); i++) {
        if (i > 0) {
            out.push_back(',');
            if (sorted[i]->first == sorted[i - 1]->first) {
                *duplicate = true;
            }
        }
        AppendJsonString(out, sorted[i]->first);
        out.push_back(':');
        AppendCanonical(out, sorted[i]->second, duplicate);
    }
    out.push_back('}');
}

void AppendCanonical(std::string& out, const Node& node, bool* duplicate,
                     bool envelope_context) {
    switch (node.kind) {
    case JsonKind::kMap:
        AppendMap(out, node, duplicate, envelope_context);
        return;
    case JsonKind::kArray:
        out.push_back('[');
        for (size_t i = 0; i < node.items.size(); i++) {
            if (i > 0) {
                out.push_back(',');
            }
            AppendCanonical(out, node.items[i], duplicate);
        }
        out.push_back(']');
        return;
    case JsonKind::kString:
        AppendJsonString(out, node.text);
        return;
    case JsonKind::kNull:
    case JsonKind::kBool:
    case JsonKind::kNumber:
        out += node.text;
        return;
    }
}

// One object's own keys, not its members'.
bool HasDuplicateKeys(const Node& map) {
    std::vector<std::string_view> keys;
    keys.reserve(map.members.size());
    for (const auto& member : map.members) {
        keys.emplace_back(member.first);
    }
    std::sort(keys.begin(), keys.end());
    return std::adjacent_find(keys.begin(), keys.end()) != keys.end();
}

// An RpcResponse<T> envelope: {"context":{...},"value":...}.
bool IsEnvelope(const Node& result) {
    const Node* context = Member(result, "context");
    return result.kind == JsonKind::kMap && result.members.size() == 2 &&
           context != nullptr && context->kind == JsonKind::kMap &&
           Member(result, "value") != nullptr;
}

}  // namespace

std::optional<std::string> ConsensusVote(std::string_view answer) {
    TreeBuilder builder;
    size_t consumed = 0;
    YajlReader<TreeBuilder> reader(builder, &consumed);
    if (reader.ReadWhole(answer) != YajlRead::kOk ||
        builder.root().kind != JsonKind::kMap) {
        return std::nullopt;
    }
    const Node& response = builder.root();
    // {"result":A,"result":B} says two things
    if (HasDuplicateKeys(response)) {
        return std::nullopt;
    }
    bool duplicate = false;
    if (const Node* error = Member(response, "error")) {
        if (error->kind == JsonKind::kMap && HasDuplicateKeys(*error)) {
            return std::nullopt;
        }
        const Node* code =
            error->kind == JsonKind::kMap ? Member(*error, "code") : nullptr;
        if (code == nullptr || code->kind != JsonKind::kNumber) {
            return std::nullopt;
        }
        return "e:" + code->text;
    }
    const Node* result = Member(response, "result");
    if (result == nullptr) {
        return std::nullopt;
    }
    std::string vote = "r:";
    if (IsEnvelope(*result)) {
        vote += "{\"context\":";
        AppendMap(vote, *Member(*result, "context"), &duplicate, true);
        vote += ",\"value\":";
        AppendCanonical(vote, *Member(*result, "value"), &duplicate);
        vote.push_back('}');
    } else {
        AppendCanonical(vote, *result, &duplicate);
    }
    if (duplicate) {
        return std::nullopt;
    }
    return vote;
}

}  // namespace solgate
