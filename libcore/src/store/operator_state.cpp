#include "store/operator_state.h"

#include <algorithm>
#include <charconv>

#include "conf/conf_words.h"
#include "json/json_events.h"
#include "json/json_writer.h"
#include "json/yajl_reader.h"
#include "slots/shared_state.h"
#include "slots/state_poller.h"
#include "store/state_file.h"

namespace solgate {
namespace {

constexpr size_t kMaxStateDepth = 16;

// Reads the file's events into an OperatorState, checking each member it
// knows as it comes; members it does not know (and what they hold) pass.
class OperatorStateReader
    : public JsonValueEvents<OperatorStateReader, kMaxStateDepth> {
public:
    bool OnValue(JsonKind kind, std::string_view text) {
        switch (depth()) {
        case 0:
            return kind == JsonKind::kMap || Refuse("it is not an object");
        case 1:
            return TopMember(kind, text);
        case 2:
            return list_ == List::kNone || StartEntry(kind);
        case 3:
            return list_ == List::kNone || EntryMember(kind, text);
        default:
            return true;
        }
    }

    bool OnKey(std::string_view key) {
        if (depth() == 1) {
            key_.assign(key);
        } else if (depth() == 3) {
            entry_key_.assign(key);
        }
        return true;
    }

    bool OnClose() {
        if (depth() == 3 && list_ != List::kNone) {
            return EndEntry();
        }
        if (depth() == 2) {
            list_ = List::kNone;
        }
        return true;
    }

    // What the document said, once read whole.
    std::optional<OperatorState> Finish(std::string* error) {
        if (!error_.empty()) {
            *error = error_;
            return std::nullopt;
        }
        if (format_ != kOperatorStateFormat) {
            *error = "it is not a Solgate operator state (no \"format\":\"" +
                     std::string(kOperatorStateFormat) + "\")";
            return std::nullopt;
        }
        if (!version_) {
            *error = "it has no \"version\"";
            return std::nullopt;
        }
        if (*version_ != kOperatorStateVersion) {
            *error = "it is version " + std::to_string(*version_) +
                     ", this Solgate reads version " +
                     std::to_string(kOperatorStateVersion);
            return std::nullopt;
        }
        return std::move(state_);
    }

    const std::string& error() const { return error_; }

private:
    enum class List { kNone, kCordons, kDrains };

    bool Refuse(std::string why) {
        if (error_.empty()) {
            error_ = std::move(why);
        }
        return false;
    }

    static std::optional<int64_t> Integer(JsonKind kind,
                                          std::string_view text) {
        int64_t value = 0;
        if (kind != JsonKind::kNumber) {
            return std::nullopt;
        }
        auto [end, ec] =
            std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() ||
            value < 0) {
            return std::nullopt;
        }
        return value;
    }

    bool TopMember(JsonKind kind, std::string_view text) {
        auto wrong = [&](const char* what) {
            return Refuse("\"" + key_ + "\" is not " + what);
        };
        if (key_ == "format") {
            if (kind != JsonKind::kString) return wrong("a string");
            format_.assign(text);
        } else if (key_ == "version") {
            version_ = Integer(kind, text);
            if (!version_) return wrong("a whole number");
        } else if (key_ == "network") {
            if (kind != JsonKind::kString) return wrong("a string");
            state_.network.assign(text);
        } else if (key_ == "saved") {
            auto saved = Integer(kind, text);
            if (!saved) return wrong("a time in milliseconds");
            state_.saved_wall_ms = *saved;
        } else if (key_ == "cordons" || key_ == "drains") {
            if (kind != JsonKind::kArray) return wrong("an array");
            list_ = key_ == "cordons" ? List::kCordons : List::kDrains;
            index_ = 0;
        }
        return true;
    }

    std::string Where() const {
        return std::string(list_ == List::kCordons ? "cordons" : "drains") +
               "[" + std::to_string(index_) + "]";
    }

    bool StartEntry(JsonKind kind) {
        if (kind != JsonKind::kMap) {
            return Refuse(Where() + " is not an object");
        }
        entry_ = Entry{};
        return true;
    }

