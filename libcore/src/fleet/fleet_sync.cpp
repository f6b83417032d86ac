#include "fleet/fleet_sync.h"

#include <charconv>
#include <limits>

#include "fleet/fleet_keys.h"
#include "slots/slot_types.h"
#include "store/operator_state.h"

namespace solgate {
namespace {

// The fields of the views hash: "<upstream id>/<what>".
constexpr const char* kAxisField[kSlotAxisCount] = {"p", "f", "w"};

std::string Field(const std::string& id, std::string_view what) {
    std::string out = id;
    out.push_back('/');
    out.append(what);
    return out;
}

std::optional<uint64_t> ParseNumber(std::string_view text) {
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(),
                                     value);
    if (ec != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

std::optional<uint64_t> Number(const FleetStore::Hash& hash,
                               const std::string& field) {
    auto it = hash.find(field);
    if (it == hash.end()) {
        return std::nullopt;
    }
    return ParseNumber(it->second);
}

// A field written with the writer's "by" (HOST@WALL_MS|value), the way the
// views' newer fields are: its value only when it came with the "by" the
// hash holds now. A value an earlier writer left (and a host of an older
// version, which does not write the field, has taken the upstream over
// since) is not the current writer's word.
std::string Stamped(const std::string& by, std::string_view value) {
    std::string out = by;
    out.push_back('|');
    out.append(value);
    return out;
}

std::optional<std::string_view> StampedValue(const FleetStore::Hash& hash,
                                             const std::string& field,
                                             std::string_view by) {
    auto it = hash.find(field);
    std::string_view text = it != hash.end() ? std::string_view(it->second)
                                             : std::string_view();
    if (by.empty() || text.size() <= by.size() ||
        text.substr(0, by.size()) != by || text[by.size()] != '|') {
        return std::nullopt;
    }
    return text.substr(by.size() + 1);
}

std::optional<uint64_t> StampedNumber(const FleetStore::Hash& hash,
                                      const std::string& field,
                                      std::string_view by) {
    auto value = StampedValue(hash, field, by);
    return value ? ParseNumber(*value) : std::nullopt;
}

// A cordon as the fleet keeps it: "<wall ms>|<1 cordoned, 0 not>|<note>".
struct FleetCordon {
    int64_t ms = 0;
    bool cordoned = false;
    std::string note;
};

std::optional<FleetCordon> ParseCordon(const std::string& text) {
    size_t bar = text.find('|');
    if (bar == std::string::npos || bar + 2 > text.size() ||
        (text[bar + 1] != '0' && text[bar + 1] != '1')) {
        return std::nullopt;
    }
    FleetCordon c;
    auto [end, ec] = std::from_chars(text.data(), text.data() + bar, c.ms);
    if (ec != std::errc() || end != text.data() + bar) {
        return std::nullopt;
    }
    c.cordoned = text[bar + 1] == '1';
    if (bar + 2 < text.size() && text[bar + 2] == '|') {
        c.note = text.substr(bar + 3);
    }
    return c;
}

}  // namespace

FleetSync::FleetSync(const Network& network, FleetStore& store,
                     std::string prefix, std::string host_id, uint32_t pid,
                     LogSink log)
    : network_(network),
      store_(store),
      prefix_(std::move(prefix)),
      host_id_(std::move(host_id)),
      pid_(pid),
      log_(std::move(log)),
      held_until_(network.size(), 0),
      other_until_(network.size(), 0),
      views_stale_(network.size(), 0),
      last_by_(network.size()),
      by_since_ms_(network.size(), 0),
      old_stamps_(network.size(), 0),
      synced_cordon_(network.size(), -1),
      synced_cordon_ms_(network.size(), 0),
      synced_note_(network.size()) {}

std::string FleetSync::Key(std::string_view what) const {
    return NetworkKeyTag(prefix_, network_.name()) + std::string(what);
}

bool FleetSync::HoldsLocalLease(size_t i, int64_t now_ms) const {
    Lease lease = network_.leases().LeaseHolder(i);
    return lease.pid == pid_ && lease.expires_ms > now_ms &&
           network_.OwnsRecord(i);
}

bool FleetSync::MayPoll(size_t i, int64_t now_ms) const {
    if (!store_.Up() || i >= held_until_.size()) {
        return true;   // on its own, as without a fleet
    }
    return held_until_[i] > now_ms || other_until_[i] <= now_ms ||
           views_stale_[i] != 0;
}

void FleetSync::Tick(int64_t now_ms, int64_t wall_ms) {
    if (!network_.bound()) {
        return;
    }
    bool up = store_.Up();
    if (up != was_up_) {
        was_up_ = up;
        if (!up) {
            // each host polls every upstream again until the store is back
            std::fill(held_until_.begin(), held_until_.end(), 0);
            std::fill(other_until_.begin(), other_until_.end(), 0);
            std::fill(views_stale_.begin(), views_stale_.end(), 0);
            for (size_t i = 0; i < network_.size(); i++) {
                network_.host(i).polled_by.Write("");
            }
        } else {
            // back: the operator changes made meanwhile, here and on other
            // hosts, are ordered by their times as at a start (the store
            // may also have come back empty)
            cordons_known_ = false;
        }
    }
    std::vector<size_t> local;
    std::vector<std::string> keys;
    for (size_t i = 0; i < network_.size(); i++) {
        if (HoldsLocalLease(i, now_ms)) {
            local.push_back(i);
            keys.push_back(Key("lease:" + network_.upstream(i).id));
        }
    }
    if (local.empty()) {
        return;   // another worker of this host does the fleet's work
    }
    network_.counters().fleet_link.store(up ? kFleetLinkUp : kFleetLinkDown,
                                       std::memory_order_relaxed);
    if (!up) {
        return;
    }
    std::weak_ptr<bool> alive = alive_;
    if (holder_.empty()) {
        holder_ = FleetHolder(host_id_, network_.Instance());
    }
    store_.ClaimLeases(
        std::move(keys), holder_, kFleetLeaseTtlMs,
        [this, alive, local, now_ms](std::optional<std::vector<bool>> held) {
            if (alive.expired() || !held || held->size() != local.size()) {
                return;
            }
            for (size_t k = 0; k < local.size(); k++) {
                size_t i = local[k];
                if ((*held)[k]) {
                    held_until_[i] = now_ms + kFleetLeaseTtlMs - 500;
                    other_until_[i] = 0;
                } else {
                    held_until_[i] = 0;
                    other_until_[i] = now_ms + kFleetLeaseTtlMs;
                }
            }
        });
    PublishViews(local, now_ms, wall_ms);
    store_.ReadHash(Key("views"),
                    [this, alive, now_ms,
                     wall_ms](std::optional<FleetStore::Hash> h) {
                        if (!alive.expired() && h) {
                            TakeViews(*h, now_ms, wall_ms);
                        }
                    });
    if (local.front() == 0) {
        SyncMemories();
        SyncCordons(now_ms, wall_ms);
    }
}

// What this host's poller learnt of the upstreams it polls for the fleet.
void FleetSync::PublishViews(const std::vector<size_t>& local,
                             int64_t now_ms, int64_t wall_ms) {
    std::vector<std::pair<std::string, uint64_t>> slots;
    FleetStore::Fields fields;
    for (size_t i : local) {
        if (held_until_[i] <= now_ms) {
            continue;
        }
        network_.host(i).polled_by.Write("");   // this host
        const std::string& id = network_.upstream(i).id;
        for (size_t axis = 0; axis < kSlotAxisCount; axis++) {
            slots.emplace_back(Field(id, kAxisField[axis]),
                               network_.slots().View(
                                   i, static_cast<SlotAxis>(axis)));
        }
        CordonState cordon = network_.cordons().Cordon(i);
        bool poller_cordon = cordon.owner == CordonOwner::kPoller;
        const std::string by = host_id_ + "@" + std::to_string(wall_ms);
        fields.emplace_back(
            Field(id, "h"),
            std::to_string(static_cast<uint32_t>(network_.slots().Health(i))));
        // under an operator's cordon its poller says nothing: "-" leaves
        // the other hosts' poller cordon as it is (an older host reads no
        // number and does the same)
        fields.emplace_back(
            Field(id, "c"),
            cordon.owner == CordonOwner::kOperator
                ? std::string("-")
                : std::to_string(poller_cordon
                                     ? static_cast<uint32_t>(cordon.cause)
                                     : 0u));
        if (poller_cordon) {
            // what the other hosts say of it: since when, and why
            fields.emplace_back(
                Field(id, "cs"),
                Stamped(by, std::to_string(cordon.since_wall_ms)));
            fields.emplace_back(
                Field(id, "cl"),
                Stamped(by, std::to_string(network_.cordons().CordonLag(i))));
            fields.emplace_back(Field(id, "cn"),
                                Stamped(by, network_.cordons().CordonNote(i)));
        }
        // the round trips of its polls, which routing weighs
        fields.emplace_back(
            Field(id, "l"),
            Stamped(by, std::to_string(network_.host(i).latency_ewma_us.load(
                            std::memory_order_relaxed))));
        // the ledger's window moves up as the node prunes: as it is now
        std::optional<uint64_t> first = network_.slots().FirstAvailable(i);
        fields.emplace_back(Field(id, "a"),
                            first ? std::to_string(*first + 1) : "0");
        // its getSlot polls fail: its slots are its last known, no lag
        fields.emplace_back(Field(id, "pf"),
                            Stamped(by, network_.SlotsCurrent(i) ? "0" : "1"));
        fields.emplace_back(Field(id, "by"), by);
    }
    if (!slots.empty()) {
        store_.MergeSlots(Key("views"), std::move(slots), false);
        store_.SetFields(Key("views"), std::move(fields));
    }
}

// Whether the views of upstream i, whose stamp is `by`, are stale (older
// than kFleetViewsFreshMs): this host has seen the stamp unchanged that
// long (its own clock: the writer stopped), or the writer's wall time in
// it is that old (a store that hung ran a write queued before, or kept
// it, and this process has not read the stamp before). A host that writes
// no stamp (an older one) is taken at its word.
bool FleetSync::ViewsStale(size_t i, const std::string& by, int64_t now_ms,
                           int64_t wall_ms) {
    if (by.empty()) {
        return false;
    }
    bool moved = by != last_by_[i];
    if (moved) {
        last_by_[i] = by;
        by_since_ms_[i] = now_ms;
    }
    if (now_ms - by_since_ms_[i] > kFleetViewsFreshMs) {
        return true;
    }
    size_t at = by.rfind('@');
    std::optional<uint64_t> written =
        at == std::string::npos
            ? std::nullopt
            : ParseNumber(std::string_view(by).substr(at + 1));
    int64_t age = written ? wall_ms - static_cast<int64_t>(*written) : 0;
    if (age <= kFleetViewsFreshMs) {
        old_stamps_[i] = 0;
        return false;
    }
    // Written anew each tick yet old by the writer's clock, tick after
    // tick: not a late write but clocks apart. Said once: this host then
    // polls the writer's upstreams itself, which the operator should know.
    if (moved && ++old_stamps_[i] == kSkewReads && !skew_logged_) {
        skew_logged_ = true;
        log_(kLogWarn,
             "network \"" + network_.name() + "\": host \"" +
                 by.substr(0, at) + "\" writes the views of upstream \"" +
                 network_.upstream(i).id + "\" every tick, yet they are " +
                 std::to_string(age) +
                 " ms old by this host's clock: the two clocks differ, and "
                 "this host polls that host's upstreams itself (keep the "
                 "hosts' clocks in step, NTP)");
    }
    return true;
}

// The other hosts' polls, into this host's views (by the same rule).
void FleetSync::TakeViews(const FleetStore::Hash& views, int64_t now_ms,
                          int64_t wall_ms) {
    for (size_t i = 0; i < network_.size(); i++) {
        // only for the upstreams this worker would poll (its shm lease)
        // and another host polls: never over this host's own polls
        if (other_until_[i] <= now_ms || !HoldsLocalLease(i, now_ms)) {
            views_stale_[i] = 0;   // judged again when next taken
            continue;
        }
        const std::string& id = network_.upstream(i).id;
        std::string by;   // HOST@WALL_MS: the writer, and its tick
        if (auto it = views.find(Field(id, "by")); it != views.end()) {
            by = it->second;
        }
        // Stale views would make a lag of their old slot, and the host
        // that wrote them no longer polls: this host polls it meanwhile.
        views_stale_[i] = ViewsStale(i, by, now_ms, wall_ms) ? 1 : 0;
        if (views_stale_[i] != 0) {
            network_.host(i).polled_by.Write("");
            continue;
        }
        for (size_t axis = 0; axis < kSlotAxisCount; axis++) {
            auto value = Number(views, Field(id, kAxisField[axis]));
            if (value && *value > 0) {
                network_.slots().Suggest(i, static_cast<SlotAxis>(axis),
                                         *value);
                if (axis == kSlotProcessed) {
                    network_.slots().Observe(i, *value);
                }
            }
        }
        auto first_plus1 = Number(views, Field(id, "a"));
        if (first_plus1 && *first_plus1 > 0) {
            network_.slots().SetFirstAvailable(i, *first_plus1 - 1);
        }
        // a host that does not say (an older one) polls it fine
        auto failing = StampedNumber(views, Field(id, "pf"), by);
        network_.host(i).slot_polls_failing.store(
            failing && *failing != 0 ? 1 : 0, std::memory_order_relaxed);
        auto health = Number(views, Field(id, "h"));
        if (health && *health <= static_cast<uint64_t>(HealthOutcome::kFailed)) {
            network_.slots().ExchangeHealth(
                i, static_cast<HealthOutcome>(*health));
        }
        auto latency = StampedNumber(views, Field(id, "l"), by);
        if (latency && *latency > 0 &&
            *latency <= std::numeric_limits<uint32_t>::max()) {
            network_.host(i).latency_ewma_us.store(
                static_cast<uint32_t>(*latency), std::memory_order_relaxed);
        }
        network_.host(i).polled_by.Write(by.substr(0, by.find('@')));
        TakePollerCordon(views, i, by);
    }
}

// The polling host's cordon of upstream i (or its lifting), with its time
// and reason, as this host's own poller would have made it.
void FleetSync::TakePollerCordon(const FleetStore::Hash& views, size_t i,
                                 const std::string& by) {
    const std::string& id = network_.upstream(i).id;
    auto cause = Number(views, Field(id, "c"));
    if (!cause || *cause > static_cast<uint64_t>(CordonCause::kOperator)) {
        return;
    }
    CordonStore& cordons = network_.cordons();
    CordonState local = cordons.Cordon(i);
    const std::string host = by.substr(0, by.find('@'));
    auto since = StampedNumber(views, Field(id, "cs"), by);
    CordonState next{CordonOwner::kPoller, static_cast<CordonCause>(*cause),
                     static_cast<int64_t>(since.value_or(0))};
    // the reason once the cordon is the poller's: never written over an
    // operator's note by a swap that lost
    auto take_reason = [&] {
        cordons.SetCordonLag(
            i, StampedNumber(views, Field(id, "cl"), by).value_or(0));
        auto note = StampedValue(views, Field(id, "cn"), by);
        if (note && cordons.Cordon(i).owner == CordonOwner::kPoller) {
            cordons.SetCordonNote(i, *note);
        }
    };
    if (*cause != 0 && since && local.owner == CordonOwner::kPoller &&
        (local.cause != next.cause ||
         local.since_wall_ms != next.since_wall_ms)) {
        // this host's own poller cordoned it before the other host took
        // its polls over: the polling host's cordon is the one, so that
        // every host shows one cause and one time
        if (cordons.SwapCordon(i, CordonOwner::kPoller, next)) {
            take_reason();
        }
        return;
    }
    if (*cause != 0 && local.owner == CordonOwner::kNone) {
        if (!cordons.SwapCordon(i, CordonOwner::kNone, next)) {
            return;   // an operator got there first
        }
        take_reason();
        network_.host(i).cordon_events.fetch_add(1, std::memory_order_relaxed);
        log_(kLogWarn, "svm upstream cordoned out of rotation by the state "
                       "poller of host \"" + host + "\" (fleet): network=" +
                           network_.name() + " upstream=" + id + " reason=\"" +
                           CordonReason(network_, i) + "\"");
    } else if (*cause == 0 && local.owner == CordonOwner::kPoller &&
               cordons.SwapCordon(i, CordonOwner::kPoller, CordonState{})) {
        log_(kLogInfo, "svm upstream recovered; uncordoned by the state "
                       "poller of host \"" + host + "\" (fleet): network=" +
                           network_.name() + " upstream=" + id);
    }
}

// getSlot never goes back across hosts, nor lane all's finalized floor.
void FleetSync::SyncMemories() {
    TipStore& tips = network_.tips();
    store_.MergeSlots(Key("memory"), {{"answered", tips.Answered()}}, true);
    store_.MergeSlots(Key("memory"),
                      {{"floor", tips.Axis(kAllLane, kAxisFinalized)
                                     .RaiseFloor(0)}},
                      true);
    std::weak_ptr<bool> alive = alive_;
    store_.ReadHash(Key("memory"),
                    [this, alive](std::optional<FleetStore::Hash> h) {
                        if (alive.expired() || !h) {
                            return;
                        }
                        TipStore& t = network_.tips();
                        if (auto answered = Number(*h, "answered")) {
                            if (*answered > t.Answered()) {
                                t.SuggestAnswered(*answered);
                            }
                        }
                        if (auto floor = Number(*h, "floor")) {
                            t.Axis(kAllLane, kAxisFinalized).RaiseFloor(*floor);
                        }
                    });
}

// Operator cordons: a change made here goes to the fleet; one made on
// another host (later than what this host agreed to) comes here.
void FleetSync::SyncCordons(int64_t now_ms, int64_t wall_ms) {
    if (cordons_known_) {
        FleetStore::Fields changed;
        for (size_t i = 0; i < network_.size(); i++) {
            bool cordoned = network_.cordons().Cordon(i).owner ==
                            CordonOwner::kOperator;
            std::string note = cordoned ? network_.cordons().CordonNote(i)
                                        : std::string();
            if (synced_cordon_[i] == (cordoned ? 1 : 0) &&
                synced_note_[i] == note) {
                continue;
            }
            // the change's own time, when the operator made it: one made
            // while the store was unreachable is ordered by it, not by
            // when it could be written
            int64_t at = network_.cordons().OperatorChangeMs(i);
            if (at == 0) {
                at = wall_ms;
            }
            synced_cordon_[i] = cordoned ? 1 : 0;
            synced_cordon_ms_[i] = at;
            synced_note_[i] = note;
            changed.emplace_back(network_.upstream(i).id,
                                 std::to_string(at) +
                                     (cordoned ? "|1|" : "|0|") + note);
        }
        if (!changed.empty()) {
            store_.SetLaterFields(Key("cordons"), std::move(changed));
        }
    }
    std::weak_ptr<bool> alive = alive_;
    store_.ReadHash(Key("cordons"), [this, alive, now_ms, wall_ms](
                                        std::optional<FleetStore::Hash> h) {
        if (!alive.expired() && h) {
            TakeCordons(*h, now_ms, wall_ms);
        }
    });
}

void FleetSync::TakeCordons(const FleetStore::Hash& cordons, int64_t now_ms,
                            int64_t wall_ms) {
    bool taken = false;
    for (size_t i = 0; i < network_.size(); i++) {
        CordonState local = network_.cordons().Cordon(i);
        bool cordoned = local.owner == CordonOwner::kOperator;
        auto it = cordons.find(network_.upstream(i).id);
        std::optional<FleetCordon> remote;
        if (it != cordons.end()) {
            remote = ParseCordon(it->second);
        }
        if (!cordons_known_) {
            // the first read: the later of this host's change and the
            // fleet's; an upstream never cordoned or uncordoned here has
            // only a cordon from the state file to say
            int64_t here = network_.cordons().OperatorChangeMs(i);
            if (here == 0 && cordoned) {
                here = local.since_wall_ms;
            }
            if (!remote || remote->ms < here) {
                // this host's change goes out (none: nothing to say)
                synced_cordon_[i] = here != 0 ? -1 : 0;
                synced_cordon_ms_[i] = 0;
                continue;
            }
        } else if (!remote || remote->ms <= synced_cordon_ms_[i]) {
            continue;   // this host's own change, or one it already took
        }
        synced_cordon_[i] = remote->cordoned ? 1 : 0;
        synced_cordon_ms_[i] = remote->ms;
        synced_note_[i] = remote->cordoned ? remote->note : std::string();
        if (remote->cordoned == cordoned &&
            (!cordoned || network_.cordons().CordonNote(i) == remote->note)) {
            continue;
        }
        if (remote->cordoned) {
            network_.OperatorCordon(i, remote->note, remote->ms);
        } else {
            network_.OperatorUncordon(i, remote->ms);
        }
        taken = true;
        log_(kLogInfo,
             "upstream \"" + network_.upstream(i).id +
                 "\" of network \"" + network_.name() + "\" " +
                 (remote->cordoned ? "cordoned" : "uncordoned") +
                 " by the operator (fleet)");
    }
    cordons_known_ = true;
    std::string error;
    // (an old worker's zone that a reload replaced saves nothing, quietly:
    // the new zone's workers take the same change from the fleet)
    if (taken && SaveOperatorState(network_, now_ms, wall_ms, &error) ==
                     OperatorStateSave::kFailed) {
        log_(kLogError, "network \"" + network_.name() +
                            "\": the operator cordons taken from the fleet "
                            "are not saved: " + error);
    }
}

}  // namespace solgate
