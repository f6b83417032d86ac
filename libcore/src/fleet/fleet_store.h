// What fleet mode needs of the shared store (Redis in production, a fake
// in unit tests): asynchronous, never blocking the caller. Every callback
// runs later, on the loop that drives the store, or at once with nothing
// when the store is down.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace solgate {

class FleetStore {
public:
    using Hash = std::map<std::string, std::string>;
    using Fields = std::vector<std::pair<std::string, std::string>>;

    virtual ~FleetStore() = default;

    // Connected and answering in time.
    virtual bool Up() const = 0;

    // Claims, or renews, each lease key for `holder` for ttl_ms; done gets
    // whether `holder` holds each one afterwards, or nullopt when the
    // store did not answer.
    virtual void ClaimLeases(
        std::vector<std::string> keys, std::string holder, int64_t ttl_ms,
        std::function<void(std::optional<std::vector<bool>>)> done) = 0;

    // Raises fields of hash `key` to their values by the slot views' rule
    // (zero ignored; forward; a drop of at most kToleratedSlotRollback
    // ignored, a larger one taken), or, never_lower, to the larger value.
    virtual void MergeSlots(std::string key,
                            std::vector<std::pair<std::string, uint64_t>> fields,
                            bool never_lower) = 0;

    // Sets fields as they are (the last writer wins).
    virtual void SetFields(std::string key, Fields fields) = 0;
    // Sets fields whose values start with "<wall ms>|", each only when it
    // is later than the stored one (so the latest change wins whatever
    // order the hosts write in).
    virtual void SetLaterFields(std::string key, Fields fields) = 0;

    // The whole hash, or nullopt when the store did not answer.
    virtual void ReadHash(std::string key,
                          std::function<void(std::optional<Hash>)> done) = 0;

    // Runs a Lua script atomically over `keys` with `args`; done gets its
    // answer, a flat array (integers as text, nil as ""), or nullopt when
    // the store did not answer or the script failed.
    using Words = std::vector<std::string>;
    virtual void Eval(const char* script, Words keys, Words args,
                      std::function<void(std::optional<Words>)> done) = 0;
};

}  // namespace solgate