    bool EntryMember(JsonKind kind, std::string_view text) {
        auto wrong = [&](const char* what) {
            return Refuse(Where() + ": \"" + entry_key_ + "\" is not " + what);
        };
        bool drains = list_ == List::kDrains;
        if (entry_key_ == "upstream") {
            if (kind != JsonKind::kString) return wrong("a string");
            entry_.upstream.assign(text);
        } else if (!drains && entry_key_ == "by") {
            if (kind != JsonKind::kString || text != "operator") {
                return wrong("\"operator\"");
            }
        } else if (!drains && entry_key_ == "reason") {
            if (kind != JsonKind::kString) return wrong("a string");
            entry_.reason.assign(text);
        } else if (entry_key_ == (drains ? "until" : "since")) {
            entry_.time = Integer(kind, text);
            if (!entry_.time) return wrong("a time in milliseconds");
        }
        return true;
    }

    bool EndEntry() {
        if (entry_.upstream.empty()) {
            return Refuse(Where() + " has no \"upstream\"");
        }
        if (auto bad = conf::CheckName(entry_.upstream)) {
            return Refuse(Where() + ": \"upstream\" " + std::string(*bad));
        }
        if (!entry_.time) {
            return Refuse(Where() + " has no \"" +
                          (list_ == List::kDrains ? "until" : "since") + "\"");
        }
        if (list_ == List::kCordons) {
            if (entry_.reason.size() >= kReasonCapacity) {
                return Refuse(Where() + ": \"reason\" is longer than " +
                              std::to_string(kReasonCapacity - 1) + " bytes");
            }
            state_.cordons.push_back(
                {entry_.upstream, entry_.reason, *entry_.time});
        } else {
            state_.drains.push_back({entry_.upstream, *entry_.time});
        }
        index_++;
        return true;
    }

    struct Entry {
        std::string upstream;
        std::string reason;
        std::optional<int64_t> time;
    };

    OperatorState state_;
    std::string format_;
    std::optional<int64_t> version_;
    std::string key_;
    std::string entry_key_;
    List list_ = List::kNone;
    size_t index_ = 0;
    Entry entry_;
    std::string error_;
};

std::string IdList(const std::vector<std::string>& ids) {
    std::string out;
    for (const std::string& id : ids) {
        out += out.empty() ? "\"" : ", \"";
        out += id + "\"";
    }
    return out;
}

std::string FileName(const Network& network) {
    return "operator-" + network.name() + ".json";
}

}  // namespace

std::string FormatOperatorState(const OperatorState& state) {
    std::string out = "{\"format\":";
    AppendJsonString(out, kOperatorStateFormat);
    out += ",\"version\":" + std::to_string(kOperatorStateVersion) +
           ",\"network\":";
    AppendJsonString(out, state.network);
    out += ",\"saved\":" + std::to_string(state.saved_wall_ms) +
           ",\n \"cordons\":[";
    for (size_t k = 0; k < state.cordons.size(); k++) {
        const OperatorCordonEntry& c = state.cordons[k];
        out += k == 0 ? "\n  {\"upstream\":" : ",\n  {\"upstream\":";
        AppendJsonString(out, c.upstream);
        out += ",\"by\":\"operator\",\"reason\":";
        AppendJsonString(out, c.reason);
        out += ",\"since\":" + std::to_string(c.since_wall_ms) + "}";
    }
    out += "],\n \"drains\":[";
    for (size_t k = 0; k < state.drains.size(); k++) {
        const OperatorDrainEntry& d = state.drains[k];
        out += k == 0 ? "\n  {\"upstream\":" : ",\n  {\"upstream\":";
        AppendJsonString(out, d.upstream);
        out += ",\"until\":" + std::to_string(d.until_wall_ms) + "}";
    }
    out += "]}\n";
    return out;
}

std::optional<OperatorState> ParseOperatorState(std::string_view text,
                                                std::string* error) {
    OperatorStateReader handler;
    size_t consumed = 0;
    YajlReader<OperatorStateReader> reader(handler, &consumed);
    YajlRead read = reader.ReadWhole(text);
    if (read == YajlRead::kNoMemory) {
        *error = "out of memory";
        return std::nullopt;
    }
    if (handler.too_deep()) {
        *error = "it nests deeper than " + std::to_string(kMaxStateDepth) +
                 " levels";
        return std::nullopt;
    }
    if (read != YajlRead::kOk && handler.error().empty()) {
        *error = "it is not valid JSON (the error is after byte " +
                 std::to_string(consumed) + ")";
        return std::nullopt;
    }
    return handler.Finish(error);
}

