// The operator's state of a network on disk (`state PATH;` in its
// solgate_network block): the operator's cordons, with their reason and
// time, and the WebSocket drains still running, so that they outlive a
// restart of nginx and a reload that gives the network a new zone (a new
// `zone` size). Everything else in the zone (slot views, health, leases,
// counters) is learnt again within a few polls; what the operator said is
// not.
//
// The file is PATH/operator-NETWORK.json, rewritten whole (state_file.h)
// after each admin cordon, uncordon and drain, by the process that made
// the change, from the zone as it is then; it is read back when the
// network binds a fresh zone. Version 1:
//
//   {"format":"solgate-operator-state","version":1,"network":"mainnet",
//    "saved":1733400000000,
//    "cordons":[
//     {"upstream":"node-a","by":"operator","reason":"disk swap","since":1733400000000}],
//    "drains":[
//     {"upstream":"node-c","until":1733400030000}]}
//
// Times are UTC milliseconds (a drain's end too: the monotonic clock the
// zone keeps it by does not outlive a reboot). Members a reader does not
// know are skipped, so a later version may add some; a file that is not
// this (not JSON, another format, a newer version, another network, a
// member of the wrong type) is refused whole, with the reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "routing/network.h"

namespace solgate {

constexpr const char* kOperatorStateFormat = "solgate-operator-state";
constexpr int64_t kOperatorStateVersion = 1;
// 256 upstreams with the longest ids and reasons take about 80 KB.
constexpr size_t kOperatorStateMaxBytes = 1 << 20;

struct OperatorCordonEntry {
    std::string upstream;
    std::string reason;
    int64_t since_wall_ms = 0;
};

struct OperatorDrainEntry {
    std::string upstream;
    int64_t until_wall_ms = 0;
};

struct OperatorState {
    std::string network;
    int64_t saved_wall_ms = 0;
    std::vector<OperatorCordonEntry> cordons;
    std::vector<OperatorDrainEntry> drains;
};

// The file's text: one line per cordon and per drain.
std::string FormatOperatorState(const OperatorState& state);
// nullopt with *error (what is wrong, where) when the text is not a
// version-1 operator state.
std::optional<OperatorState> ParseOperatorState(std::string_view text,
                                                std::string* error);

// The operator's cordons and the drains of a bound network, as its
// stores hold them now (poller cordons are not the operator's: the
// poller finds them again).
OperatorState CaptureOperatorState(const Network& network, int64_t now_ms,
                                   int64_t wall_ms);

struct OperatorStateApplied {
    std::vector<std::string> cordoned;   // upstream ids
    std::vector<std::string> drained;
    std::vector<std::string> unknown;    // ids no longer configured
};
// Puts the state into a bound network: each cordon as the operator's, with
// its reason and time; each drain that has not ended for the time it has
// left.
OperatorStateApplied ApplyOperatorState(const Network& network,
                                        const OperatorState& state,
                                        int64_t now_ms, int64_t wall_ms);

// PATH/operator-NETWORK.json; "" without `state`.
std::string OperatorStatePath(const Network& network);

// Saves the network's operator state, as its zone holds it when the
// directory's lock is taken (so the last save has the newest state):
// kSaved (at once without `state`), kFailed with *error, or kSuperseded
// when a reload has since read the file into a new zone (checked under
// the lock, after the read's: a change the new zone did not get is never
// written, and the caller must not call it kept).
enum class OperatorStateSave { kSaved, kSuperseded, kFailed };
OperatorStateSave SaveOperatorState(const Network& network, int64_t now_ms,
                                    int64_t wall_ms, std::string* error);

// For the error log: the line, at an nginx level (kLogNotice, kLogError).
struct OperatorStateReport {
    int level = 0;
    std::string line;
};
// Reads the file back, under the directory's lock, into a network whose
// zone started empty (Network::started_empty; a zone that kept its state
// is left alone: nullopt). A file that cannot be read or is not an
// operator state changes nothing and is reported at kLogError; none at
// all (nothing was saved yet) reports nothing (nullopt), as does a
// network without `state`.
std::optional<OperatorStateReport> RestoreOperatorState(
    const Network& network, int64_t now_ms, int64_t wall_ms);

}  // namespace solgate