OperatorState CaptureOperatorState(const Network& network, int64_t now_ms,
                                   int64_t wall_ms) {
    OperatorState state;
    state.network = network.name();
    state.saved_wall_ms = wall_ms;
    for (size_t i = 0; i < network.size(); i++) {
        const std::string& id = network.upstream(i).id;
        CordonState cordon = network.cordons().Cordon(i);
        if (cordon.owner == CordonOwner::kOperator) {
            state.cordons.push_back({id, network.cordons().CordonNote(i),
                                     cordon.since_wall_ms});
        }
        if (int64_t left = network.DrainLeft(i, now_ms)) {
            state.drains.push_back({id, wall_ms + left});
        }
    }
    return state;
}

OperatorStateApplied ApplyOperatorState(const Network& network,
                                        const OperatorState& state,
                                        int64_t now_ms, int64_t wall_ms) {
    OperatorStateApplied applied;
    auto find = [&](const std::string& id) {
        auto i = network.FindUpstream(id);
        if (!i && std::find(applied.unknown.begin(), applied.unknown.end(),
                            id) == applied.unknown.end()) {
            applied.unknown.push_back(id);
        }
        return i;
    };
    for (const OperatorCordonEntry& c : state.cordons) {
        if (auto i = find(c.upstream)) {
            network.OperatorCordon(*i, c.reason, c.since_wall_ms);
            applied.cordoned.push_back(c.upstream);
        }
    }
    for (const OperatorDrainEntry& d : state.drains) {
        int64_t left = d.until_wall_ms - wall_ms;
        if (left <= 0) {
            continue;  // it ended while nginx was down
        }
        if (auto i = find(d.upstream)) {
            network.DrainSubscribers(*i, now_ms,
                                     std::min(left, Network::kWsDrainMs));
            applied.drained.push_back(d.upstream);
        }
    }
    return applied;
}

std::string OperatorStatePath(const Network& network) {
    const std::string& dir = network.settings().state_dir;
    return dir.empty() ? std::string() : dir + "/" + FileName(network);
}

OperatorStateSave SaveOperatorState(const Network& network, int64_t now_ms,
                                    int64_t wall_ms, std::string* error) {
    const std::string& dir = network.settings().state_dir;
    if (dir.empty() || !network.bound()) {
        return OperatorStateSave::kSaved;
    }
    StateFileWrite written = WriteStateFile(
        dir, FileName(network),
        [&]() -> std::optional<std::string> {
            if (network.Superseded(now_ms)) {
                return std::nullopt;
            }
            return FormatOperatorState(
                CaptureOperatorState(network, now_ms, wall_ms));
        },
        error);
    switch (written) {
    case StateFileWrite::kWritten:
        return OperatorStateSave::kSaved;
    case StateFileWrite::kDeclined:
        return OperatorStateSave::kSuperseded;
    default:
        return OperatorStateSave::kFailed;
    }
}

std::optional<OperatorStateReport> RestoreOperatorState(
    const Network& network, int64_t now_ms, int64_t wall_ms) {
    const std::string path = OperatorStatePath(network);
    if (path.empty() || !network.started_empty()) {
        return std::nullopt;
    }
    const std::string intro =
        "network \"" + network.name() + "\": ";
    std::string text;
    std::string why;
    StateFileRead read =
        ReadStateFileLocked(network.settings().state_dir, FileName(network),
                            kOperatorStateMaxBytes, &text, &why);
    if (read == StateFileRead::kMissing) {
        return std::nullopt;
    }
    std::optional<OperatorState> state;
    if (read == StateFileRead::kRead) {
        state = ParseOperatorState(text, &why);
    }
    if (state && state->network != network.name()) {
        why = "it is network \"" + state->network + "\"'s";
        state.reset();
    }
    if (!state) {
        return OperatorStateReport{
            kLogError,
            intro + "ignoring the state file \"" + path + "\": " + why +
                "; no operator cordon or drain is taken back from it, and "
                "the next cordon, uncordon or drain replaces it"};
    }
    OperatorStateApplied applied =
        ApplyOperatorState(network, *state, now_ms, wall_ms);
    std::string line = intro + "took back from \"" + path + "\" " +
                       std::to_string(applied.cordoned.size()) +
                       " operator cordon(s)" +
                       (applied.cordoned.empty()
                            ? ""
                            : " (" + IdList(applied.cordoned) + ")") +
                       " and " + std::to_string(applied.drained.size()) +
                       " drain(s)" +
                       (applied.drained.empty()
                            ? ""
                            : " (" + IdList(applied.drained) + ")");
    if (!applied.unknown.empty()) {
        line += "; dropped what it says of " + IdList(applied.unknown) +
                ", no longer upstream(s) of the network";
    }
    return OperatorStateReport{kLogNotice, line};
}

}  // namespace solgate
